"""Array ops, part 2: Slice, StridedSlice (+ `Tensor.__getitem__`), ConcatV2, ConcatOffset.

`strided_slice_spec` is TF's ValidateStridedSliceOp (sparse spec -> dense spec -> canonical
begin/end/stride per input dimension, processing and final shapes) shared by the shape
function, constant evaluation and the ATen kernels, so all three agree on every corner.
"""

from __future__ import annotations

import builtins
import contextlib
import numbers
from dataclasses import dataclass

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import OPERATORS, Tensor
from ndflow.ops import array_slicing_docs, composite_dispatch
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_core import (
    INDEX_ATTR,
    identity,
    int_input,
    int_tensor,
    merge_message,
    partial_value,
    shape_operand,
    stack,
    static_value,
)
from ndflow.ops.array_fill import ones_like
from ndflow.ops.cast import cast
from ndflow.ops.op_def import op_def

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@dataclass
class SliceSpec:
    """Result of validating a strided slice against an input shape."""

    dense: list        # per input dim: (begin, end, stride, shrink, size) canonical; None=unknown
    entries: list      # output order: None for a new axis, else the input dim index
    processing: list   # sizes per input dim (1 for shrunk dims), None unknown
    final: list        # output shape, None unknown


def strided_slice_spec(dims, begin, end, strides, masks: dict) -> SliceSpec:
    """TF's ValidateStridedSliceOp. `begin`/`end` may be None (values unknown)."""
    n = len(strides)
    for v in (begin, end):
        if v is not None and len(v) != n:
            raise ValueError(f"Expected begin, end, and strides to be 1D equal size tensors, "
                             f"but got shapes [{len(begin or [])}], [{len(end or [])}], and "
                             f"[{n}] instead.")
    ellipsis, new_axis = masks["ellipsis_mask"], masks["new_axis_mask"]
    bmask, emask, shrink = masks["begin_mask"], masks["end_mask"], masks["shrink_axis_mask"]
    if ellipsis & (ellipsis - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")
    seen, add_after = False, 0
    for i in range(n):
        if seen and new_axis >> i & 1:
            add_after += 1
        if ellipsis >> i & 1:
            seen = True
    sparse_dims = n
    if not seen:
        ellipsis |= 1 << n
        sparse_dims += 1
    rank = len(dims)
    raw, entries = [], []   # raw: (begin, end, stride, begin_masked, end_masked, shrink)
    for i in range(sparse_dims):
        bit = 1 << i
        if ellipsis & bit:
            stop = min(rank - (sparse_dims - i) + 1 + add_after, rank)
            for _ in range(len(raw), stop):
                entries.append(len(raw))
                raw.append((0, 0, 1, True, True, False))
        elif new_axis & bit:
            entries.append(None)
        else:
            if len(raw) == rank:
                if rank == 0:   # TF's message when the input is a scalar
                    raise ValueError("Attempting to slice scalar input.")
                raise ValueError(f"Index out of range using input dim {rank}; input has only "
                                 f"{rank} dims")
            entries.append(len(raw))
            raw.append((None if begin is None else begin[i], None if end is None else end[i],
                        strides[i], bool(bmask & bit), bool(emask & bit), bool(shrink & bit)))
    dense, processing = [], []
    for i, (b, e, s, bm, em, sh) in enumerate(raw):
        if s == 0:
            raise ValueError(f"strides[{i}] must be non-zero")
        d = dims[i]
        if d is None:
            processing.append(1 if sh else None)
            dense.append(None)
            continue
        if sh and s <= 0:
            raise ValueError("only stride 1 allowed on non-range indexing.")
        lo, hi = (0, d) if s > 0 else (-1, d - 1)
        known = begin is not None and end is not None
        if known:
            if sh:
                x = b + d if b < 0 else b
                if x < 0 or x >= d:
                    raise ValueError(f"slice index {x} of dimension {i} out of bounds.")
                b, e = x, x + 1
            else:
                b = (lo if s > 0 else hi) if bm else min(max(b + d if b < 0 else b, lo), hi)
                e = (hi if s > 0 else lo) if em else min(max(e + d if e < 0 else e, lo), hi)
            length = e - b
        elif sh:
            length = 1
        elif bm and em:
            length = d if s > 0 else -d
        else:
            processing.append(None)
            dense.append(None)
            continue
        if length == 0 or (length < 0) != (s < 0):
            size = 0
        else:
            size = (abs(length) + abs(s) - 1) // abs(s)
        processing.append(size)
        dense.append((b, e, s, sh, size) if known else None)
    final = [1 if j is None else processing[j] for j in entries
             if j is None or not raw[j][5]]
    return SliceSpec(dense, entries, processing, final)


def numpy_index(spec: SliceSpec) -> tuple:
    """A NumPy basic-indexing tuple equivalent to a fully known spec."""
    idx = []
    for j in spec.entries:
        if j is None:
            idx.append(None)
            continue
        b, e, s, sh, size = spec.dense[j]
        if sh:
            idx.append(b)
        else:
            idx.append(builtins.slice(b, None if e < 0 else e, s) if size
                       else builtins.slice(0, 0))
    return tuple(idx)


def strided_slice_masks(attrs) -> dict:
    """The five mask attrs of a StridedSlice (or StridedSliceGrad) op."""
    return {k: attrs[k] for k in _MASKS}


def _slice_values(ctx):
    vals = [static_value(ctx, i) for i in (1, 2, 3)]
    return [None if v is None else [int(x) for x in np.asarray(v).reshape(-1)] for v in vals]


def _strided_slice_shape(ctx):
    s = ctx.shapes[0]
    for k in (1, 2, 3):
        if ctx.shapes[k].rank not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {ctx.shapes[k].rank}")
    begin, end, strides = _slice_values(ctx)
    if s.rank is None or strides is None:
        return [TensorShape(None)]
    spec = strided_slice_spec(s.as_list(), begin, end, strides, strided_slice_masks(ctx.attrs))
    return [TensorShape(spec.final)]


_SS_ATTRS = ["T: type", "Index: {int16, int32, int64}", "begin_mask: int = 0",
             "end_mask: int = 0", "ellipsis_mask: int = 0", "new_axis_mask: int = 0",
             "shrink_axis_mask: int = 0"]

StridedSlice = op_def(
    "StridedSlice", inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"], attrs=_SS_ATTRS, shape=_strided_slice_shape)

StridedSliceGrad = op_def(
    "StridedSliceGrad",
    inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"], attrs=_SS_ATTRS,
    shape=lambda ctx: [shape_operand(ctx, 0)])


def _ss_static(t, values):
    x = values(t.op.inputs[0])
    b, e, s = (constant_value(i) for i in t.op.inputs[1:])
    if x is None or b is None or e is None or s is None:
        return None
    x = np.asarray(x, dtype=object if values is partial_value else None)
    if x.ndim == 0 and values is partial_value:
        return None
    spec = strided_slice_spec(list(x.shape), [int(v) for v in b], [int(v) for v in e],
                              [int(v) for v in s], strided_slice_masks(t.op.attrs))
    return x[numpy_index(spec)]


def _ss_value(t):
    v = _ss_static(t, constant_value)
    return None if v is None else np.array(v)


def _ss_partial(t):
    v = _ss_static(t, partial_value)
    if v is None:
        return [None] * t.shape[0] if t.shape.rank == 1 and t.shape[0] is not None else None
    return v.tolist() if isinstance(v, np.ndarray) else v


StridedSlice.constant_value = _ss_value
StridedSlice.partial_value = _ss_partial


@tf_export("strided_slice")
def strided_slice(input_, begin, end, strides=None, begin_mask: int = 0, end_mask: int = 0,
                  ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0,
                  var=None, name: str | None = None) -> Tensor:
    """`tf.strided_slice`."""
    if strides is None:
        strides = [1] * len(begin) if isinstance(begin, (list, tuple)) else \
            ones_like(begin)
    # begin and end convert inside the op's scope, as TF's (`StridedSlice/begin`)
    index = [int_input(begin), int_input(end), int_tensor(strides)]
    return apply_op(StridedSlice, [input_] + index,
                    {"begin_mask": begin_mask, "end_mask": end_mask,
                     "ellipsis_mask": ellipsis_mask, "new_axis_mask": new_axis_mask,
                     "shrink_axis_mask": shrink_axis_mask}, name=name).outputs[0]


_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")


def _check_index(idx):
    if isinstance(idx, numbers.Integral) and not isinstance(idx, bool):
        return
    dt = getattr(idx, "dtype", None)
    if not isinstance(idx, Tensor) or dt not in (dtypes.int16, dtypes.int32, dtypes.int64) \
            or (idx.shape.rank is not None and idx.shape.rank == 1):
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def is_boolean_index(slice_spec) -> bool:
    """A whole index that is a bool, a boolean tensor or a boolean NumPy array (a mask)."""
    return (isinstance(slice_spec, bool)
            or (isinstance(slice_spec, Tensor) and slice_spec.dtype == dtypes.bool)
            or (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == bool))


def slice_helper(tensor, slice_spec, var=None) -> Tensor:
    """`Tensor.__getitem__` as TF's `_slice_helper`: one StridedSlice with packed indices (a
    boolean index is array_mask.getitem's, which is what `__getitem__` calls)."""
    tensor = convert_to_tensor(tensor)
    with slice_scope():
        packed, masks = slice_args(slice_spec)
    return apply_op(StridedSlice, [tensor] + packed, masks, name="strided_slice").outputs[0]


def slice_scope():
    """The `strided_slice/` name scope `__getitem__` builds its ops in (graphs)."""
    graph = None if context.executing_eagerly() else context.get_default_graph()
    scope = graph.unique_name("strided_slice", mark_as_used=False) if graph else None
    return graph.name_scope(scope + "/") if graph else contextlib.nullcontext()


def slice_args(slice_spec) -> tuple:
    """([begin, end, strides] as index tensors, masks) of a Python slice spec (TF's packing),
    shared by `__getitem__` and sliced assignment to variables."""
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            for val, lst, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                if val is not None:
                    _check_index(val)
                    lst.append(val)
                else:
                    lst.append(0)
                    masks[mask] |= bit
            if s.step is not None:
                _check_index(s.step)
            strides.append(1 if s.step is None else s.step)
        elif s is Ellipsis or s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(s)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    if begin:
        packed = [_pack_index(v) for v in (begin, end, strides)]
        if any(p.dtype is dtypes.int64 for p in packed):
            packed = [cast(p, dtypes.int64) for p in packed]
    else:
        empty = convert_to_tensor(np.zeros([0], np.int32))
        packed = [empty] * 3
    return packed, masks


def _pack_index(values):
    if any(isinstance(v, Tensor) for v in values):
        return stack(values)
    if context.executing_eagerly():
        return int_tensor(values)
    return convert_to_tensor(values, name="stack", dtype_hint=dtypes.int32)


OPERATORS["getitem"] = slice_helper

# `x[:, tf.newaxis]` inserts a dimension of size 1 (NumPy's newaxis is None too).
newaxis = tf_export("newaxis")(None)


# -- Slice ---------------------------------------------------------------------------------------

def _slice_shape(ctx):
    s, bs, ss = ctx.shapes
    for x in (bs, ss):
        if x.rank is not None and x.rank != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {x.rank}")
    n = bs[0] if bs.rank == 1 and bs[0] is not None else (ss[0] if ss.rank == 1 else None)
    if n is not None and s.rank is not None and s.rank != n:
        raise ValueError(f"Shape must be rank {n} but is rank {s.rank}")
    if n is None and s.rank is None:
        return [TensorShape(None)]
    r = n if n is not None else s.rank
    if context.executing_eagerly() or static_value(ctx, 2) is None:
        return [TensorShape([None] * r)]
    # TF's shape function reads `size` as a shape (-1: to the end) and leaves the bounds to
    # the kernel: a slice past the input builds and fails when it runs
    size = shape_operand(ctx, 2).as_list()
    begin = static_value(ctx, 1)
    begin = None if begin is None else [int(v) for v in np.asarray(begin).reshape(-1)]
    dims = s.as_list() if s.rank is not None else [None] * r
    return [TensorShape([sz if sz is not None else
                         None if d is None or begin is None else d - begin[i]
                         for i, (d, sz) in enumerate(zip(dims, size))])]


Slice = op_def("Slice", inputs=["input: T", "begin: Index", "size: Index"],
               outputs=["output: T"], attrs=["T: type", "Index: {int32, int64}"],
               shape=_slice_shape)


@tf_export("slice")
def slice(input_, begin, size, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """`tf.slice`: `size[i]` elements from `begin[i]` (-1: all remaining)."""
    b = int_input(begin)   # converted inside the op's scope, as TF's (`Slice/begin`)
    s = int_input(size) if isinstance(b, (int, list)) else int_tensor(size, dtype_hint=b.dtype)
    return apply_op(Slice, [input_, b, s], name=name).outputs[0]


# -- ConcatV2 / ConcatOffset ---------------------------------------------------------------------

def _concat_shape(ctx):
    shapes = ctx.shapes[:-1]
    if context.executing_eagerly():
        return [TensorShape(None)]
    ranks = [s.rank for s in shapes if s.rank is not None]
    for r in ranks[1:]:
        if r != ranks[0]:
            raise ValueError(f"Shape must be rank {ranks[0]} but is rank {r}")
    axis = ctx.value(len(shapes))
    if not ranks:
        return [TensorShape(None)]
    r = ranks[0]
    if axis is None:
        return [TensorShape([None] * r)]
    axis = int(axis)
    min_rank = -axis if axis < 0 else axis + 1
    if r < min_rank:
        raise ValueError(f"Shape must be at least rank {min_rank} but is rank {r}")
    axis += r if axis < 0 else 0
    known = [s for s in shapes if s.rank is not None]
    last = known[-1].as_list()
    before, after = TensorShape(last[:axis]), TensorShape(last[axis + 1:])
    middle = last[axis]
    for s in reversed(known[:-1]):
        d = s.as_list()
        for part, acc in ((TensorShape(d[:axis]), before), (TensorShape(d[axis + 1:]), after)):
            if not part.is_compatible_with(acc):
                raise ValueError(merge_message(part, acc))
        before, after = before.merge_with(d[:axis]), after.merge_with(d[axis + 1:])
        middle = None if middle is None or d[axis] is None else middle + d[axis]
    if len(known) != len(shapes):
        middle = None
    return [TensorShape(before.as_list() + [middle] + after.as_list())]


ConcatV2 = op_def("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
                  attrs=["N: int >= 2", "T: type", "Tidx: " + INDEX_ATTR], shape=_concat_shape)


def _concat_value(t):
    vals = [constant_value(x) for x in t.op.inputs]
    if any(v is None for v in vals):
        return None
    return np.concatenate(vals[:-1], axis=int(vals[-1]))


def _concat_partial(t):
    parts = [partial_value(x) for x in t.op.inputs[:-1]]
    if any(not isinstance(p, list) for p in parts) or t.shape.rank != 1:
        return [None] * t.shape[0] if t.shape.rank == 1 and t.shape[0] is not None else []
    if any(x.shape.rank != 1 or x.shape[0] is None for x in t.op.inputs[:-1]):
        return []
    return [d for p in parts for d in p]


ConcatV2.constant_value = _concat_value
ConcatV2.partial_value = _concat_partial


def _concat_offset_shape(ctx):
    return [s for s in ctx.shapes[1:]]


ConcatOffset = op_def("ConcatOffset", inputs=["concat_dim: int32", "shape: N * shape_type"],
                      outputs=["offset: N * shape_type"],
                      attrs=["N: int >= 2", "shape_type: {int32, int64} = DT_INT32"],
                      shape=_concat_offset_shape, not_differentiable=True)


def concat_offsets(axis: int, sizes: list) -> list:
    offsets, run = [], 0
    for s in sizes:
        off = [0] * len(s)
        off[axis] = run
        run += s[axis]
        offsets.append(off)
    return offsets


def _concat_offset_value(t):
    vals = [constant_value(x) for x in t.op.inputs]
    if any(v is None for v in vals):
        return None
    sizes = [list(v) for v in vals[1:]]
    axis = int(vals[0]) % len(sizes[0])
    return np.array(concat_offsets(axis, sizes)[t.value_index], t.dtype.np_dtype)


ConcatOffset.constant_value = _concat_offset_value


@tf_export("concat")
def concat(values, axis, name: str = "concat") -> Tensor:
    """`tf.concat`: joins tensors along `axis` (Identity for a single tensor, as TF)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if any(isinstance(v, CompositeTensor) for v in values):  # ops/ragged_math.py
        return composite_dispatch.call("concat", values, axis)
    if len(values) == 1:
        return identity(values[0], name=name)
    return apply_op(ConcatV2, [list(values), int_input(axis)],
                    name=name).outputs[0]


attach(globals(), array_slicing_docs.DOCS)
