"""`tf.compat.v1.train.warm_start`: start chosen variables of a TF1 graph from a checkpoint
(TensorFlow's warm_starting_util.py), on top of `init_from_checkpoint`.

`vars_to_warm_start` is a regex over TRAINABLE_VARIABLES (default ".*"), a list of regexes
over GLOBAL_VARIABLES, or a list of variables; the parts of a partitioned variable are one
group under its full name. A group reads the checkpoint tensor of the same name, or the one
`var_name_to_prev_var_name` gives; from an object-based checkpoint the names are mapped to
its keys through the object graph's `full_name`s. A group with a `VocabInfo` in
`var_name_to_vocab_info` gets its rows remapped between vocabularies (vocab_remapping.py).
"""

from __future__ import annotations

import re

from ndflow.checkpoint import checkpoint_utils, tensor_bundle, vocab_remapping
from ndflow.checkpoint.checkpoint_reader import checkpoint_prefix
from ndflow.checkpoint.object_graph import OBJECT_GRAPH_PROTO_KEY
from ndflow.checkpoint.restore import read_object_graph
from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.ops.variables import GraphKeys, Variable


def _collection(key: str, scope):
    if context.executing_eagerly():
        return []
    graph = context.get_default_graph()
    items = graph.get_collection(key)
    if scope is None:
        return list(items)
    pattern = re.compile(scope)
    return [v for v in items if pattern.match(v.name)]


def _grouped_variables(vars_to_warm_start) -> dict:
    """{checkpoint name: [variable or parts]} of the variables to warm-start."""
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        variables = _collection(GraphKeys.TRAINABLE_VARIABLES, vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            variables = [v for scope in vars_to_warm_start
                         for v in _collection(GraphKeys.GLOBAL_VARIABLES, scope)]
        elif all(isinstance(v, Variable) for v in vars_to_warm_start):
            variables = list(vars_to_warm_start)
        else:
            raise ValueError("If `vars_to_warm_start` is a list, it must be all `Variable` "
                             "or all `str`.  Given types are "
                             f"{[type(v) for v in vars_to_warm_start]}")
    else:
        raise ValueError("`vars_to_warm_start must be a `list` or `str`.  Given type is "
                         f"{type(vars_to_warm_start)}")
    grouped: dict = {}
    for var in variables:
        info = var._get_save_slice_info()
        name = info.full_name if info is not None else var.name.split(":")[0]
        grouped.setdefault(name, []).append(var)
    return grouped


def _object_checkpoint_renames(prefix: str, names) -> dict:
    """{variable name: checkpoint key} from an object-based checkpoint's object graph
    (empty for a name-based one)."""
    reader = tensor_bundle.BundleReader(prefix)
    if not reader.has(OBJECT_GRAPH_PROTO_KEY):
        return {}
    keys = {a.full_name: a.checkpoint_key for node in read_object_graph(reader).nodes
            for a in node.attributes if a.full_name}
    missing = set(names) - set(keys)
    if missing:
        raise ValueError("Attempting to warm-start from an object-based checkpoint, but found "
                         "that the checkpoint did not contain values for all variables. The "
                         f"following variables were missing: {missing}")
    return {name: keys[name] for name in names}


@tf_export(v1=["train.warm_start"])
def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*",
               var_name_to_vocab_info=None, var_name_to_prev_var_name=None) -> None:
    """Warm-starts the chosen variables from `ckpt_to_initialize_from` (see the module
    doc)."""
    prefix = checkpoint_prefix(ckpt_to_initialize_from)
    grouped = _grouped_variables(vars_to_warm_start)
    vocab_infos = dict(var_name_to_vocab_info or {})
    if var_name_to_prev_var_name is None:
        var_name_to_prev_var_name = _object_checkpoint_renames(prefix, grouped.keys())
    used, vocab_used, assignment = set(), set(), {}
    for name, group in grouped.items():
        previous = var_name_to_prev_var_name.get(name)
        if previous:
            used.add(name)
        if name in vocab_infos:
            vocab_used.add(name)
            vocab_remapping.remapped_initializers(
                group, tensor_bundle.BundleReader(prefix), previous or name,
                vocab_infos[name])
            continue
        if not vars_to_warm_start:
            continue
        tensor_name = previous or name
        if tensor_name in assignment:  # two groups read one tensor: one map each
            checkpoint_utils.init_from_checkpoint(prefix, assignment)
            assignment = {}
        assignment[tensor_name] = group[0] if len(group) == 1 else group
    if assignment:
        checkpoint_utils.init_from_checkpoint(prefix, assignment)
    unused_vocab = set(vocab_infos) - vocab_used
    unused = set(var_name_to_prev_var_name) - used
    if unused:
        raise ValueError(f"You provided the following variables in var_name_to_prev_var_name "
                         f"that were not used: {unused}.  Perhaps you misspelled them?  Here "
                         f"is the list of viable variable names: {grouped.keys()}")
    if unused_vocab:
        raise ValueError(f"You provided the following variables in var_name_to_vocab_info "
                         f"that were not used: {unused_vocab}.  Perhaps you misspelled them?"
                         f"  Here is the list of viable variable names: {grouped.keys()}")
