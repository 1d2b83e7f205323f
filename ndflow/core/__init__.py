"""Layer 0: dtypes, shapes, graph symbols, errors, devices, configuration."""

from ndflow.core import graph_io  # noqa: F401 - declares tf.io.write_graph
