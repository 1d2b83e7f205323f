"""TF1 variable helpers of `tf.compat.v1` not on the variables themselves:
`add_to_collections`, `initialize_variables` / `initialize_local_variables`,
`assert_variables_initialized`, `report_uninitialized_variables`,
`moving_average_variables`, `no_regularizer`, `count_up_to` (ResourceCountUpTo) and
`batch_scatter_update` (a ScatterNdUpdate over the batch dimensions)."""

from __future__ import annotations

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.ops import variables as _variables
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import multiply
from ndflow.ops.array_core import Rank, constant, expand_dims, reshape, shape, stack
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import logical_not
from ndflow.ops.data_flow_queues import resource_count_up_to
from ndflow.ops.scopes_v1 import colocate_with
from ndflow.ops.state_scatter_nd import scatter_nd_update

moving_average_variables = tf_export(v1=["moving_average_variables"])(
    _variables.moving_average_variables)


@tf_export(v1=["add_to_collections"])
def add_to_collections(names, value) -> None:
    """Adds `value` to each collection in `names` of the default graph (a string: one)."""
    context.get_default_graph().add_to_collections(names, value)


@tf_export(v1=["initialize_variables"])
def initialize_variables(var_list, name="init"):
    """Deprecated `variables_initializer`."""
    return _variables.variables_initializer(var_list, name=name)


@tf_export(v1=["initialize_local_variables"])
def initialize_local_variables():
    """Deprecated `local_variables_initializer`."""
    return _variables.local_variables_initializer()


@tf_export(v1=["no_regularizer"])
def no_regularizer(_):
    """A regularizer that adds nothing (for `get_variable(regularizer=...)`)."""
    return None


def _all_variables(var_list):
    if var_list is None:
        var_list = _variables.global_variables() + _variables.local_variables()
    return list(var_list)


@tf_export(v1=["assert_variables_initialized"])
def assert_variables_initialized(var_list=None):
    """An int32 tensor of the variables' ranks (one scalar for one variable), each a Rank op
    on the variable's value; None when there are no variables. As in TF 2.21, constant
    folding replaces a statically known rank, so with resource variables running it does not
    fail while a variable is uninitialized."""
    var_list = _all_variables(var_list)
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with colocate_with(var.op if not context.executing_eagerly() else var):
            ranks.append(apply_op(Rank, [convert_to_tensor(var)]).outputs[0])
    return ranks[0] if len(ranks) == 1 else stack(ranks)


@tf_export(v1=["report_uninitialized_variables"])
def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the names of the variables not yet initialized (eagerly, and
    when there are none, an empty one)."""
    var_list = _all_variables(var_list)
    with scopes.name_scope(name):
        init_vars = [_variables.is_variable_initialized(v) for v in var_list]
        if not var_list:
            return constant([], dtype=dtypes.string)
        mask = logical_not(stack(init_vars))
        names = constant([v.op.name for v in var_list])
        return boolean_mask(names, mask)


@tf_export(v1=["count_up_to"])
def count_up_to(ref, limit, name=None):
    """Increments the integer variable `ref` unless it reached `limit` (OutOfRangeError
    then); returns its value before the increment."""
    return resource_count_up_to(ref.handle, limit, ref.dtype, name=name)


@tf_export(v1=["batch_scatter_update"])
def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """`ref[i0, ..., i_{n-1}, indices[i0, ..., i_{n-1}]] = updates[i0, ..., i_{n-1}]`:
    `scatter_update` per batch entry of the leading dimensions of `indices`."""
    with scopes.name_scope(name, default_name="batch_scatter_update"):
        indices = convert_to_tensor(indices, name="indices")
        indices_shape = shape(indices)
        rank = indices.shape.rank
        if rank is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = expand_dims(indices, -1)
        parts = []
        for dim in range(rank - 1):  # the batch coordinates, broadcast over each entry
            dim_size = indices_shape[dim]
            to_broadcast = [1] * (rank + 1)
            to_broadcast[dim] = dim_size
            dim_range = reshape(range_(0, dim_size, 1), stack(to_broadcast))
            if dim_range.dtype is not nd_indices.dtype:
                dim_range = cast(dim_range, nd_indices.dtype)
            parts.append(multiply(dim_range, ones_like(nd_indices)))
        parts.append(nd_indices)
        final_indices = concat(parts, axis=-1)
        return scatter_nd_update(ref, final_indices, updates, use_locking=use_locking)
