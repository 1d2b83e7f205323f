"""`tf.io`: graph files."""

from ndflow.core.graph_io import write_graph  # noqa: F401
