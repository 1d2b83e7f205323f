"""Objects that checkpoint tensors of their own (TensorFlow's `_serialize_to_tensors` /
`_restore_from_tensors` protocol), such as `tf.lookup.experimental.MutableHashTable`.

`_serialize_to_tensors()` returns {suffix: tensor}; each tensor is saved under the object's
key prefix plus its suffix (`table/.ATTRIBUTES/table-keys` in an object-based checkpoint,
`<table name>-keys` in a TF1 Saver's). Restoring reads the tensors under that prefix and
hands them back, by suffix, to `_restore_from_tensors` (eagerly at once; in a TF1 graph as
an op fed from placeholders, run by the restore status or the Saver in a session).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core import context, dtypes
from ndflow.ops import array_core


def _host(tensor, value=None) -> np.ndarray:
    value = tensor.numpy() if value is None else value
    if isinstance(value, (bytes, str)):  # a scalar string: NumPy's "S" would drop trailing NULs
        return np.array(value, dtype=object)
    value = np.asarray(value)
    if getattr(tensor, "dtype", None) is dtypes.bfloat16 and value.dtype != ml_dtypes.bfloat16:
        value = value.astype(ml_dtypes.bfloat16)
    return value


def serialize(objects, session=None) -> list[dict]:
    """{suffix: NumPy value} of each object's tensors, now (in a graph: run in `session`)."""
    if context.executing_eagerly():
        return [{s: _host(t) for s, t in obj._serialize_to_tensors().items()}
                for obj in objects]
    if not objects:
        return []
    specs = [_graph_tensors(obj, session.graph) for obj in objects]
    flat = [t for spec in specs for t in spec.values()]
    fetched = iter(session.run(flat))
    return [{s: _host(t, next(fetched)) for s, t in spec.items()} for spec in specs]


def _graph_tensors(obj, graph) -> dict:
    """The object's tensors in `graph`, built once (saving again adds no ops: a finalized
    graph can still be saved)."""
    cached = getattr(obj, "_checkpoint_tensors", None)
    if cached is None or cached[0] is not graph:
        with graph.as_default(), graph.control_dependencies(None):
            cached = (graph, obj._serialize_to_tensors())
        obj._checkpoint_tensors = cached
    return cached[1]


def saved_tensors(reader: BundleReader, prefix: str, obj=None) -> dict:
    """{suffix: NumPy value} of the tensors saved under key `prefix` + suffix: the suffixes
    `obj` declares (`_checkpoint_suffixes`: an iterator's "_STATE"), else those starting with
    "-", as TensorFlow's tables name them ("table" never takes "table_2-keys")."""
    suffixes = getattr(obj, "_checkpoint_suffixes", None)
    if suffixes is not None:
        return {s: reader.read(prefix + s) for s in suffixes if reader.has(prefix + s)}
    return {key[len(prefix):]: reader.read(key) for key in reader.keys()
            if key.startswith(prefix + "-")}


def restore(obj, values: dict, graph_assigns=None) -> None:
    """Hands `values` to `obj._restore_from_tensors`: now, or (in a TF1 graph with
    `graph_assigns`) later, when the pending assignments run in a session."""
    if graph_assigns is not None and not context.executing_eagerly():
        graph_assigns.append((obj, values))
        return
    obj._restore_from_tensors(values)


def graph_restore_op(obj, values: dict, feeds: dict):
    """In the current graph: `obj`'s restore op on placeholders, which `feeds` maps to the
    saved values."""
    holders = {}
    for suffix, value in values.items():
        dtype = dtypes.string if value.dtype == object else dtypes.as_dtype(value.dtype)
        holder = array_core.placeholder(dtype, None)
        holders[suffix] = holder
        feeds[holder] = value
    return obj._restore_from_tensors(holders)
