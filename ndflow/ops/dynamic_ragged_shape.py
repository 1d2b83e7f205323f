"""`tf.experimental.DynamicRaggedShape`: the shape of a ragged (or dense) tensor — a tuple of
RowPartitions (one per ragged dimension, outermost first) and `inner_shape`, the dense shape
of the flat values (of the whole tensor when there are no partitions).

    RowPartitions                | inner_shape | a tensor of that shape
    []                           | [2, 3]      | [[1, 2, 3], [4, 5, 6]]
    [RP([2, 0, 3])]              | [5]         | [[1, 2], [], [3, 4, 5]]
    [RP([2, 1]), RP([2, 1, 2])]  | [5]         | [[[1, 2], [3]], [[4, 5]]]

As TensorFlow's, it is an ExtensionType (fields `_row_partitions`, `_inner_shape`,
`_static_inner_shape`), so `tf.function` and `tf.nest` carry it. `tf.shape(ragged)` returns
one, and `tf.ones`/`tf.zeros`/`tf.fill`/`tf.reshape`/`tf.broadcast_to` take one
(ops/dynamic_ragged_dispatch.py).
"""

from __future__ import annotations

import typing

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import check_ops
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.extension_type import ExtensionType, ExtensionTypeSpec, _new
from ndflow.ops.extension_type_batch import BatchableExtensionType, ExtensionTypeBatchEncoder
from ndflow.ops.ragged_factory import _checked
from ndflow.ops.ragged_tensor import RaggedTensor, from_components
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.reduction import reduce_prod
from ndflow.ops.row_partition import RowPartition, RowPartitionSpec, row_partition_of

_INT = (dtypes.int32, dtypes.int64)


def _find_dtype(value, preferred):
    """TF's: the first of (preferred, the value's own dtype) that is known."""
    if preferred is not None:
        result = preferred
    elif isinstance(value, (RowPartition, Tensor)):
        result = value.dtype
    elif isinstance(value, dtypes.DType):
        result = value
    else:
        result = None
    if result is None or result in _INT:
        return result
    raise ValueError("Illegal dtype: " + str(result))


def _shape_of_tensor_value(t) -> TensorShape:
    """`constant_value_as_shape` of a 1-D shape tensor."""
    known = constant_value(t, partial=True)
    if known is not None:
        return TensorShape([None if d is None or int(d) < 0 else int(d)
                            for d in np.asarray(known, dtype=object).reshape(-1)])
    n = t.shape.as_list()[0] if t.shape.rank == 1 else None
    return TensorShape(None if n is None else [None] * n)


def _element_text(x) -> str:
    return "..." if x is Ellipsis else str(x)


def spec_shape(spec) -> TensorShape:
    """The static shape a DynamicRaggedShape.Spec describes (None for ragged dims)."""
    rps, static = spec._row_partitions, spec._static_inner_shape
    if not rps or static.rank is None:
        return static if not rps else TensorShape(None)
    return TensorShape([rps[0].nrows] + [rp.uniform_row_length for rp in rps] +
                       static.as_list()[1:])


def template_spec(spec):
    """The spec of `shape._template()` for shapes of `spec`."""
    shape = spec_shape(spec)
    if not spec._row_partitions:
        return TensorSpec(shape, dtypes.int32)
    return RaggedTensorSpec(shape, dtypes.int32, len(spec._row_partitions),
                            spec._inner_shape.dtype)


def batched_shape_spec(spec, batch_size):
    """The DynamicRaggedShape.Spec of `batch_size` shapes of `spec` stacked."""
    dtype, rps = spec._inner_shape.dtype, spec._row_partitions
    static = spec._static_inner_shape
    if not rps:
        shape = TensorShape([batch_size]).concatenate(static)
        return _shape_spec(spec, TensorSpec([shape.rank], dtype), (), shape)
    dims = spec_shape(spec).as_list()
    head = RowPartitionSpec(batch_size, None, None, dtype)
    rest = tuple(RowPartitionSpec(None, None, rp.uniform_row_length, dtype) for rp in rps)
    inner = TensorShape([None]).concatenate(static[1:]) if static.rank is not None else static
    del dims
    return _shape_spec(spec, spec._inner_shape, (head,) + rest, inner)


