"""TF1's RNN cell wrappers, `tf.compat.v1.nn.rnn_cell.DropoutWrapper`, `ResidualWrapper`
and `DeviceWrapper`: cells around a cell, which they call with no variable scope of their own
(as TensorFlow's `_RNNCellWrapperV1` does), so the wrapped cell's variables keep their names.
What they do is shared with TF 2's wrappers (ops/rnn_cell_wrapper_impl.py).
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.ops.rnn_cell_v1 import RNNCell, assert_like_rnncell
from ndflow.ops.rnn_cell_wrapper_impl import (
    DeviceWrapperBase,
    DropoutWrapperBase,
    ResidualWrapperBase,
)


class _Wrapper(RNNCell):
    """A cell around `cell`: calls it with no scope of its own (TF's _RNNCellWrapperV1)."""

    def __init__(self, cell, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    wrapped_cell = property(lambda self: self.cell)
    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def _sub_cells(self) -> list:
        return [self.cell]

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, self.cell.__call__, scope=scope)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError


@tf_export(v1=["nn.rnn_cell.DropoutWrapper"])
class DropoutWrapper(DropoutWrapperBase, _Wrapper):
    __doc__ = DropoutWrapperBase.__doc__


@tf_export(v1=["nn.rnn_cell.ResidualWrapper"])
class ResidualWrapper(ResidualWrapperBase, _Wrapper):
    __doc__ = ResidualWrapperBase.__doc__


@tf_export(v1=["nn.rnn_cell.DeviceWrapper"])
class DeviceWrapper(DeviceWrapperBase, _Wrapper):
    __doc__ = DeviceWrapperBase.__doc__
