"""`tf.version`: the TensorFlow API level ndflow implements (2.21: its names, semantics and
GraphDef version), so programs that test `tf.__version__` take their TF2 paths.
ndflow's own release is the package version (`importlib.metadata.version("ndflow")`)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import GRAPH_DEF_VERSION

VERSION = "2.21.0"
GIT_VERSION = "ndflow"
COMPILER_VERSION = "ndflow (Python, ATen kernels)"
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0

_CONSTANTS = {"VERSION": VERSION, "GIT_VERSION": GIT_VERSION,
              "COMPILER_VERSION": COMPILER_VERSION, "GRAPH_DEF_VERSION": GRAPH_DEF_VERSION,
              "GRAPH_DEF_VERSION_MIN_CONSUMER": GRAPH_DEF_VERSION_MIN_CONSUMER,
              "GRAPH_DEF_VERSION_MIN_PRODUCER": GRAPH_DEF_VERSION_MIN_PRODUCER}
for _name, _value in _CONSTANTS.items():
    tf_export(f"version.{_name}", v1=[_name, f"version.{_name}"])(_value)
