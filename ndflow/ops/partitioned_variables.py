"""Partitioned variables (TF1): `tf.compat.v1.get_variable(..., partitioner=...)` makes one
variable per part along one axis, `name/part_0`, `name/part_1`, ..., wrapped in a
`PartitionedVariable` that iterates over them and reads as their concatenation.

As TensorFlow's (variable_scope.py `_get_partitioned_variable`, partitioned_variables.py):
the partitioner maps the full shape and dtype to a number of parts per axis (at most one
axis > 1); part i's length is `dim // n`, plus one for the first `dim % n` parts. Each part
records where it lies in the full variable (`SaveSliceInfo`: full name, full shape, offset,
shape), which is how a TF1 Saver writes it: as a slice of one tensor saved under the full
name (checkpoint/tensor_slices.py), restorable into any other partitioning. An initializer
function is called per part with `partition_info` (variance-scaling ones use the full
shape); a constant initial value is sliced.
"""

from __future__ import annotations

import math

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor, register_tensor_conversion_function
from ndflow.ops.array_core import identity
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_slicing import slice as slice_
from ndflow.ops.array_split import split
from ndflow.ops.variables import Variable


class _PartitionInfo:
    """What an initializer learns about the part it initializes (TF's _PartitionInfo)."""

    __slots__ = ("_full_shape", "_var_offset")

    def __init__(self, full_shape, var_offset):
        if not isinstance(full_shape, (list, tuple)):
            raise TypeError("`full_shape` must be a sequence (like tuple or list) instead of "
                            + type(full_shape).__name__)
        if not isinstance(var_offset, (list, tuple)):
            raise TypeError("`var_offset` must be a sequence (like tuple or list) instead of "
                            + type(var_offset).__name__)
        if len(var_offset) != len(full_shape):
            raise ValueError(f"Expected equal length, but `var_offset` is of length "
                             f"{len(var_offset)} while full_shape is of length "
                             f"{len(full_shape)}.")
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={offset}, "
                                 f"shape={dim} for var_offset={var_offset}, "
                                 f"full_shape={full_shape}")
        self._full_shape = full_shape
        self._var_offset = var_offset

    full_shape = property(lambda self: self._full_shape)
    var_offset = property(lambda self: self._var_offset)

    def single_slice_dim(self, shape):
        """The one dimension the part is sliced in, or None if it is the whole variable."""
        sliced = [i for i, (d, full) in enumerate(zip(shape, self._full_shape)) if d != full]
        if len(sliced) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and "
                             f"self.full_shape={self._full_shape}: more than one dimension "
                             "is sliced")
        return sliced[0] if sliced else None

    def single_offset(self, shape) -> int:
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self._var_offset[dim]


class SaveSliceInfo:
    """Where a part lies in its full variable: `tf.Variable.SaveSliceInfo`."""

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                 save_slice_info_def=None, import_scope=None):
        if save_slice_info_def is not None:
            full_name = save_slice_info_def.full_name
            full_shape = list(save_slice_info_def.full_shape)
            var_offset = list(save_slice_info_def.var_offset)
            var_shape = list(save_slice_info_def.var_shape)
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self) -> str:
        """TensorFlow's slice spec: "7 2 3,2:0,2" (full shape, then offset,length)."""
        return " ".join([str(d) for d in self.full_shape] +
                        [":".join(f"{o},{n}" for o, n in zip(self.var_offset,
                                                             self.var_shape))])

    @property
    def extents(self) -> tuple:
        """(start, length) per dimension, as checkpoints store slices."""
        return tuple(zip(self.var_offset, self.var_shape))

    def __repr__(self):
        return f"SaveSliceInfo({self.full_name!r}, {self.spec!r})"


Variable.SaveSliceInfo = SaveSliceInfo


