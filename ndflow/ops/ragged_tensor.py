"""`tf.RaggedTensor`: a tensor whose rows have different lengths, held as flat values plus one
row-splits vector per ragged dimension (TensorFlow's encoding: row i of `rt` is
`values[row_splits[i]:row_splits[i + 1]]`; `values` is itself ragged when ragged_rank > 1).

A composite tensor (core/composite_tensor.py): its components are
`[flat_values, *nested_row_splits]`, so `tf.function`, `tf.nest(expand_composites=True)` and
`tf.data` carry it as those tensors. Every method is built from ordinary ops, so it works
eagerly and in graphs alike. Around it: the factory methods and `tf.ragged.constant/range`
(ragged_factory.py), reductions, operators and `tf.ragged.map_flat_values` (ragged_math.py),
to/from_sparse, merge_dims, stack, boolean_mask (ragged_array_ops.py), `tf.strings` with
ragged results (ragged_string_ops.py), the elementwise API dispatch (ragged_dispatch.py) and
`tf.RaggedTensorSpec` (ragged_tensor_spec.py); tf.data support in data/ragged_batching.py.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import NativeObject, Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import arithmetic, composite_dispatch
from ndflow.ops import math as math_ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import ones_like, zeros
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.array_range import range as range_op
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.ragged_conversion_ops import RaggedTensorToTensor
from ndflow.ops.reduction import reduce_max


def is_ragged(x) -> bool:
    return isinstance(x, RaggedTensor)


@tf_export("RaggedTensor")
class RaggedTensor(CompositeTensor, NativeObject):
    """A tensor with one or more ragged dimensions (see the module docstring).

    Built with the factory methods (`from_row_splits`, `from_row_lengths`, `from_tensor`,
    `tf.ragged.constant`, ...), not this constructor."""

    # _uniform_row_length: the rows' common length when known statically (a dimension
    # TensorFlow's shape shows, as from_tensor or from_uniform_row_length make), else None
    __slots__ = ("_values", "_row_splits", "_uniform_row_length", "__weakref__")

    def __init__(self, values, row_partition, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._row_splits = row_partition
        self._uniform_row_length = None

    @classmethod
    def _from_splits(cls, values, row_splits, uniform_row_length=None) -> RaggedTensor:
        """No conversion, no validation: the callers made both."""
        rt = cls(values, row_splits, internal=True)
        rt._uniform_row_length = uniform_row_length
        return rt

    # -- composite protocol --------------------------------------------------------------------
    def _to_components(self) -> list:
        return [self.flat_values] + list(self.nested_row_splits)

    def _from_components_like(self, components: list):
        if components and all(isinstance(c, TensorSpec) for c in components):
            return composite_dispatch.call("ragged_spec_from_components", components,
                                           self.ragged_rank)  # specs of the components
        return from_components(components[0], components[1:], self._uniform_dims())

    def _traced_from_components(self, components: list):
        # static uniform row lengths are not part of a trace's key: not claimed in the trace
        return from_components(components[0], components[1:])

    @property
    def _type_spec(self):
        return composite_dispatch.call("ragged_spec_from_value", self)

    # -- structure -----------------------------------------------------------------------------
    @property
    def values(self):
        """The concatenated rows (a Tensor, or a RaggedTensor when ragged_rank > 1)."""
        return self._values

    @property
    def row_splits(self):
        """Where each row starts and ends in `values` (int64 or int32, nrows + 1 entries)."""
        return self._row_splits

    @property
    def flat_values(self):
        """The innermost values: `values` with every ragged dimension removed (a Tensor)."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        """The row_splits of every ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt._row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions (how many row partitions wrap `flat_values`)."""
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        """The values' dtype."""
        return self.flat_values.dtype

    @property
    def _row_partition(self):
        """The outer dimension's `tf.experimental.RowPartition` (ops/row_partition.py)."""
        return composite_dispatch.call("row_partition_of", self)

    @property
    def row_splits_dtype(self):
        """The dtype of the row partitions (`tf.int64` or `tf.int32`)."""
        return self._row_splits.dtype

    @property
    def shape(self) -> TensorShape:
        """[nrows (when static), None for each ragged dimension, the values' inner dims]."""
        n = getattr(self._row_splits, "shape", TensorShape(None))
        nrows = n.as_list()[0] - 1 if n.rank == 1 and n.as_list()[0] is not None else None
        inner = getattr(self.flat_values, "shape", TensorShape(None))
        tail = inner.as_list()[1:] if inner.rank is not None else None
        if tail is None:
            return TensorShape(None)
        return TensorShape([nrows] + self._uniform_dims() + tail)

    def _uniform_dims(self) -> list:
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt._uniform_row_length)
            rt = rt._values
        return out

    def get_shape(self) -> TensorShape:
        """The static shape: the same as `shape`."""
        return self.shape

    @property
    def ndim(self):
        """The rank (dense and ragged dimensions together), None when unknown."""
        return self.shape.rank

    # -- row partition views -------------------------------------------------------------------
    def nrows(self, out_type=None, name=None):
        """The number of rows (a scalar tensor of the splits' dtype or `out_type`)."""
        n = arithmetic.subtract(shape_op(self._row_splits, out_type=self._row_splits.dtype)[0],
                                1, name=name)
        return n if out_type is None else cast(n, out_type)

    def row_starts(self, name=None):
        """The index in `values` where each row starts: `row_splits[:-1]`."""
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        """The index in `values` where each row ends (exclusive): `row_splits[1:]`."""
        return self._row_splits[1:]

    def row_lengths(self, axis=1, name=None):
        """The length of each row (axis 1), or of each row of the ragged dimension `axis`
        (as a RaggedTensor of the dimensions above it)."""
        if axis == 0:
            return self.nrows()
        if axis == 1:
            return arithmetic.subtract(self._row_splits[1:], self._row_splits[:-1], name=name)
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.row_lengths(axis - 1))
        raise ValueError(f"axis={axis} out of bounds for a RaggedTensor of ragged_rank "
                         f"{self.ragged_rank} with dense inner dimensions")

    def nested_row_lengths(self, name=None) -> tuple:
        """The row_lengths of every ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt._values
        return tuple(out)

    def value_rowids(self, name=None):
        """The row of each value: `row_splits_to_segment_ids(row_splits)`."""
        return splits_to_segment_ids(self._row_splits)

    def nested_value_rowids(self, name=None) -> tuple:
        """The value_rowids of every ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.value_rowids())
            rt = rt._values
        return tuple(out)

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The smallest dense shape holding every row: [nrows, longest row, ...]."""
        out_type = out_type or self._row_splits.dtype
        dims = [self.nrows(out_type)]
        rt = self
        while isinstance(rt, RaggedTensor):
            lengths = rt.row_lengths()
            longest = arithmetic.maximum(
                reduce_max(lengths), convert_to_tensor(0, lengths.dtype))
            dims.append(cast(longest, out_type))
            rt = rt._values
        dims += [cast(d, out_type) for d in _inner_dims(rt)]
        result = concat([_expand0(d) for d in dims], 0)
        return result if axis is None else result[axis]

    # -- rebuilding ----------------------------------------------------------------------------
    def with_values(self, new_values) -> RaggedTensor:
        """This tensor's outer row partition over `new_values` (as many rows as `values`)."""
        return RaggedTensor._from_splits(new_values, self._row_splits, self._uniform_row_length)

    def with_flat_values(self, new_values) -> RaggedTensor:
        """Every row partition of this tensor over `new_values` in place of `flat_values`
        (as many rows as `flat_values`)."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype) -> RaggedTensor:
        """This tensor with every row partition cast to `dtype` (`tf.int32` or `tf.int64`;
        ValueError otherwise)."""
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"dtype must be int32 or int64, got {dtype}")
        values = self._values.with_row_splits_dtype(dtype) \
            if isinstance(self._values, RaggedTensor) else self._values
        splits = self._row_splits if self._row_splits.dtype is dtype \
            else cast(self._row_splits, dtype)
        return RaggedTensor._from_splits(values, splits, self._uniform_row_length)

    # -- conversion ----------------------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor: rows padded with `default_value` (0, b"") to the longest row, or
        padded/truncated to `shape` (None entries: the bounding size)."""
        flat = self.flat_values
        if default_value is None:
            default_value = b"" if flat.dtype is dtypes.string else 0
        default = convert_to_tensor(default_value, flat.dtype, name="default_value")
        if shape is None:
            shape_t = convert_to_tensor(-1, self._row_splits.dtype)
        else:
            dims = TensorShape(shape).as_list() if not isinstance(shape, Tensor) else None
            rank = self.shape.rank
            if dims is not None and rank is not None and len(dims) != rank:
                raise InvalidArgumentError(
                    None, None, f"rt_input.shape and shape={_shape_text(dims)} are "
                    f"incompatible: rt_input.rank = {rank} but shape.rank = {len(dims)}")
            shape_t = shape if dims is None else convert_to_tensor(
                [-1 if d is None else d for d in dims], self._row_splits.dtype)
            shape_t = cast(shape_t, self._row_splits.dtype)
        splits = list(self.nested_row_splits)
        return apply_op(RaggedTensorToTensor, [shape_t, flat, default, splits],
                        {"row_partition_types": ["ROW_SPLITS"] * len(splits)},
                        name=name or "RaggedToTensor").outputs[0]

    def to_list(self) -> list:
        """The rows as nested Python lists (eager only)."""
        _require_eager(self, "to_list")
        return _to_list(self.flat_values.numpy(), [s.numpy() for s in self.nested_row_splits])

    def numpy(self) -> np.ndarray:
        """A NumPy object array of rows, each row a NumPy array (eager only)."""
        _require_eager(self, "numpy")
        return _to_numpy(self.flat_values.numpy(), [s.numpy() for s in self.nested_row_splits])

    # -- indexing ------------------------------------------------------------------------------
    def __getitem__(self, key):
        if isinstance(key, tuple):
            if not key:
                return self
            first, rest = key[0], key[1:]
            if not rest:
                return self[first]
            if isinstance(first, slice):
                rows = self if first == slice(None) else self[first]
                return _index_inner(rows, rest)
            return self[first][rest]
        if isinstance(key, slice):
            return _slice_rows(self, key)
        if key is Ellipsis:
            return self
        return _row(self, key)

    def __iter__(self):
        _require_eager(self, "iteration")
        for i in range(int(self.nrows())):
            yield self[i]

    # -- operators (elementwise on the flat values; ops/ragged_math.py) -------------------
    def __add__(self, other):
        return _binary(arithmetic.add, self, other)

    def __radd__(self, other):
        return _binary(arithmetic.add, other, self)

    def __sub__(self, other):
        return _binary(arithmetic.subtract, self, other)

    def __rsub__(self, other):
        return _binary(arithmetic.subtract, other, self)

    def __mul__(self, other):
        return _binary(arithmetic.multiply, self, other)

    def __rmul__(self, other):
        return _binary(arithmetic.multiply, other, self)

    def __truediv__(self, other):
        return _binary(arithmetic.truediv, self, other)

    def __rtruediv__(self, other):
        return _binary(arithmetic.truediv, other, self)

    def __floordiv__(self, other):
        return _binary(math_ops.floordiv, self, other)

    def __mod__(self, other):
        return _binary(arithmetic.floormod, self, other)

    def __pow__(self, other):
        return _binary(arithmetic.pow, self, other)

    def __lt__(self, other):
        return _binary("less", self, other)

    def __le__(self, other):
        return _binary("less_equal", self, other)

    def __gt__(self, other):
        return _binary("greater", self, other)

    def __ge__(self, other):
        return _binary("greater_equal", self, other)

    def __neg__(self):
        return self.with_flat_values(arithmetic.negative(self.flat_values))

    def __abs__(self):
        return self.with_flat_values(math_ops.abs(self.flat_values))

    def __bool__(self):
        raise TypeError("RaggedTensor may not be used as a boolean.")

    def __eq__(self, other):
        """TF's: elementwise `==` (a ragged bool tensor), False for None or operands whose
        shapes do not combine."""
        if other is None:
            return False
        try:
            return _binary("equal", self, other)
        except (ValueError, TypeError, InvalidArgumentError):
            return False

    def __ne__(self, other):
        if other is None:
            return True
        try:
            return _binary("not_equal", self, other)
        except (ValueError, TypeError, InvalidArgumentError):
            return True

    __hash__ = object.__hash__   # TF refuses to hash eager ones; ndflow keys by identity

    # -- printing ------------------------------------------------------------------------------
    def __repr__(self):
        if _is_eager(self):
            # TF's text: NumPy's array2string of the rows (wrapped at NumPy's line width),
            # each element as str() prints it
            with np.printoptions(formatter={"all": _element_text}):
                return f"<tf.RaggedTensor {_element_text(self.numpy())}>"
        return f"tf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    __str__ = __repr__


