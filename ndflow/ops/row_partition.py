"""`tf.experimental.RowPartition`: how a sequence of values is split into rows — the row
partition of one ragged dimension of a RaggedTensor, without the values.

As TensorFlow's, it always holds `row_splits` and keeps whichever other encodings it was built
from or computed on the way (row lengths, value row ids, nrows, nvals, a uniform row length),
so asking for them again costs nothing. It is a composite tensor whose one component is
`row_splits` (TF's RowPartitionSpec), so `tf.function` and `tf.nest` carry it; `RowPartitionSpec`
(not exported by TF 2.21 either) is its type.

`RaggedTensor._row_partition` (ops/ragged_tensor.py) gives the RowPartition of a ragged
tensor's outer dimension.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor, TypeSpec
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import arithmetic, check_ops, composite_dispatch
from ndflow.ops import math as math_ops
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_op
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.ragged_factory import (
    _checked,
    _index_tensor,
    lengths_to_splits,
    segment_ids_to_splits,
)
from ndflow.ops.ragged_tensor import RaggedTensor, splits_to_segment_ids

_FACTORY_KEY = object()   # TF's private key: only the factory methods build RowPartitions
_INT = (dtypes.int32, dtypes.int64)
_ENCODINGS = ("_row_splits", "_row_lengths", "_value_rowids", "_nrows", "_nvals",
              "_uniform_row_length")


def _convert(x, name, dtype=None, dtype_hint=None):
    """TF's `_convert_row_partition`: tensors keep int32/int64, Python values become
    `dtype` (else `dtype_hint`, else int64)."""
    if x is None:
        return None
    if isinstance(x, Tensor):
        if x.dtype not in _INT:
            raise ValueError(f"{name} must have dtype int32 or int64")
        return x if dtype is None or x.dtype is dtype else cast(x, dtype)
    if isinstance(x, np.ndarray) and x.dtype == np.int32 and dtype is None:
        return convert_to_tensor(x, dtypes.int32, name=name)
    want = dtypes.as_dtype(dtype or dtype_hint or dtypes.int64)
    if want not in _INT:
        raise ValueError(f"{name} must have dtype int32 or int64")
    arr = np.asarray(x)
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must have dtype int32 or int64")
    return _index_tensor(arr, name, want)


def _static(t):
    """The value of `t` when known without running a graph (None otherwise)."""
    if t is None:
        return None
    v = constant_value(t)
    return None if v is None else np.asarray(v)


def _check_bool(validate):
    if not isinstance(validate, bool):
        raise TypeError("validate must have type bool")


def _increasing(t, message):
    return check_ops.assert_non_negative(arithmetic.subtract(t[1:], t[:-1]), message=message)


@tf_export("experimental.RowPartition")
class RowPartition(CompositeTensor):
    """Partitioning of a sequence of values into contiguous rows (see the module doc)."""

    __slots__ = _ENCODINGS + ("__weakref__",)

    def __init__(self, row_splits, row_lengths=None, value_rowids=None, nrows=None,
                 uniform_row_length=None, nvals=None, internal=False):
        if internal is not _FACTORY_KEY:
            raise ValueError("RowPartition constructor is private; please use one of the "
                             "factory methods instead (e.g., "
                             "RowPartition.from_row_lengths())")
        if not isinstance(row_splits, Tensor):
            raise TypeError(f"Row-partitioning argument must be a Tensor, got {row_splits!r}")
        if row_splits.dtype not in _INT:
            raise ValueError("Row-partitioning argument must be int32 or int64")
        row_splits.shape.with_rank(1)
        for t in (row_lengths, value_rowids, nrows, uniform_row_length, nvals):
            if t is None:
                continue
            if not isinstance(t, Tensor):
                raise TypeError("Cached value must be a Tensor or None.")
            if t.dtype is not row_splits.dtype:
                raise ValueError(f"Inconsistent dtype for encoding tensors: {t} vs "
                                 f"{row_splits}")
        self._row_splits = row_splits
        self._row_lengths = row_lengths
        self._value_rowids = value_rowids
        self._nrows = nrows
        self._uniform_row_length = uniform_row_length
        self._nvals = nvals

    @classmethod
    def _make(cls, **encodings) -> RowPartition:
        return cls(internal=_FACTORY_KEY, **encodings)

    # -- factories -----------------------------------------------------------------------------
    @classmethod
    def from_value_rowids(cls, value_rowids, nrows=None, validate=True, dtype=None,
                          dtype_hint=None) -> RowPartition:
        """Rows from the (sorted) row index of each value; `nrows` adds empty rows at the
        end (default: the last row id + 1)."""
        _check_bool(validate)
        rowids = _convert(value_rowids, "value_rowids", dtype, dtype_hint)
        const_ids = _static(rowids)
        if nrows is None:
            if const_ids is None:
                last = concat([rowids[-1:], convert_to_tensor([-1], rowids.dtype)], 0)[0]
                nrows, const_nrows = arithmetic.add(last, 1), None
            else:
                const_nrows = int(const_ids[-1]) + 1 if const_ids.size else 0
                nrows = convert_to_tensor(const_nrows, rowids.dtype, name="nrows")
        else:
            nrows = _convert(nrows, "nrows", rowids.dtype)
            const_nrows = _static(nrows)
            if const_nrows is not None:
                const_nrows = int(const_nrows)
                if const_nrows < 0:
                    raise ValueError(f"Expected nrows >= 0; got {const_nrows}")
                if const_ids is not None and const_ids.size and \
                        not const_nrows >= const_ids[-1] + 1:
                    raise ValueError(f"Expected nrows >= value_rowids[-1] + 1; got "
                                     f"nrows={const_nrows}, value_rowids[-1]={const_ids[-1]}")
        rowids.shape.with_rank(1)
        nrows.shape.with_rank(0)
        if validate:
            msg = "Arguments to from_value_rowids do not form a valid RowPartition"
            rowids = _checked(rowids, [
                check_ops.assert_non_negative(rowids[:1], message=msg),
                _increasing(rowids, msg),
                check_ops.assert_less(rowids[-1:], nrows, message=msg)])
        splits = segment_ids_to_splits(rowids, nrows)
        return cls._make(row_splits=splits, row_lengths=arithmetic.subtract(
            splits[1:], splits[:-1]), value_rowids=rowids, nrows=nrows)

    @classmethod
    def from_row_splits(cls, row_splits, validate=True, dtype=None,
                        dtype_hint=None) -> RowPartition:
        """Row i is `values[row_splits[i]:row_splits[i + 1]]`."""
        _check_bool(validate)
        if isinstance(row_splits, (list, tuple)) and not row_splits:
            raise ValueError("row_splits tensor may not be empty.")
        splits = _convert(row_splits, "row_splits", dtype, dtype_hint)
        splits.shape.with_rank(1)
        if splits.shape.as_list()[0] == 0:
            raise ValueError("row_splits tensor may not be empty.")
        if validate:
            msg = "Arguments to from_row_splits do not form a valid RaggedTensor:"
            splits = _checked(splits, [
                check_ops.assert_equal(splits[0], convert_to_tensor(0, splits.dtype),
                                       message=msg + "zero"),
                _increasing(splits, msg + "monotonic")])
        return cls._make(row_splits=splits)

    @classmethod
    def from_row_lengths(cls, row_lengths, validate=True, dtype=None,
                         dtype_hint=None) -> RowPartition:
        """Row i holds `row_lengths[i]` values."""
        _check_bool(validate)
        lengths = _convert(row_lengths, "row_lengths", dtype, dtype_hint)
        lengths.shape.with_rank(1)
        if validate:
            lengths = _checked(lengths, [check_ops.assert_non_negative(
                lengths, message="Arguments to from_row_lengths do not form a valid "
                "RowPartition")])
        return cls._make(row_splits=lengths_to_splits(lengths), row_lengths=lengths)

    @classmethod
    def from_row_starts(cls, row_starts, nvals, validate=True, dtype=None,
                        dtype_hint=None) -> RowPartition:
        """Row i starts at `row_starts[i]`; the last row ends at `nvals`."""
        _check_bool(validate)
        starts = _convert(row_starts, "row_starts", dtype, dtype_hint)
        starts.shape.with_rank(1)
        nvals = _convert(nvals, "nvals", starts.dtype)
        if validate:
            msg = "Arguments to from_row_starts do not form a valid RaggedTensor"
            starts = _checked(starts, [
                check_ops.assert_equal(starts[:1], arithmetic.multiply(starts[:1], 0),
                                       message=msg),
                _increasing(starts, msg),
                check_ops.assert_less_equal(starts[-1:], nvals, message=msg)])
        return cls._make(row_splits=concat([starts, nvals[None]], 0))

    @classmethod
    def from_row_limits(cls, row_limits, validate=True, dtype=None,
                        dtype_hint=None) -> RowPartition:
        """Row i ends at `row_limits[i]`; the first row starts at 0."""
        _check_bool(validate)
        limits = _convert(row_limits, "row_limits", dtype, dtype_hint)
        limits.shape.with_rank(1)
        if validate:
            msg = "Arguments to from_row_limits do not form a valid RaggedTensor"
            limits = _checked(limits, [
                check_ops.assert_non_negative(limits[:1], message=msg),
                _increasing(limits, msg)])
        zero = convert_to_tensor([0], limits.dtype)
        return cls._make(row_splits=concat([zero, limits], 0))

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length, nvals=None, nrows=None,
                                validate=True, dtype=None, dtype_hint=None) -> RowPartition:
        """Rows of `uniform_row_length` values each; at least one of nvals and nrows."""
        _check_bool(validate)
        if nrows is None and nvals is None:
            raise ValueError("Either (or both) of nvals and nrows must be specified")
        target = dtype or next((x.dtype for x in (uniform_row_length, nvals, nrows)
                                if isinstance(x, Tensor)), None) or dtype_hint
        length = _convert(uniform_row_length, "uniform_row_length", target)
        nvals = _convert(nvals, "nvals", length.dtype)
        nrows = _convert(nrows, "nrows", length.dtype)
        length.shape.with_rank(0)
        const_len = _static(length)
        if nrows is None:
            if const_len is None:
                nrows = math_ops.floordiv(nvals, arithmetic.maximum(
                    length, convert_to_tensor(1, length.dtype)))
            elif int(const_len) == 0:
                nrows = convert_to_tensor(0, length.dtype)
            else:
                nrows = math_ops.floordiv(nvals, convert_to_tensor(int(const_len),
                                                                     length.dtype))
        const_nrows, const_nvals = _static(nrows), _static(nvals)
        checks = []
        if const_nvals is None and const_nrows is not None and const_len is not None:
            const_nvals = int(const_nrows) * int(const_len)
            if nvals is not None and validate:
                checks.append(check_ops.assert_equal(nvals, convert_to_tensor(
                    const_nvals, length.dtype)))
            nvals = convert_to_tensor(const_nvals, length.dtype)
        if nvals is None:
            nvals = arithmetic.multiply(nrows, length)
        if const_nrows is not None and const_len is not None:
            splits = convert_to_tensor(np.arange(int(const_nrows) + 1) * int(const_len),
                                       length.dtype)
        else:
            splits = arithmetic.multiply(range_op(arithmetic.add(nrows, 1),
                                                  dtype=length.dtype), length)
        if validate:
            if const_nrows is None or const_len is None or const_nvals is None:
                checks.append(check_ops.assert_equal(
                    arithmetic.multiply(nrows, length), nvals,
                    message="uniform_row_length times nrows must equal nvals"))
            elif int(const_nrows) * int(const_len) != int(const_nvals):
                raise ValueError(f"uniform_row_length={int(const_len)} times "
                                 f"nrows={int(const_nrows)} must equal nvals={int(const_nvals)}")
            if const_len is None:
                checks.append(check_ops.assert_greater_equal(
                    length, convert_to_tensor(0, length.dtype),
                    message="uniform_row_length must be >= 0."))
            elif int(const_len) < 0:
                raise ValueError("uniform_row_length must be >= 0.")
            splits = _checked(splits, checks)
        return cls._make(row_splits=splits, uniform_row_length=length, nrows=nrows,
                         nvals=nvals)

    # -- accessors -----------------------------------------------------------------------------
    @property
    def dtype(self):
        """The dtype of the encoding tensors (int32 or int64)."""
        return self._row_splits.dtype

    def row_splits(self):
        return self._row_splits

    def value_rowids(self):
        if self._value_rowids is not None:
            return self._value_rowids
        return splits_to_segment_ids(self._row_splits)

    def nvals(self):
        return self._row_splits[-1]

    def nrows(self):
        if self._nrows is not None:
            return self._nrows
        n = self._row_splits.shape.as_list()[0]
        if n is None:
            return arithmetic.subtract(shape_op(self._row_splits, out_type=self.dtype)[0], 1)
        return convert_to_tensor(n - 1, self.dtype)

    def uniform_row_length(self):
        return self._uniform_row_length

    def row_starts(self):
        return self._row_splits[:-1]

    def row_limits(self):
        return self._row_splits[1:]

    def row_lengths(self):
        if self._row_lengths is not None:
            return self._row_lengths
        return arithmetic.subtract(self._row_splits[1:], self._row_splits[:-1])

    @property
    def static_nrows(self):
        n = self._row_splits.shape.as_list()[0]
        if n is not None:
            return n - 1
        if self._row_lengths is not None and self._row_lengths.shape.as_list()[0] is not None:
            return self._row_lengths.shape.as_list()[0]
        v = _static(self._nrows)
        return None if v is None else int(v)

    @property
    def static_nvals(self):
        v = _static(self._nvals)
        if v is not None:
            return int(v)
        if self._value_rowids is not None:
            return self._value_rowids.shape.as_list()[0]
        return None

    @property
    def static_uniform_row_length(self):
        v = _static(self._uniform_row_length)
        return None if v is None else int(v)

    def offsets_in_rows(self):
        """The position of each value within its row."""
        ids = self.value_rowids()
        return arithmetic.subtract(range_op(shape_op(ids, out_type=self.dtype)[0],
                                            dtype=self.dtype),
                                   gather(self.row_starts(), ids))

    def is_uniform(self) -> bool:
        """Whether the rows are known (from the encoding) to have one length."""
        return self._uniform_row_length is not None

    def with_dtype(self, dtype) -> RowPartition:
        dtype = dtypes.as_dtype(dtype)
        if dtype not in _INT:
            raise ValueError("dtype must be int32 or int64")
        if self.dtype is dtype:
            return self
        return RowPartition._make(**{k[1:]: None if getattr(self, k) is None
                                     else cast(getattr(self, k), dtype) for k in _ENCODINGS})

    def __repr__(self):
        if self._uniform_row_length is not None:
            return (f"tf.RowPartition(nrows={_text(self._nrows)}, "
                    f"uniform_row_length={_text(self._uniform_row_length)})")
        return f"tf.RowPartition(row_splits={_text(self._row_splits)})"

    # -- precomputed encodings -----------------------------------------------------------------
    def _has_precomputed_row_splits(self):
        return True

    def _has_precomputed_row_lengths(self):
        return self._row_lengths is not None

    def _has_precomputed_value_rowids(self):
        return self._value_rowids is not None

    def _has_precomputed_nrows(self):
        return self._nrows is not None

    def _has_precomputed_nvals(self):
        return self._nvals is not None

    def _with(self, **changes) -> RowPartition:
        kw = {k[1:]: getattr(self, k) for k in _ENCODINGS}
        kw.update(changes)
        return RowPartition._make(**kw)

    def _with_precomputed_row_splits(self):
        return self

    def _with_precomputed_row_lengths(self):
        return self._with(row_lengths=self.row_lengths())

    def _with_precomputed_value_rowids(self):
        return self._with(value_rowids=self.value_rowids())

    def _with_precomputed_nrows(self):
        return self._with(nrows=self.nrows())

    def _with_precomputed_nvals(self):
        return self._with(nvals=self.nvals())

    def _merge_precomputed_encodings(self, other, validate=True) -> RowPartition:
        """A partition holding the encodings of both (which must describe the same
        partition; checked at run time when `validate`)."""
        if self is other or all(getattr(self, k) is getattr(other, k) for k in _ENCODINGS):
            return self
        merged = {}
        for k in _ENCODINGS:
            merged[k[1:]] = _merge_tensors(getattr(self, k), getattr(other, k), k[1:],
                                           validate)
        if all(merged[k[1:]] is getattr(self, k) for k in _ENCODINGS):
            return self
        if all(merged[k[1:]] is getattr(other, k) for k in _ENCODINGS):
            return other
        return RowPartition._make(**merged)

    # -- composite protocol --------------------------------------------------------------------
    @property
    def _type_spec(self) -> RowPartitionSpec:
        return RowPartitionSpec.from_value(self)

    def _to_components(self) -> list:
        return [self._row_splits]

    def _from_components_like(self, components: list):
        if components and all(isinstance(c, TensorSpec) for c in components):
            n = components[0].shape.as_list()[0] if components[0].shape.rank == 1 else None
            return RowPartitionSpec(None if n is None else n - 1, dtype=components[0].dtype)
        return RowPartition._make(row_splits=components[0])

    def _session_value(self, arrays: list):
        return RowPartition._make(row_splits=convert_to_tensor(arrays[0]))


def _text(t) -> str:
    if t is None:
        return "None"
    v = _static(t)
    return str(t) if v is None else str(v)


def _merge_tensors(t1, t2, name, validate):
    if t1 is None:
        return t2
    if t2 is None or t1 is t2:
        return t1
    err = f"RowPartition._merge_precomputed_encodings: partitions have incompatible {name}"
    if not t1.shape.is_compatible_with(t2.shape):
        raise ValueError(err)
    if validate:
        return _checked(t1, [check_ops.assert_equal(t1, t2, message=err)])
    return t1


class RowPartitionSpec(TypeSpec):
    """The type of a RowPartition: static nrows, nvals and uniform row length, and dtype."""

    __slots__ = ("_nrows", "_nvals", "_uniform_row_length", "_dtype")

    value_type = RowPartition

    def __init__(self, nrows=None, nvals=None, uniform_row_length=None, dtype=dtypes.int64):
        self._dtype = dtypes.as_dtype(dtype)
        if self._dtype not in _INT:
            raise ValueError("dtype must be tf.int32 or tf.int64")
        nrows, nvals, ncols = (_dim(x) for x in (nrows, nvals, uniform_row_length))
        if nrows == 0:
            if nvals is None:
                nvals = 0
            elif nvals != 0:
                raise ValueError(f"nvals={nvals} is not compatible with nrows={nrows}")
        if ncols == 0:
            if nvals is None:
                nvals = 0
            elif nvals != 0:
                raise ValueError(f"nvals={nvals} is not compatible with uniform_row_length"
                                 f"={TensorShape([ncols])}")
        if ncols is not None and nvals is not None:
            if ncols != 0 and nvals % ncols != 0:
                raise ValueError(f"nvals={nvals} is not compatible with uniform_row_length"
                                 f"={ncols} (doesn't divide evenly)")
            if nrows is not None and nvals != ncols * nrows:
                raise ValueError(f"nvals={nvals} is not compatible with nrows={nrows} and "
                                 f"uniform_row_length={ncols}")
            if nrows is None and ncols != 0:
                nrows = nvals // ncols
        if ncols is not None and nrows is not None and nvals is None:
            nvals = ncols * nrows
        self._nrows, self._nvals, self._uniform_row_length = nrows, nvals, ncols

    nrows = property(lambda self: self._nrows)
    nvals = property(lambda self: self._nvals)
    uniform_row_length = property(lambda self: self._uniform_row_length)
    dtype = property(lambda self: self._dtype)

    @classmethod
    def from_value(cls, value) -> RowPartitionSpec:
        if not isinstance(value, RowPartition):
            raise TypeError("Expected `value` to be a `RowPartition`")
        return cls(value.static_nrows, value.static_nvals, value.static_uniform_row_length,
                   value.dtype)

    def with_dtype(self, dtype) -> RowPartitionSpec:
        return RowPartitionSpec(self._nrows, self._nvals, self._uniform_row_length, dtype)

    def _to_components(self) -> list:
        return [TensorSpec([None if self._nrows is None else self._nrows + 1], self._dtype)]

    def _from_components_like(self, components: list):
        if components and all(isinstance(c, TensorSpec) for c in components):
            n = components[0].shape.as_list()[0] if components[0].shape.rank == 1 else None
            return RowPartitionSpec(None if n is None else n - 1, dtype=components[0].dtype)
        return RowPartition._make(row_splits=components[0])

    @staticmethod
    def _compatible(nrows, nvals, ncols) -> bool:
        if nrows == 0 and nvals not in (0, None):
            return False
        if ncols == 0 and nvals not in (0, None):
            return False
        if ncols is not None and nvals is not None:
            if ncols != 0 and nvals % ncols != 0:
                return False
            if nrows is not None and nvals != ncols * nrows:
                return False
        return True

    def is_compatible_with(self, spec_or_value) -> bool:
        other = RowPartitionSpec.from_value(spec_or_value) \
            if isinstance(spec_or_value, RowPartition) else spec_or_value
        if not isinstance(other, RowPartitionSpec) or other._dtype is not self._dtype:
            return False
        merged = []
        for a, b in zip(self._key()[:3], other._key()[:3]):
            if a is not None and b is not None and a != b:
                return False
            merged.append(a if a is not None else b)
        return self._compatible(*merged)

    def most_specific_common_supertype(self, others):
        dims = list(self._key()[:3])
        for o in others:
            if not isinstance(o, RowPartitionSpec) or o._dtype is not self._dtype:
                return None
            dims = [a if a == b else None for a, b in zip(dims, o._key()[:3])]
        return RowPartitionSpec(*dims, self._dtype)

    def _key(self):
        return (self._nrows, self._nvals, self._uniform_row_length, self._dtype)

    def __eq__(self, other):
        return type(other) is RowPartitionSpec and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"RowPartitionSpec(nrows={self._nrows}, nvals={self._nvals}, "
                f"uniform_row_length={self._uniform_row_length}, dtype={self._dtype!r})")


def _dim(x):
    if x is None:
        return None
    if isinstance(x, TensorShape):
        return x.with_rank(1).as_list()[0]
    return getattr(x, "value", x) if not isinstance(x, int) else x


@composite_dispatch.register("row_partition_of")
def row_partition_of(rt: RaggedTensor) -> RowPartition:
    """The RowPartition of `rt`'s outer ragged dimension (TF's `rt._row_partition`)."""
    splits = rt.row_splits
    u = rt._uniform_row_length
    if u is None:
        return RowPartition._make(row_splits=splits)
    return RowPartition._make(row_splits=splits, uniform_row_length=convert_to_tensor(
        u, splits.dtype), nrows=rt.nrows(), nvals=arithmetic.multiply(
        rt.nrows(), convert_to_tensor(u, splits.dtype)))
