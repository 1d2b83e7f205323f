"""A SavedModel's `variables/variables` checkpoint: an object-graph TensorBundle (each
variable under its `<path>/.ATTRIBUTES/VARIABLE_VALUE` key, the TrackableObjectGraph proto
under `_CHECKPOINTABLE_OBJECT_GRAPH`), as TensorFlow writes and reads it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from tensorboard.compat.proto import trackable_object_graph_pb2

from ndflow.checkpoint import sharded_save
from ndflow.checkpoint.tensor_bundle import BundleReader, BundleWriter
from ndflow.core import dtypes, errors

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def host_value(var, value=None) -> np.ndarray:
    """A variable's value (or `value` read for it) as the bundle stores it."""
    value = np.asarray(var.numpy() if value is None else value)
    if var.dtype is dtypes.bfloat16 and value.dtype != ml_dtypes.bfloat16:
        value = value.astype(ml_dtypes.bfloat16)
    return value


def write_variables(prefix: str, variables: dict, object_graph: bytes,
                    sharding_callback=None) -> None:
    """Writes `{checkpoint key: variable or NumPy value}` and the object graph to the
    bundle `prefix` (in the shards `sharding_callback` makes, if given: SaveOptions')."""
    if sharding_callback is not None:
        items = []
        for key, var in variables.items():
            value = var if isinstance(var, np.ndarray) else host_value(var)
            dtype = getattr(var, "dtype", None) if not isinstance(var, np.ndarray) else \
                dtypes.string if value.dtype == object else dtypes.as_dtype(value.dtype)
            items.append((key, value, dtype, getattr(var, "device", "") or "", var))
        items.append((OBJECT_GRAPH_KEY, np.array(object_graph, dtype=object), dtypes.string,
                      "", None))
        sharded_save.write_sharded(prefix, sharding_callback, items)
        return
    writer = BundleWriter(prefix)
    writer.add(OBJECT_GRAPH_KEY, np.array(object_graph, dtype=object))
    for key, var in variables.items():
        writer.add(key, var if isinstance(var, np.ndarray) else host_value(var))
    writer.finish()


class VariablesReader:
    """The checkpoint of a SavedModel: its object graph and the tensors it names."""

    def __init__(self, prefix: str):
        self.reader = BundleReader(prefix)
        self.graph = trackable_object_graph_pb2.TrackableObjectGraph()
        if self.reader.has(OBJECT_GRAPH_KEY):
            raw = self.reader.read(OBJECT_GRAPH_KEY).reshape(-1)[0]
            try:
                self.graph.ParseFromString(bytes(raw))
            except Exception:  # noqa: BLE001 - protobuf's DecodeError
                raise errors.DataLossError(None, None, f"{prefix}: the checkpoint's object "
                                           "graph cannot be parsed") from None

    def variable_keys(self, saved_nodes) -> dict:
        """{SavedObjectGraph node id: checkpoint key} for the variables."""
        return {i: attrs["VARIABLE_VALUE"]
                for i, attrs in self.attribute_keys(saved_nodes).items()
                if "VARIABLE_VALUE" in attrs}

    def attribute_keys(self, saved_nodes) -> dict:
        """{SavedObjectGraph node id: {attribute name: checkpoint key}} (a variable's
        VARIABLE_VALUE, a mutable table's table-keys/table-values, ...): both graphs are
        walked from the root together, matching children by local name."""
        out: dict = {}
        if not len(self.graph.nodes):
            return out
        pairs, seen = [(0, 0)], {0}
        while pairs:
            s, c = pairs.pop()
            if self.graph.nodes[c].attributes:
                out[s] = {a.name: a.checkpoint_key for a in self.graph.nodes[c].attributes}
            ckpt_children = {r.local_name: r.node_id for r in self.graph.nodes[c].children}
            for ref in saved_nodes[s].children:
                j = ckpt_children.get(ref.local_name)
                if j is not None and ref.node_id not in seen:
                    seen.add(ref.node_id)
                    pairs.append((ref.node_id, j))
        return out

    def saveable_keys(self, key: str) -> list:
        """The bundle keys of a saveable attribute: `key` itself, else its `key-<name>`
        tensors (a mutable table's `-keys`, `-values`) in name order, as they were saved."""
        if self.reader.has(key):
            return [key]
        return sorted(k for k in self.reader.keys() if k.startswith(key + "-"))

    def read(self, key: str) -> np.ndarray:
        return self.reader.read(key)
