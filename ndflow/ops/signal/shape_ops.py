"""`tf.signal.frame` and `tf.signal.overlap_and_add`: cutting a signal into (overlapping)
frames along an axis, and adding frames back into one signal.

Both work on static values where they are known (the usual case: Python frame lengths and
steps) and build the same computation from shape ops otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import SymbolicTensor
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import add, floor_div, maximum, multiply
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import transpose
from ndflow.ops.reduction import reduce_sum


def static_int(t):
    """A scalar tensor's value as a Python int when it is known, else None."""
    v = constant_value(t)
    return None if v is None else int(np.asarray(v).reshape(()))


def scalar_int(value, name):
    t = convert_to_tensor(value, name=name, dtype_hint=dtypes.int32)
    if t.shape.rank not in (None, 0):
        raise ValueError(f"Shape {t.shape} must have rank 0")
    return t


def _at_least_rank(t, rank):
    if t.shape.rank is not None and t.shape.rank < rank:
        raise ValueError(f"Shape {t.shape} must have rank at least {rank}")


def _num_frames(length, frame_length, frame_step, pad_end):
    if pad_end:
        return -(-length // frame_step)
    return max(0, 1 + (length - frame_length) // frame_step)


@tf_export("signal.frame")
def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1,
          name=None) -> Tensor:
    """`tf.signal.frame`: frames of `frame_length` samples every `frame_step` samples along
    `axis` (shape `outer + [num_frames, frame_length] + inner`); with `pad_end`, frames
    start at every `frame_step` of the signal and run into `pad_value` past its end."""
    with name_scope(name, "frame"):
        signal = convert_to_tensor(signal, name="signal")
        _at_least_rank(signal, 1)
        frame_length = scalar_int(frame_length, "frame_length")
        frame_step = scalar_int(frame_step, "frame_step")
        axis_value = static_int(scalar_int(axis, "axis"))
        rank = signal.shape.rank
        if axis_value is None or rank is None:
            raise NotImplementedError("tf.signal.frame needs a static axis and signal rank")
        if not -rank <= axis_value < rank:
            raise ValueError(f"axis {axis_value} is out of range for a signal of rank {rank}")
        ax = axis_value % rank
        fl, fs = static_int(frame_length), static_int(frame_step)
        length = signal.shape[ax]
        if length is not None and fl is not None and fs is not None:
            num = _num_frames(length, fl, fs, pad_end)
            if pad_end:
                extra = max(0, fl + fs * (num - 1) - length)
                signal = _pad_axis(signal, ax, extra, pad_value)
                length += extra
            return _frame_in_blocks(signal, ax, length, num, fl, fs)
        length_t = array_core.shape(signal)[ax]
        if pad_end:
            num_t = -floor_div(-length_t, frame_step)
            extra = maximum(0, frame_length + frame_step * (num_t - 1) - length_t)
            signal = _pad_axis(signal, ax, extra, pad_value)
        else:
            num_t = maximum(0, 1 + floor_div(length_t - frame_length, frame_step))
        starts = array_core.expand_dims(multiply(range_(num_t), frame_step), 1)
        indices = add(starts, array_core.expand_dims(range_(frame_length), 0))
        frames = gather(signal, indices, axis=ax)
        dims = signal.shape.as_list()
        num_static = None if length is None or fs is None else (
            _num_frames(length, fl, fs, True) if pad_end else
            None if fl is None else _num_frames(length, fl, fs, False))
        if isinstance(frames, SymbolicTensor):  # what is static survives the shape ops
            frames.set_shape(TensorShape(dims[:ax] + [num_static, fl] + dims[ax + 1:]))
        return frames


def _frame_in_blocks(signal, ax, length, num, fl, fs):
    """Frames gathered as blocks of gcd(frame_length, frame_step) samples: the signal viewed
    as [..., length // g, g, ...], frame i is blocks i * fs / g ... + fl / g. Gathering whole
    blocks (and scattering them back in the gradient) moves g samples per index."""
    g = math.gcd(fl, fs) or 1
    blocks = length // g
    dims = signal.shape.as_list()
    keep = [slice(None)] * ax + [slice(0, blocks * g)]
    shape = array_core.shape(signal)
    x = array_core.reshape(signal[tuple(keep)],
                           concat([shape[:ax], np.array([blocks, g], np.int32), shape[ax + 1:]], 0))
    starts = np.arange(num, dtype=np.int32)[:, None] * (fs // g)
    indices = (starts + np.arange(fl // g, dtype=np.int32)[None, :]).reshape(num, fl // g)
    frames = array_core.reshape(gather(x, indices, axis=ax),
                                concat([shape[:ax], np.array([num, fl], np.int32),
                                        shape[ax + 1:]], 0))
    if isinstance(frames, SymbolicTensor):
        frames.set_shape(TensorShape(dims[:ax] + [num, fl] + dims[ax + 1:]))
    return frames


def _pad_axis(signal, ax, extra, pad_value):
    value = convert_to_tensor(pad_value, signal.dtype, name="pad_value")
    if value.shape.rank not in (None, 0):
        raise ValueError(f"Shape {value.shape} must have rank 0")
    rank = signal.shape.rank
    rows = [[0, 0]] * ax + [[0, extra]] + [[0, 0]] * (rank - ax - 1)
    if isinstance(extra, int):
        paddings = np.array(rows, np.int32)
    else:
        paddings = concat([np.zeros([ax, 2], np.int32),
                           array_core.reshape(array_core.stack([0, extra]), [1, 2]),
                           np.zeros([rank - ax - 1, 2], np.int32)], 0)
    return array_fill.pad(signal, paddings, constant_values=value)


@tf_export("signal.overlap_and_add")
def overlap_and_add(signal, frame_step, name=None) -> Tensor:
    """`tf.signal.overlap_and_add`: frames `[..., frames, frame_length]` added at offsets
    `frame_step` apart into `[..., frame_length + frame_step * (frames - 1)]`."""
    with name_scope(name, "overlap_and_add"):
        signal = convert_to_tensor(signal, name="signal")
        _at_least_rank(signal, 2)
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        if frame_step.shape.rank not in (None, 0):
            raise ValueError(f"Shape {frame_step.shape} must have rank 0")
        if not frame_step.dtype.is_integer:
            raise ValueError(f"frame_step must be an integer. Got {frame_step.dtype!r}")
        step = static_int(frame_step)
        step = frame_step if step is None else step
        rank = signal.shape.rank
        if rank is None:
            raise NotImplementedError("tf.signal.overlap_and_add needs a signal of known rank")
        frames, frame_length = (d if d is not None else array_core.shape(signal)[i]
                                for i, d in ((-2, signal.shape[-2]), (-1, signal.shape[-1])))
        outer = array_core.shape(signal)[:-2]
        output_length = frame_length + step * (frames - 1)
        if isinstance(step, int) and step == frame_length:
            return array_core.reshape(signal, concat([outer, _vec(output_length)], 0))
        # Cut each frame into `segments` pieces of `step` samples; piece j of frame f lands
        # in output block f + j. Padding the frame axis by `segments` and reading the
        # pieces' block-major layout with a row stride one smaller shifts piece j by j
        # blocks, after which the pieces of each block are summed.
        segments = -(-frame_length // step)
        rows = concat([np.zeros([rank - 2, 2], np.int32),
                       array_core.reshape(_vec(0, segments, 0, segments * step - frame_length),
                                          [2, 2])], 0)
        x = array_fill.pad(signal, rows)
        x = array_core.reshape(x, concat([outer, _vec(frames + segments, segments, step)], 0))
        x = transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2, rank])
        x = array_core.reshape(x, concat([outer, _vec(segments * (frames + segments), step)],
                                         0))
        x = x[..., :segments * (frames + segments - 1), :]
        x = array_core.reshape(x, concat([outer, _vec(segments, frames + segments - 1, step)],
                                         0))
        x = reduce_sum(x, -3)
        x = array_core.reshape(x, concat([outer, _vec((frames + segments - 1) * step)], 0))
        return x[..., :output_length]


def _vec(*values):
    """An int32 vector of Python ints and scalar tensors."""
    if all(isinstance(v, int) for v in values):
        return np.array(values, np.int32)
    return array_core.stack([convert_to_tensor(v, dtypes.int32) for v in values])