def unbatched_shape_spec(spec):
    """The DynamicRaggedShape.Spec of one shape of a batch `spec`."""
    dtype, rps = spec._inner_shape.dtype, spec._row_partitions
    static = spec._static_inner_shape
    if not rps:
        shape = static[1:] if static.rank is not None else static
        return _shape_spec(spec, TensorSpec([shape.rank], dtype), (), shape)
    if len(rps) == 1:
        length = rps[0].uniform_row_length
        shape = TensorShape([length]).concatenate(static[1:]) if static.rank is not None \
            else static
        return _shape_spec(spec, TensorSpec([shape.rank], dtype), (), shape)
    rest = (RowPartitionSpec(rps[0].uniform_row_length, None, rps[1].uniform_row_length,
                             dtype),) + tuple(rps[2:])
    return _shape_spec(spec, spec._inner_shape, rest, static)


def _with_static_nvals(spec):
    """`spec` with each partition's nvals filled in from the next partition's nrows (the
    last one's from the inner shape), as TF's Spec derives them."""
    rps, static = list(spec._row_partitions), spec._static_inner_shape
    for i, rp in enumerate(rps):
        nxt = rps[i + 1].nrows if i + 1 < len(rps) else \
            (static.as_list()[0] if static.rank else None)
        if rp.nvals is None and nxt is not None:
            rps[i] = RowPartitionSpec(rp.nrows, nxt, rp.uniform_row_length, rp.dtype)
    spec.__dict__["_row_partitions"] = tuple(rps)
    return spec


def _shape_spec(like, inner_spec, rps, static):
    return _new(type(like), {"_inner_shape": inner_spec, "_row_partitions": tuple(rps),
                             "_static_inner_shape": TensorShape(static)})


class _ShapeBatchEncoder(ExtensionTypeBatchEncoder):
    """Batches DynamicRaggedShapes as their templates (zeros of the shape): stacking
    templates stacks the shapes."""

    def batch(self, spec, batch_size):
        return batched_shape_spec(spec, batch_size)

    def unbatch(self, spec):
        return unbatched_shape_spec(spec)

    def encode(self, spec, value, minimum_rank=0):
        return [value._template()]

    def decode(self, spec, encoded_value):
        shape = DynamicRaggedShape.from_tensor(encoded_value[0], spec._inner_shape.dtype)
        return shape._with_num_row_partitions(len(spec._row_partitions))

    def encoding_specs(self, spec):
        return [template_spec(spec)]


