"""`tf.train.experimental.PythonState`: Python state in an object-based checkpoint.

A subclass defines `serialize()` (-> bytes or str) and `deserialize(string_value)`; the
string is saved as a scalar string tensor under TensorFlow's key
`<path>/.ATTRIBUTES/py_state` (attribute "py_state" in the object graph), so checkpoints
with Python state move between TensorFlow and ndflow. Restoring hands the saved bytes back
to `deserialize` (when the object is matched; in a TF1 graph when the restore ops run).
"""

from __future__ import annotations

import abc

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import SymbolicTensor
from ndflow.ops.array_core import constant
from ndflow.ops.script_ops import numpy_function
from ndflow.train.init_scope import init_scope

PYTHON_STATE = "py_state"


@tf_export("train.experimental.PythonState")
class PythonState(metaclass=abc.ABCMeta):
    """A mixin putting Python state in object-based checkpoints: subclass it with
    `serialize()` and `deserialize(string_value)`."""

    # The checkpoint machinery (object_graph.py) keys a saveable's tensors by this name
    # plus each tensor's suffix: the one tensor has none, so its key is TF's.
    _legacy_saveable_name = PYTHON_STATE
    _checkpoint_suffixes = ("",)

    @abc.abstractmethod
    def serialize(self):
        """Callback to serialize the object. Returns a string."""

    @abc.abstractmethod
    def deserialize(self, string_value):
        """Callback to deserialize the object."""

    def _serialize_to_tensors(self):
        if context.executing_eagerly():
            with init_scope():
                value = constant(self.serialize(), dtype=dtypes.string)
        else:  # a TF1 graph saves the state at each run (TF feeds it), not the state now
            value = numpy_function(lambda: np.array(self.serialize(), dtype=object), [],
                                   dtypes.string, name="py_state")
            value.set_shape([])
        return {"": value}

    def _restore_from_tensors(self, restored_tensors):
        value = restored_tensors[""]
        if isinstance(value, SymbolicTensor):  # a TF1 graph: deserialize when the op runs
            def run(saved):
                self._restore_from_tensors({"": saved})
                return np.int32(0)
            return numpy_function(run, [value], dtypes.int32, name="restore_py_state")
        if hasattr(value, "numpy"):
            value = value.numpy()
        value = np.asarray(value, dtype=object)
        if value.shape != ():
            raise ValueError(f"A PythonState's saved value must be a scalar string, got "
                             f"shape {list(value.shape)}")
        self.deserialize(value.item())