def _element_text(x) -> str:
    if isinstance(x, np.ndarray):
        return np.array2string(x, separator=", ") if x.size else repr(x.tolist())
    return str(x)


def _binary(op, x, y):
    """An elementwise op on ragged tensors of the same row partitions, or on a ragged tensor
    and a scalar/broadcastable dense tensor (ops/ragged_math.py)."""
    return composite_dispatch.call("ragged_elementwise", op, x, y)


def from_components(flat_values, nested_row_splits, uniform_row_lengths=None):
    """The RaggedTensor of these components (no validation); no splits: `flat_values`.
    `uniform_row_lengths`: each level's static row length or None (as a spec's shape)."""
    splits = list(nested_row_splits)
    uniform = list(uniform_row_lengths or [None] * len(splits))
    rt = flat_values
    for s, u in reversed(list(zip(splits, uniform))):
        rt = RaggedTensor._from_splits(rt, s, u)
    return rt


def _shape_text(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _is_eager(rt) -> bool:
    return all(hasattr(t, "numpy") for t in rt._to_components())


def _require_eager(rt, what: str) -> None:
    if not _is_eager(rt):
        raise ValueError(f"RaggedTensor.{what} is only supported in eager mode.")


def _to_list(values: np.ndarray, splits: list) -> list:
    if not splits:
        return values.tolist()
    inner = _to_list(values, splits[1:])
    s = splits[0]
    return [inner[s[i]:s[i + 1]] for i in range(len(s) - 1)]


def _to_numpy(values: np.ndarray, splits: list):
    """TF's RaggedTensor.numpy(): rows of equal lengths stack into one array, else an object
    array of the rows."""
    if not splits:
        return values
    inner = _to_numpy(values, splits[1:])
    s = splits[0]
    rows = [inner[s[i]:s[i + 1]] for i in range(len(s) - 1)]
    if not rows:
        return np.zeros((0, 0) + inner.shape[1:], dtype=inner.dtype)
    ragged = any(len(r) != len(rows[0]) for r in rows)
    return np.array(rows, dtype=np.object_ if ragged else None)


def splits_to_segment_ids(splits, out_type=None):
    """The row id of each value: row i repeated row_lengths[i] times. Computed as the
    running count of row boundaries up to each value (a scatter-add and a cumsum: cheaper
    than tf.repeat's search)."""
    nvals = splits[-1]
    boundaries = splits[1:-1]
    starts = unsorted_segment_sum(ones_like(boundaries), boundaries,
                                  arithmetic.add(nvals, 1))[:-1]
    ids = cumsum(starts)
    return ids if out_type is None else cast(ids, out_type)


def _inner_dims(values) -> list:
    s = shape_op(values, out_type=dtypes.int64)
    rank = values.shape.rank
    return [s[i] for i in range(1, rank)] if rank is not None else []


def _expand0(t):
    return t[None] if getattr(t.shape, "rank", 0) == 0 else t


def _row_bounds(rt, i):
    """(start, limit) of row `i` (negative i counts from the end)."""
    splits = rt._row_splits
    if isinstance(i, (int, np.integer)) and _static_nrows(rt) is not None:
        n = _static_nrows(rt)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for a RaggedTensor of {n} rows")
        i %= n
        return splits[i], splits[i + 1]
    i = cast(i, splits.dtype) if isinstance(i, Tensor) else convert_to_tensor(i, splits.dtype)
    if _is_eager(rt):
        n = int(rt.nrows())
        iv = int(i)
        if not -n <= iv < n:
            raise IndexError(f"index {iv} is out of bounds for a RaggedTensor of {n} rows")
        return splits[iv % n], splits[iv % n + 1]
    return splits[i], splits[i + 1]


def _row(rt, i):
    start, limit = _row_bounds(rt, i)
    return _slice_values(rt._values, start, limit)


def _slice_values(values, start, limit):
    """values[start:limit] for a dense or ragged `values`."""
    if isinstance(values, RaggedTensor):
        splits = values._row_splits[start:limit + 1]
        inner_start, inner_limit = splits[0], splits[-1]
        return RaggedTensor._from_splits(
            _slice_values(values._values, inner_start, inner_limit),
            arithmetic.subtract(splits, inner_start))
    return values[start:limit]


def _index_inner(rt, rest: tuple):
    """rt[:, rest...]: the ragged axis 1 may be sliced (each row on its own), not indexed
    (TensorFlow's rule); the axes below are indexed in the values."""
    key, more = rest[0], rest[1:]
    if not isinstance(key, slice):
        raise ValueError("Cannot index into an inner ragged dimension.")
    sliced = rt if key == slice(None) else _slice_each_row(rt, key)
    if not more:
        return sliced
    return sliced.with_values(sliced._values[(slice(None),) + more])


def _slice_each_row(rt, key: slice):
    """Every row sliced by `key` (Python's clamping, per row length)."""
    if key.step not in (None, 1):
        raise ValueError("RaggedTensor slicing inside rows supports step 1 only.")
    lengths = rt.row_lengths()
    dt = lengths.dtype
    zero = convert_to_tensor(0, dt)

    def bound(v, default):
        if v is None:
            return default
        v = int(v)  # a Python (or eager) int: its sign picks the clamping
        t = convert_to_tensor(v, dt)
        return arithmetic.minimum(t, lengths) if v >= 0 else \
            arithmetic.maximum(arithmetic.add(lengths, t), zero)

    begin, end = bound(key.start, arithmetic.multiply(lengths, 0)), bound(key.stop, lengths)
    new_lengths = arithmetic.maximum(arithmetic.subtract(end, begin), zero)
    return _gather_ranges(rt._values, arithmetic.add(rt._row_splits[:-1], begin), new_lengths)


def _gather_ranges(values, starts, lengths):
    """The rows `values[starts[i]:starts[i] + lengths[i]]` as a RaggedTensor."""
    splits = concat([zeros([1], lengths.dtype), cumsum(lengths)], 0)
    rowids = splits_to_segment_ids(splits)
    positions = arithmetic.add(
        arithmetic.subtract(range_op(splits[-1], dtype=splits.dtype), gather(splits, rowids)),
        gather(starts, rowids))
    return RaggedTensor._from_splits(_gather_rows(values, positions), splits)


def _gather_rows(values, indices):
    if not isinstance(values, RaggedTensor):
        return gather(values, indices)
    return _gather_ranges(values._values, gather(values._row_splits[:-1], indices),
                          gather(values.row_lengths(), indices))


def _static_nrows(rt):
    n = rt._row_splits.shape
    if n.rank == 1 and n.as_list()[0] is not None:
        return n.as_list()[0] - 1
    if _is_eager(rt):
        return int(rt._row_splits.shape[0]) - 1
    return None


def _slice_rows(rt, key: slice):
    if key.step not in (None, 1):
        raise ValueError("RaggedTensor row slicing supports step 1 only.")
    n = _static_nrows(rt)
    if n is None:
        raise ValueError("Slicing the rows of a RaggedTensor needs a static number of rows "
                         "in ndflow graphs.")
    start, stop, _ = key.indices(n)
    stop = max(stop, start)
    splits = rt._row_splits[start:stop + 1]
    return RaggedTensor._from_splits(_slice_values(rt._values, splits[0], splits[-1]),
                                     arithmetic.subtract(splits, splits[0]))




def cast_splits(splits, dtype):
    return splits if splits.dtype is dtype else cast(splits, dtype)


def values_count(values, dtype):
    """The number of rows of `values` (dense first dim or ragged nrows) as `dtype`."""
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=dtype)
    return shape_op(values, out_type=dtype)[0]