@tf_export("experimental.DynamicRaggedShape")
class DynamicRaggedShape(BatchableExtensionType):
    """The shape of a ragged or dense tensor (see the module doc)."""

    # (TF's component order: the inner shape, then each partition's row splits)
    _inner_shape: Tensor
    _row_partitions: typing.Tuple[RowPartition, ...]  # noqa: UP006 - an ExtensionType field
    _static_inner_shape: TensorShape

    __batch_encoder__ = _ShapeBatchEncoder()

    class Spec:
        def __init__(self, row_partitions, static_inner_shape, dtype):
            """TF's: the partitions' specs, the flat values' static shape, the dtype."""
            if not isinstance(row_partitions, (list, tuple)):
                raise TypeError("row_partitions should be an Iterable")
            if not all(isinstance(rp, RowPartitionSpec) for rp in row_partitions):
                raise TypeError("row_partitions should be an Iterable of RowPartitionSpecs")
            dtype = dtypes.as_dtype(dtype)
            if dtype not in _INT:
                raise ValueError("dtype must be tf.int32 or tf.int64")
            for rp in row_partitions:
                if rp.dtype is not dtype:
                    raise ValueError(f"dtype of {rp!r} is {rp.dtype!r}: expected {dtype!r}")
            static = TensorShape(static_inner_shape)
            if static.rank == 0 and row_partitions:
                raise ValueError("If row_partitions are provided, must have inner_rank > 0")
            self._inner_shape = TensorSpec([static.rank], dtype)
            self._row_partitions = tuple(row_partitions)
            self._static_inner_shape = static
            _with_static_nvals(self)

        def __repr__(self):
            return (f"DynamicRaggedShape.Spec(row_partitions={self._row_partitions!r}, "
                    f"static_inner_shape={self._static_inner_shape!r}, "
                    f"dtype={self._inner_shape.dtype!r})")

        dtype = property(lambda self: self._inner_shape.dtype)
        rank = property(lambda self: spec_shape(self).rank)

        @classmethod
        def from_value(cls, value):
            return _with_static_nvals(ExtensionTypeSpec.from_value.__func__(cls, value))

    def __init__(self, row_partitions, inner_shape, dtype=None, validate=False,
                 static_inner_shape=None):
        if not isinstance(row_partitions, (list, tuple)):
            raise TypeError("row_partitions should be a list of row partitions. Instead, "
                            f"got {row_partitions}")
        for x in row_partitions:
            if not isinstance(x, RowPartition):
                raise TypeError(f"row_partitions contains {x} which is not a RowPartition")
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
        for rp in row_partitions:
            dtype = _find_dtype(rp, dtype)
        dtype = _find_dtype(inner_shape, dtype)
        if isinstance(inner_shape, np.ndarray) and inner_shape.dtype == np.int32 and \
                dtype is None:
            dtype = dtypes.int32
        dtype = _find_dtype(dtypes.int64, dtype)
        row_partitions = tuple(rp.with_dtype(dtype) for rp in row_partitions)
        if isinstance(inner_shape, Tensor):
            inner = inner_shape if inner_shape.dtype is dtype else cast(inner_shape, dtype)
        else:
            arr = np.asarray(inner_shape, dtype=object).reshape(-1)
            parts = [x if isinstance(x, Tensor) else None for x in arr]
            if any(p is not None for p in parts):
                inner = concat([(cast(x, dtype) if x.dtype is not dtype else x)[None]
                                if isinstance(x, Tensor) else convert_to_tensor([int(x)], dtype)
                                for x in arr], 0) if len(arr) else convert_to_tensor([], dtype)
            else:
                inner = convert_to_tensor(np.asarray([int(x) for x in arr], np.int64)
                                          .reshape(-1), dtype, name="inner_dim_sizes")
        checks = []
        for axis in range(1, len(row_partitions)):
            prev, rp = row_partitions[axis - 1], row_partitions[axis]
            msg = f"RowPartitions in DynamicRaggedShape do not align between {axis - 1} " \
                  f"and {axis}"
            if rp.static_nrows is not None and prev.static_nvals is not None:
                if rp.static_nrows != prev.static_nvals:
                    raise ValueError(msg)
                continue
            if validate:
                checks.append(check_ops.assert_equal(prev.nvals(), rp.nrows(), message=msg))
        inner.shape.with_rank(1)
        static = _shape_of_tensor_value(inner)
        if static_inner_shape is not None:
            static = static.merge_with(TensorShape(static_inner_shape))
        if row_partitions:
            nvals = row_partitions[-1].static_nvals
            first = static.as_list()[0] if static.rank else None
            if nvals is not None and first is not None:
                if nvals != first:
                    raise ValueError("Last row partition does not match inner_shape.")
            elif validate:
                checks.append(check_ops.assert_equal(
                    row_partitions[-1].nvals(), inner[0],
                    message="Last row partition does not match inner_shape."))
        self._row_partitions = row_partitions
        self._inner_shape = _checked(inner, checks)
        self._static_inner_shape = static

    def _from_components_like(self, components: list):
        out = ExtensionType._from_components_like(self, components)
        return _with_static_nvals(out) if isinstance(out, ExtensionTypeSpec) else out

    # -- factories -----------------------------------------------------------------------------
    @classmethod
    def from_lengths(cls, lengths, num_row_partitions=None, dtype=dtypes.int64):
        """The shape with these lengths: an int per uniform axis, a tuple of row lengths per
        ragged one (`[2, (2, 1), 3]`); by default the fewest row partitions."""
        if not isinstance(lengths, list):
            raise ValueError("lengths should be a list")
        for x in lengths:
            if not (isinstance(x, int) or (isinstance(x, tuple) and
                                           all(isinstance(y, int) for y in x))):
                raise ValueError(f"element of lengths should be int or tuple of ints: "
                                 f"instead {x!r}")
        if num_row_partitions is None:
            ragged = [not isinstance(x, int) for x in lengths]
            num_row_partitions = len(ragged) - ragged[::-1].index(True) - 1 \
                if any(ragged) else 0
        if not isinstance(num_row_partitions, int):
            raise ValueError("num_row_partitions should be an int or None")
        if not lengths:
            if num_row_partitions > 0:
                raise ValueError("num_row_partitions==0 for a scalar shape")
            return DynamicRaggedShape([], [], dtype=dtype)
        if not num_row_partitions < len(lengths):
            raise ValueError("num_row_partitions should be less than `len(lengths)` if "
                             "shape is not scalar.")
        if num_row_partitions == 0:
            return DynamicRaggedShape([], lengths, dtype=dtype)
        size, partitions = lengths[0], []
        for current in lengths[1:num_row_partitions + 1]:
            if isinstance(current, int):
                partitions.append(RowPartition.from_uniform_row_length(
                    current, current * size, nrows=size, dtype_hint=dtype))
                size = current * size
            else:
                if size != len(current):
                    raise ValueError("Shape not consistent.")
                partitions.append(RowPartition.from_row_lengths(list(current),
                                                                dtype_hint=dtype))
                size = sum(current)
        return DynamicRaggedShape(partitions, [size] + lengths[num_row_partitions + 1:],
                                  dtype=dtype)

    @classmethod
    def from_row_partitions(cls, row_partitions, dtype=None):
        """The shape whose inner shape is [the last partition's nvals]."""
        if not row_partitions:
            raise ValueError("row_partitions cannot be empty")
        return DynamicRaggedShape(row_partitions, [row_partitions[-1].nvals()], dtype=dtype)

    @classmethod
    def _from_inner_shape(cls, inner_shape, dtype=None):
        return DynamicRaggedShape([], inner_shape, dtype=dtype)

    @classmethod
    def from_tensor(cls, t, dtype=None):
        """The shape of a RaggedTensor or dense tensor."""
        if isinstance(t, RaggedTensor):
            partitions, rt = [], t
            while isinstance(rt, RaggedTensor):
                partitions.append(row_partition_of(rt))
                rt = rt.values
            flat_dtype = dtypes.as_dtype(dtype) if dtype is not None else t.row_splits.dtype
            return DynamicRaggedShape(partitions, shape_op(rt, out_type=flat_dtype),
                                      dtype=dtype)
        t = convert_to_tensor(t)
        return DynamicRaggedShape._from_inner_shape(
            shape_op(t, out_type=dtypes.as_dtype(dtype or dtypes.int32)), dtype=dtype)

    # -- properties ----------------------------------------------------------------------------
    row_partitions = property(lambda self: self._row_partitions,
                              doc="The row partitions of the shape.")
    num_row_partitions = property(lambda self: len(self._row_partitions),
                                  doc="The number of row partitions.")
    inner_shape = property(lambda self: self._inner_shape,
                           doc="The dense shape of the flat values (a 1-D int tensor).")
    dtype = property(lambda self: self._inner_shape.dtype,
                     doc="tf.int32 or tf.int64: the dtype of the encoding tensors.")

    @property
    def inner_rank(self):
        return self._static_inner_shape.rank

    @property
    def rank(self):
        """The number of dimensions, or None if unknown."""
        r = self.inner_rank
        return None if r is None else self.num_row_partitions + r

    def _static_inner_list(self, truncate_first: bool) -> list:
        # what the spec knew, and what the inner shape's value shows (a shape rebuilt
        # from a spec's components, in tf.data, keeps only the spec's static shape)
        static = self._static_inner_shape
        if static.rank is not None:
            static = static.merge_with(_shape_of_tensor_value(self._inner_shape))
        if static.rank is None:
            return [...]
        dims = static.as_list()
        return dims[1:] if truncate_first else dims

    def static_lengths(self, ragged_lengths=True):
        """The statically known length of each axis: an int, a tuple of row lengths (for a
        ragged axis whose lengths are known), or None; a trailing `...` if the rank is not."""
        if self.num_row_partitions == 0:
            return self._static_inner_list(False)
        dims = [self._row_partitions[0].static_nrows]
        for rp in self._row_partitions:
            if rp.is_uniform():
                dims.append(rp.static_uniform_row_length)
            elif ragged_lengths:
                known = constant_value(rp.row_lengths())
                dims.append(None if known is None else tuple(int(v) for v in known))
            else:
                dims.append(None)
        return dims + self._static_inner_list(True)

    def __repr__(self):
        lengths = "[" + ", ".join(_element_text(x) for x in self.static_lengths()) + "]"
        return (f"<DynamicRaggedShape lengths={lengths} "
                f"num_row_partitions={self.num_row_partitions!r}>")

    def _to_tensor_shape(self) -> TensorShape:
        lengths = self.static_lengths(ragged_lengths=False)
        if not lengths:
            return TensorShape(())
        if lengths[-1] is Ellipsis:
            return TensorShape(None)
        return TensorShape(lengths)

    def is_uniform(self, axis):
        """Whether `axis` has one length (not ragged)."""
        if not isinstance(axis, int):
            raise TypeError("axis must be an integer")
        rank = self.rank
        if axis < 0:
            raise IndexError("Negative axis values are not supported")
        if rank is not None and axis >= rank:
            raise IndexError(f"Expected axis={axis} < rank={rank}")
        return axis == 0 or axis > len(self._row_partitions) or \
            self._row_partitions[axis - 1].is_uniform()

    def with_dtype(self, dtype):
        """This shape with its encoding tensors cast to `dtype`."""
        if dtypes.as_dtype(dtype) is self.dtype:
            return self
        return DynamicRaggedShape(self._row_partitions, self._inner_shape, dtype=dtype)

    # -- indexing ------------------------------------------------------------------------------
    def __getitem__(self, index):
        """A dimension (a scalar tensor; ragged axes raise ValueError) or a slice (a shape;
        a slice not starting at 0 must have uniform dimensions)."""
        rank = self.rank
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise IndexError("Cannot stride through a shape")
            start = _fix_start(0 if index.start is None else index.start, rank,
                               self.num_row_partitions)
            return self._slice_shape(start, _fix_stop(index.stop, rank))
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0:
                if rank is None:
                    raise ValueError("Rank must be known to use __getitem__ with a "
                                     "negative index.")
                return self._dimension(rank + index)
            return self._dimension(index)
        raise TypeError("Argument is not an int or a slice")

    def _dimension(self, index):
        rank, p = self.rank, self.num_row_partitions
        if p == 0 or index > p + 1:
            if rank is None:
                raise ValueError("Rank must be known to use __getitem__ on a large index.")
            if index >= rank:
                raise IndexError(f"Index is too big: {index}>={rank}")
        if index < 0:
            raise IndexError(f"Index must be non-negative: {index}")
        if not self.is_uniform(index):
            raise ValueError(f"Index {index} is not uniform")
        if index == 0 and p > 0:
            n = self._row_partitions[0].static_nrows
            return convert_to_tensor(n, self.dtype) if n is not None else \
                self._row_partitions[0].nrows()
        if p == 0 or index > p:
            i = index - p
            known = self._static_inner_shape.as_list()[i]
            return convert_to_tensor(known, self.dtype) if known is not None else \
                self._inner_shape[i]
        return self._row_partitions[index - 1].uniform_row_length()

    def _slice_shape(self, start: int, stop: int):
        p = self.num_row_partitions
        if stop <= start:
            return DynamicRaggedShape._from_inner_shape([], dtype=self.dtype)
        if start == 0:
            if stop <= p:
                if stop == 1:
                    return DynamicRaggedShape._from_inner_shape(
                        self._row_partitions[0].nrows()[None])
                kept = self._row_partitions[:stop - 1]
                return DynamicRaggedShape(kept, kept[-1].nvals()[None])
            if self.rank is not None and self.rank <= stop:
                return self
            inner_rank = stop - p
            return DynamicRaggedShape(self._row_partitions, self._inner_shape[:inner_rank],
                                      static_inner_shape=TensorShape(
                                          self._static_inner_shape.as_list()[:inner_rank]
                                          if self._static_inner_shape.rank is not None
                                          else [None] * inner_rank))
        partial = self._slice_shape(0, stop) if self.rank is None or stop < self.rank \
            else self
        if any(not rp.is_uniform() for rp in partial.row_partitions):
            raise ValueError("All relevant dimensions must be uniform")
        if partial.rank is None:
            raise NotImplementedError("__getitem__[start:stop] where start > 0 not "
                                      "implemented")
        return DynamicRaggedShape._from_inner_shape(
            partial._with_num_row_partitions(0).inner_shape[start:])

    def _with_num_row_partitions(self, num_row_partitions: int):
        """The same shape with fewer row partitions (the dropped ones must be uniform)."""
        p = self.num_row_partitions
        if num_row_partitions == p:
            return self
        if num_row_partitions > p:
            return self._with_more_row_partitions(num_row_partitions)
        dropped = self._row_partitions[num_row_partitions:]
        if any(not rp.is_uniform() for rp in dropped):
            raise ValueError("Cannot remove a ragged row partition")
        head = [dropped[0].nrows()] + [rp.uniform_row_length() for rp in dropped]
        inner = concat([h[None] for h in head] + [self._inner_shape[1:]], 0)
        return DynamicRaggedShape(self._row_partitions[:num_row_partitions], inner)

    def _with_more_row_partitions(self, num_row_partitions: int):
        """The same shape with its outer dense dimensions also given as (uniform) row
        partitions."""
        if self.rank is None or num_row_partitions >= self.rank:
            raise ValueError(f"num_row_partitions must be less than rank: "
                             f"{num_row_partitions} for rank {self.rank}")
        rps = list(self._row_partitions)
        inner, static = self._inner_shape, self._static_inner_shape.as_list()
        while len(rps) < num_row_partitions:
            nrows = convert_to_tensor(static[0], self.dtype) if static[0] is not None \
                else inner[0]
            length = convert_to_tensor(static[1], self.dtype) if static[1] is not None \
                else inner[1]
            rp = RowPartition.from_uniform_row_length(length, nvals=nrows * length,
                                                      nrows=nrows, validate=False)
            rps.append(rp)
            inner = concat([(nrows * length)[None], inner[2:]], 0)
            merged = None if None in static[:2] else static[0] * static[1]
            static = [merged] + static[2:]
        return DynamicRaggedShape(rps, inner, static_inner_shape=TensorShape(static))

    def _template(self):
        """A tensor of zeros of this shape (how shapes are batched in tf.data)."""
        return self._add_row_partitions(zeros(self._inner_shape, dtypes.int32))

    def _num_elements(self):
        return reduce_prod(self._inner_shape)

    # -- building tensors of this shape --------------------------------------------------------
    def _add_row_partitions(self, flat_values, validate=False):
        """`flat_values` (of shape `inner_shape`) with this shape's ragged dimensions."""
        if not self._row_partitions:
            return flat_values
        if isinstance(flat_values, Tensor):
            first = flat_values.shape.as_list()[0] if flat_values.shape.rank else None
            nvals = self._row_partitions[-1].static_nvals
            if first is not None and nvals is not None and first != nvals:
                raise ValueError("Last row partition does not match flat_values.")
        return from_components(flat_values, [rp.row_splits() for rp in self._row_partitions],
                               [rp.static_uniform_row_length for rp in self._row_partitions])


def _fix_start(index, rank, num_row_partitions):
    if index < 0:
        if rank is None:
            raise ValueError("Rank must be known to use __getitem__ on a negative index.")
        index = max(rank + index, 0)
    if (num_row_partitions > 0 and index <= num_row_partitions + 1) or index == 0:
        return index
    if rank is None:
        raise ValueError("Rank must be known to use __getitem__ on a large index.")
    return min(index, rank)


def _fix_stop(index, rank):
    if index is None:
        if rank is None:
            raise ValueError("Rank must be known to use __getitem__ without a stop.")
        return rank
    if index < 0:
        if rank is None:
            raise ValueError("Rank must be known to use __getitem__ on a negative index.")
        index = max(rank + index, 0)
    return index if rank is None else min(rank, index)
