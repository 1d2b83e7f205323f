"""`tf.io.write_graph`: a graph's `GraphDef` written to a file, as text or binary proto.

The file is written atomically: to a temporary file in the same directory, then moved over
the destination with `os.replace`, so a reader never sees a half-written graph and a failed
write leaves any previous file intact.
"""

from __future__ import annotations

import os

from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

from ndflow.core.api_export import tf_export
from ndflow.core.atomic_file import atomic_write
from ndflow.core.graph_def import graph_to_graph_def


def _as_graph_def(graph_or_graph_def) -> graph_pb2.GraphDef:
    if isinstance(graph_or_graph_def, graph_pb2.GraphDef):
        return graph_or_graph_def
    if hasattr(graph_or_graph_def, "get_operations"):
        return graph_to_graph_def(graph_or_graph_def)
    if hasattr(graph_or_graph_def, "node") and hasattr(graph_or_graph_def, "SerializeToString"):
        return graph_pb2.GraphDef.FromString(graph_or_graph_def.SerializeToString())
    raise TypeError("Argument `graph_or_graph_def` must be a Graph or a GraphDef proto, got "
                    f"{type(graph_or_graph_def).__name__}")


@tf_export("io.write_graph", v1=["io.write_graph", "train.write_graph"])
def write_graph(graph_or_graph_def, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes the graph's GraphDef to `logdir/name` (creating `logdir`); returns the path."""
    graph_def = _as_graph_def(graph_or_graph_def)
    logdir, name = os.fspath(logdir), os.fspath(name)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = (text_format.MessageToString(graph_def).encode("utf-8") if as_text
            else graph_def.SerializeToString())
    atomic_write(path, data)
    return path
