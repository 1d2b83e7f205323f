"""Resource-variable ops (VarHandleOp, ReadVariableOp, Assign*VariableOp, ...): eager and
graph semantics, immutability of stored values, TF's error messages."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.autodiff.gradients import gradients
from ndflow.core import dtypes
from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.ops import state
from ndflow.ops.array_core import constant, placeholder
from ndflow.ops.reduction import reduce_sum
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import EAGER_CONTEXT, RuntimeContext

_n = iter(range(10**6))


def _handle(dtype=dtypes.float32, shape=(2,)):
    return state.var_handle_op(dtype, shape, shared_name=f"test_state_{next(_n)}")


def run(graph, fetches, ctx, targets=(), feeds=None):
    feeds = feeds or {}
    plan = Plan(graph, list(feeds), list(fetches), list(targets), ctx)
    vals = [torch.as_tensor(np.asarray(v)) for v in feeds.values()]
    return [o.numpy() if isinstance(o, torch.Tensor) else o for o in plan.run(vals)]


# -- OpDefs ------------------------------------------------------------------------------------

def test_opdefs_match_tf():
    assert state.VarHandleOp.is_stateful and state.ReadVariableOp.is_stateful
    assert set(state.VarHandleOp.attrs) >= {"container", "shared_name", "dtype", "shape",
                                            "allowed_devices"}
    assert state.AssignVariableOp.attrs["validate_shape"].default is False
    assert state.DestroyResourceOp.attrs["ignore_lookup_error"].default is True
    for od in (state.AssignVariableOp, state.AssignAddVariableOp, state.AssignSubVariableOp):
        assert [a.name for a in od.inputs] == ["resource", "value"] and od.outputs == []


# -- eager ---------------------------------------------------------------------------------------

def test_eager_assign_read_update():
    h = _handle()
    assert h.dtype is dtypes.resource and h.shape == TensorShape([])
    assert not state.var_is_initialized_op(h).numpy()
    state.assign_variable_op(h, constant([1.0, 2.0]))
    assert state.var_is_initialized_op(h).numpy()
    np.testing.assert_array_equal(state.read_variable_op(h, dtypes.float32).numpy(), [1, 2])
    state.assign_add_variable_op(h, constant([10.0, 10.0]))
    state.assign_sub_variable_op(h, constant([1.0, 0.5]))
    np.testing.assert_array_equal(state.read_variable_op(h, dtypes.float32).numpy(),
                                  [10.0, 11.5])


def test_values_are_immutable():
    h = _handle()
    state.assign_variable_op(h, constant([1.0, 2.0]))
    before = state.read_variable_op(h, dtypes.float32)
    state.assign_add_variable_op(h, constant([1.0, 1.0]))
    state.assign_variable_op(h, constant([7.0, 7.0]))
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0])   # an earlier read never changes


def test_assign_copies_numpy_backed_memory():
    h = _handle()
    arr = np.array([1.0, 2.0], np.float32)
    state.assign_variable_op(h, constant(arr))
    arr[:] = 99.0                                               # the user's array, mutated
    np.testing.assert_array_equal(state.read_variable_op(h, dtypes.float32).numpy(), [1, 2])


def test_read_uninitialized_is_failed_precondition():
    h = state.var_handle_op(dtypes.float32, [2], shared_name="never_assigned_var")
    with pytest.raises(FailedPreconditionError) as e:
        state.read_variable_op(h, dtypes.float32)
    msg = str(e.value)
    assert "Could not find variable never_assigned_var" in msg
    assert "it can also mean the variable is uninitialized" in msg
    assert "[Op:ReadVariableOp]" in msg


def test_wrong_dtype_errors_name_the_op():
    h = _handle()
    with pytest.raises(InvalidArgumentError,
                       match=r"Trying to assign variable with wrong dtype\. Expected float got "
                             r"int32 \[Op:AssignVariableOp\]"):
        state.assign_variable_op(h, constant([1, 2]))
    state.assign_variable_op(h, constant([1.0, 2.0]))
    with pytest.raises(InvalidArgumentError, match="Trying to read variable with wrong dtype. "
                                                   "Expected int32 got float"):
        state.read_variable_op(h, dtypes.int32)


def test_wrong_shape_errors_name_the_op():
    h = _handle(shape=(2,))
    with pytest.raises(InvalidArgumentError, match=r"wrong shape\. Expected \[2\] got \[3\] "
                                                   r"\[Op:AssignVariableOp\]"):
        state.assign_variable_op(h, constant([1.0, 2.0, 3.0]))
    state.assign_variable_op(h, constant([1.0, 2.0]))
    with pytest.raises(InvalidArgumentError,
                       match=r"Cannot update variable with shape \[2\] using a Tensor with shape "
                             r"\[3\], shapes must be equal\. \[Op:AssignAddVariableOp\]"):
        state.assign_add_variable_op(h, constant([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(state.read_variable_op(h, dtypes.float32).numpy(), [1, 2])


def test_unknown_declared_shape_allows_reshaping():
    h = state.var_handle_op(dtypes.float32, TensorShape(None), shared_name="reshapable_var")
    state.assign_variable_op(h, constant([1.0, 2.0]))
    state.assign_variable_op(h, constant([[1.0], [2.0], [3.0]]))
    assert state.read_variable_op(h, dtypes.float32).numpy().shape == (3, 1)


def test_destroy_resource_frees_storage():
    h = state.var_handle_op(dtypes.float32, [1], shared_name="to_destroy")
    state.assign_variable_op(h, constant([1.0]))
    assert ("", "to_destroy") in EAGER_CONTEXT.resources
    state.destroy_resource_op(h)
    assert ("", "to_destroy") not in EAGER_CONTEXT.resources
    with pytest.raises(FailedPreconditionError, match="has been deleted"):
        state.read_variable_op(h, dtypes.float32)


# -- graph ---------------------------------------------------------------------------------------

def _graph_var(shape=(2,), name="v"):
    g = Graph()
    with g.as_default():
        h = state.var_handle_op(dtypes.float32, shape, shared_name=name, name=name)
        x = placeholder(dtypes.float32, shape)
        init = state.assign_variable_op(h, x, name="init")
        add = state.assign_add_variable_op(h, x, name="add")
        read = state.read_variable_op(h, dtypes.float32)
        is_init = state.var_is_initialized_op(h)
    return g, h, x, init, add, read, is_init


def test_graph_ops_and_attrs():
    g, h, _, init, add, read, _ = _graph_var()
    assert h.op.type == "VarHandleOp" and h.op.name == "v"
    assert h.op.attrs["shared_name"] == "v" and h.op.attrs["container"] == ""
    assert h.op.attrs["dtype"] is dtypes.float32 and h.op.attrs["shape"] == TensorShape([2])
    assert init.type == "AssignVariableOp" and init.attrs["dtype"] is dtypes.float32
    assert read.op.type == "ReadVariableOp" and read.dtype is dtypes.float32
    assert read.shape == TensorShape([2])             # from the VarHandleOp's shape attr


def test_graph_run_and_separate_contexts():
    g, _, x, init, add, read, is_init = _graph_var()
    a, b = RuntimeContext(), RuntimeContext()
    assert run(g, [is_init], a)[0] == np.False_
    run(g, [], a, [init], {x: np.array([1.0, 2.0], np.float32)})
    run(g, [], b, [init], {x: np.array([5.0, 5.0], np.float32)})
    run(g, [], a, [add], {x: np.array([1.0, 1.0], np.float32)})
    np.testing.assert_array_equal(run(g, [read], a)[0], [2.0, 3.0])
    np.testing.assert_array_equal(run(g, [read], b)[0], [5.0, 5.0])
    assert run(g, [is_init], a)[0] == np.True_


def test_graph_uninitialized_read_names_node():
    g, *_, read, _ = _graph_var()
    with pytest.raises(FailedPreconditionError) as e:
        run(g, [read], RuntimeContext())
    assert "Could not find variable v" in str(e.value)
    assert "{{node ReadVariableOp}}" in str(e.value)


def test_graph_wrong_shape_assign_names_node():
    g, _, x, init, *_ = _graph_var()
    with g.as_default():
        y = placeholder(dtypes.float32, [None])
        bad = state.assign_variable_op(g.get_operation_by_name("v").outputs[0], y, name="bad")
    with pytest.raises(InvalidArgumentError, match=r"(?s)wrong shape.*\{\{node bad\}\}"):
        run(g, [], RuntimeContext(), [bad], {y: np.zeros(3, np.float32)})


def test_read_gradient_passes_to_handle():
    g = Graph()
    with g.as_default():
        h = state.var_handle_op(dtypes.float32, [3], shared_name="w", name="w")
        init = state.assign_variable_op(h, constant([1.0, 2.0, 3.0]))
        w = state.read_variable_op(h, dtypes.float32)
        loss = reduce_sum(w * w * constant([1.0, 10.0, 100.0]))
        (dh,) = gradients(loss, [h])
    ctx = RuntimeContext()
    run(g, [], ctx, [init])
    np.testing.assert_allclose(run(g, [dh], ctx)[0], [2.0, 40.0, 600.0])


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("ids,bad", [([[1, 2], [7, 3]], "indices[2] = 7"),
                                     ([[-1, 2]], "indices[0] = -1"), ([4, 0, 1], None)])
def test_resource_gather_rows_and_out_of_range_ids(id_dtype, ids, bad):
    """ResourceGather (an embedding's lookup) takes int32 and int64 ids of any rank as they
    are and names the first id outside the table, as TF's CPU kernel does."""
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    v = tf.Variable(table)
    lookup = tf.function(lambda i: tf.gather(v, i))
    if bad is None:
        got = lookup(tf.constant(np.array(ids, id_dtype)))
        np.testing.assert_array_equal(got.numpy(), table[np.array(ids)])
        return
    with pytest.raises(InvalidArgumentError, match=rf"{re.escape(bad)} is not in \[0, 5\)"):
        lookup(tf.constant(np.array(ids, id_dtype)))


def test_a_captured_variable_s_shape_is_known_as_tf_s_handle_data_makes_it():
    """In a tf.function a gather of a captured variable has its static shape, and the
    gather's gradient takes the variable's shape as a constant (TF's variable_shape reads
    the handle data); a variable of unknown shape keeps VariableShape."""
    table = tf.Variable(np.arange(40, dtype=np.float32).reshape(10, 4))
    loose = tf.Variable(np.ones((6, 2), np.float32), shape=tf.TensorShape(None))
    static = {}

    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            rows, other = tf.gather(table, ids), tf.gather(loose, ids)
            static["rows"], static["other"] = rows.shape, other.shape
            loss = tf.reduce_sum(rows * rows) + tf.reduce_sum(other)
        return tape.gradient(loss, [table, loose])

    ids = tf.constant([1, 3, 1])
    g_table, g_loose = step(ids)
    assert static["rows"].as_list() == [3, 4] and static["other"].rank is None
    dense = np.zeros((10, 4))
    np.add.at(dense, [1, 3, 1], 2.0 * np.arange(40).reshape(10, 4)[[1, 3, 1]])
    np.testing.assert_array_equal(tf.convert_to_tensor(g_table).numpy(), dense)
    np.testing.assert_array_equal(g_table.dense_shape.numpy(), [10, 4])
    np.testing.assert_array_equal(g_loose.dense_shape.numpy(), [6, 2])
    graph = step.get_concrete_function(ids).graph
    shapes = [op for op in graph.get_operations() if op.type == "VariableShape"]
    assert len(shapes) == 1 and shapes[0].inputs[0].shape.rank == 0   # the loose one only
