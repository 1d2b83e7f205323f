"""`tf.raw_ops`: every TensorFlow op ndflow has, called by its op name with keyword arguments
only, as TensorFlow's: `tf.raw_ops.AddV2(x=a, y=b)`, `tf.raw_ops.Unique(x=v)` (a namedtuple
`(y, idx)` for several outputs), `tf.raw_ops.NoOp()` (None eagerly, the Operation in a graph).
Attrs that the inputs determine (`T`) are not arguments; the others are keywords with the
OpDef's defaults. A positional argument is TensorFlow's TypeError.

The functions are made from the OpDefs on first use (`op_function`, the generator of custom
ops' wrappers) and kept; ndflow-internal ops (`_FusedConv2D`, ...) are not listed.
"""

from __future__ import annotations

import functools
import inspect
import threading

from ndflow.core import context, lazy_api
from ndflow.kernels.custom_op import op_function
from ndflow.ops.op_def import REGISTRY, lookup

_FUNCTIONS: dict = {}
_LOCK = threading.Lock()
# ndflow's ops without a leading underscore that TensorFlow does not have, or has with other
# arguments (ndflow's OneShotIterator takes a dataset token, TF's a dataset_factory function)
_NOT_TENSORFLOWS = frozenset({"OnnxEngineOp", "OneShotIterator"})


# ndflow's own ops: the base's and those of the index, whose families load on first use
# (custom ops registered later, as TensorFlow's op libraries, are not raw ops)
_BUILTIN = frozenset(REGISTRY) | frozenset(lazy_api.index()["ops"])


def _public(name: str) -> bool:
    return (not name.startswith(("_", "NdflowTest")) and name not in _NOT_TENSORFLOWS
            and name in _BUILTIN)


# Inputs whose Python name in TensorFlow (its api_def renames) is not the OpDef's, for the ops
# ndflow has (read from TF 2.21's tf.raw_ops signatures; tests/ops/test_raw_ops.py compares
# every signature with them).
_TF_INPUT_NAMES = {
    "All": ["input", "axis"], "Any": ["input", "axis"], "ExpandDims": ["input", "axis"],
    "Max": ["input", "axis"], "Mean": ["input", "axis"], "Min": ["input", "axis"],
    "Prod": ["input", "axis"], "Select": ["condition", "x", "y"], "Split": ["axis", "value"],
    "SplitV": ["value", "size_splits", "axis"], "Sum": ["input", "axis"],
    "Where": ["condition"],
}
_TF_ATTR_NAMES = {"Squeeze": {"squeeze_dims": "axis"}}   # OpDef attr -> TensorFlow's keyword


def _raw_op(name: str):
    op_def = lookup(name)
    wrapped = op_function(op_def)
    params = list(wrapped.__signature__.parameters.values())
    tf_names = _TF_INPUT_NAMES.get(name, [a.name for a in op_def.inputs])
    renames = {tf: a.name for tf, a in zip(tf_names, op_def.inputs) if tf != a.name}
    attr_names = _TF_ATTR_NAMES.get(name, {})
    renames.update({tf: ours for ours, tf in attr_names.items()})
    params = [p.replace(name=tf_names[i]) if i < len(tf_names)
              else p.replace(name=attr_names.get(p.name, p.name)) for i, p in enumerate(params)]
    keys = [p.name for p in params]
    no_outputs = not op_def.outputs

    @functools.wraps(wrapped)
    def raw_op(*args, **kwargs):
        if args:
            raise TypeError(f"{wrapped.__name__} only takes keyword args (possible keys: "
                            f"{keys}). Please pass these args as kwargs instead.")
        for tf_name, ours in renames.items():
            if tf_name in kwargs:
                kwargs[ours] = kwargs.pop(tf_name)
            elif ours in kwargs:   # the OpDef's own name is not TensorFlow's keyword
                raise TypeError(f"{wrapped.__name__}() got an unexpected keyword argument "
                                f"'{ours}'")
        out = wrapped(**kwargs)
        return None if no_outputs and context.executing_eagerly() else out

    raw_op.__signature__ = inspect.Signature(params)
    return raw_op


def __getattr__(name: str):
    if not _public(name):
        raise AttributeError(f"module 'tf.raw_ops' has no attribute '{name}'")
    with _LOCK:
        fn = _FUNCTIONS.get(name)
        if fn is None:
            fn = _FUNCTIONS[name] = _raw_op(name)
    return fn


def __dir__():
    return sorted(n for n in _BUILTIN if _public(n))