class PartitionedVariable:  # not in TF's public API either
    """The parts of one variable partitioned along one axis: iterate it for the parts
    (ordered by offset), convert it to a tensor for their concatenation."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape = as_shape(shape)
        for v in variable_list:
            info = v._get_save_slice_info()
            if info is None:
                raise ValueError(f"All variables must have a save_slice_info available: "
                                 f"{[v.name for v in variable_list]}")
            if len(shape) != len(partitions):
                raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
            if info.full_shape != shape.as_list():
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but "
                                 f"full shapes were: {[info.full_shape]}")
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def __repr__(self):
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self._variable_list)}>")

    def _partition_axes(self) -> list:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self) -> Tensor:
        if len(self._variable_list) == 1:
            with name_scope(None):
                return identity(self._variable_list[0], name=self._name)
        axis = self._partition_axes()[0]
        with name_scope(self._name + "/ConcatPartitions/"):
            joined = concat(list(self._variable_list), axis)
        with name_scope(None):
            return identity(joined, name=self._name)

    def as_tensor(self) -> Tensor:
        """The full value: the parts concatenated (outside the current control
        dependencies, like reading a variable)."""
        with control_dependencies(None):
            return self._concat()

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)
    _distribute_strategy = None

    def get_shape(self) -> TensorShape:
        return self._shape

    def _get_variable_list(self) -> list:
        return self._variable_list

    def _get_partitions(self) -> list:
        return self._partitions

    def _apply_assign_fn(self, assign_fn, value) -> list:
        if isinstance(value, (list, PartitionedVariable)):
            values = list(value)
            if len(values) != len(self._variable_list):
                raise ValueError(f"Assigning {len(values)} values to the "
                                 f"{len(self._variable_list)} parts of {self._name}")
        else:
            axis = self._partition_axes()[0]
            values = split(value, [v.shape[axis] for v in self._variable_list], axis=axis)
        return [assign_fn(v, x) for v, x in zip(self._variable_list, values)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(lambda v, x: v.assign(x, read_value=read_value), value)

    def assign_add(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(lambda v, x: v.assign_add(x, read_value=read_value),
                                     value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(lambda v, x: v.assign_sub(x, read_value=read_value),
                                     value)


def _convert(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{value.dtype.name}'")
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a "
                                  "reference.")
    return value.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _convert)


# -- partitioners ----------------------------------------------------------------------------
def _element_size(dtype, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype is dtypes.string else dtype.size


@tf_export(v1=["fixed_size_partitioner"])
def fixed_size_partitioner(num_shards: int, axis: int = 0):
    """A partitioner making `num_shards` parts along `axis` (fewer if the axis is shorter)."""
    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape.dims[axis])
        return partitions
    return _partitioner


@tf_export(v1=["min_max_variable_partitioner"])
def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0,
                                 min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16):
    """A partitioner making parts of at least `min_slice_size` bytes, at most
    `max_partitions` of them, along `axis`."""
    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is "
                             f"only {shape}")
        total = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.dims[axis], max_partitions,
                                      int(math.ceil(total / min_slice_size))))
        return partitions
    return _partitioner


@tf_export(v1=["variable_axis_size_partitioner"])
def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0,
                                   bytes_per_string_element: int = 16, max_shards=None):
    """A partitioner keeping each part below `max_shard_bytes` (one axis: at most one
    slice of `axis` per part), with at most `max_shards` parts."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(f"Both max_shard_bytes and bytes_per_string_element must be "
                         f"positive. Currently, max_shard_bytes is {max_shard_bytes} and"
                         f"bytes_per_string_element is {bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        partitions = [1] * shape.rank
        bytes_per_slice = 1.0 * (shape.num_elements() / shape.dims[axis]) * \
            _element_size(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        shards = int(math.ceil(1.0 * shape.dims[axis] / slices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions[axis] = shards
        return partitions
    return _partitioner


def call_partitioner(partitioner, shape: TensorShape, dtype) -> list:
    """The partitioner's parts per axis, checked as TensorFlow checks them."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but "
                         f"instead was {shape}.")
    if shape.rank < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, (list, tuple)):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.rank:
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, "
                         f"partitioning: {slicing}")
    return list(slicing)


def slice_dim_and_num_slices(slicing) -> tuple[int, int]:
    for dim, count in enumerate(slicing):
        if count > 1:
            return dim, count
    return 0, 1


def iter_slices(full_shape: list, num_slices: int, slice_dim: int):
    """(offset, shape) of each part: the first `dim % n` parts one longer."""
    excess = full_shape[slice_dim] % num_slices
    base = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = base + (1 if i < excess else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


def get_partitioned_variable(store, name: str, partitioner, shape, dtype, initializer,
                             reuse, create_part, default_initializer):
    """The store's `_get_partitioned_variable`: the PartitionedVariable `name`, shared
    or created part by part with `create_part(part_name, shape, dtype, initializer,
    partition_info)` (which handles the single variables' sharing rules)."""
    dtype = dtypes.as_dtype(dtype or dtypes.float32)
    from_value = isinstance(initializer, Tensor)
    if store.store_variables and name in store.vars:
        raise ValueError(f"A partitioner was provided, but an unpartitioned version of the "
                         f"variable was found: {name}.  Perhaps a variable of the same name "
                         "was already created without partitioning?")
    shape = as_shape(shape)
    if from_value:
        shape = shape.merge_with(initializer.shape)
    partitions = call_partitioner(partitioner, shape, dtype)
    existing = store.partitioned_vars.get(name) if store.store_variables else None
    if existing is not None:
        if reuse is False or reuse is None:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if not shape.is_compatible_with(existing.get_shape()):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"shape {shape} and found shape {existing.get_shape()}.")
        if dtype is not existing.dtype:
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"dtype {dtype.name} and found dtype {existing.dtype.name}.")
        if existing._get_partitions() != partitions:
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"partitions {partitions} and found partitions "
                             f"{existing._get_partitions()}.")
        return existing
    if reuse is True and store.store_variables:
        raise ValueError(f"PartitionedVariable {name} does not exist, or was not created "
                         "with tf.get_variable(). Did you mean to set reuse=False or "
                         "reuse=tf.AUTO_REUSE in VarScope?")
    slice_dim, num_slices = slice_dim_and_num_slices(partitions)
    full = shape.as_list()
    parts = []
    for i, (offset, part_shape) in enumerate(iter_slices(full, num_slices, slice_dim)):
        info = _PartitionInfo(full_shape=full, var_offset=offset)
        part_name = f"{name}/part_{i}"
        with name_scope(part_name + "/PartitionedInitializer"):
            if initializer is None:
                init, init_shape = default_initializer(name, dtype), part_shape
            elif callable(initializer) and not isinstance(initializer, Tensor):
                init, init_shape = initializer, part_shape
            else:
                value = initializer if isinstance(initializer, Tensor) else \
                    convert_to_tensor(initializer, dtype=dtype)
                init, init_shape = slice_(value, offset, part_shape), None
                dtype = value.dtype
        with name_scope(None):
            var = create_part(part_name, init_shape, dtype, init, info)
        var._set_save_slice_info(SaveSliceInfo(name, full, offset, part_shape))
        parts.append(var)
    result = PartitionedVariable(name, shape, dtype, parts, partitions)
    if store.store_variables:
        store.partitioned_vars[name] = result
    return result
