"""Array ops, table-driven (see harness.py); errors and graph structure as plain tests.

`__getitem__` / StridedSlice indexing has its own table in test_array_getitem.py.
"""

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.tape import GradientTape
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import array_gather, array_transpose
from ndflow.ops.apply import constant_value
from tests.ops.harness import OpCase, run_plan

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _i(*values):
    return np.array(values, np.int32)


def _mirror(x, pads, mode):
    return np.pad(x, pads, mode="reflect" if mode == "REFLECT" else "symmetric")


def _one_hot(ind, depth, axis=-1):
    out = (ind[..., None] == np.arange(depth)).astype(np.float64)
    return np.moveaxis(out, -1, axis)


def _segment_sum(data, ids, n):
    out = np.zeros((n,) + data.shape[ids.ndim:])
    for pos, i in np.ndenumerate(ids):
        if i >= 0:
            out[i] += data[pos]
    return out


_INT = (tf.float64,)   # dtype list for cases whose inputs are all integers
_NO_FLOAT = dict(dtypes=_INT, low_precision=False, grad=False)

CASES = [
    # Identity family
    OpCase("identity", lambda x: tf.identity(x), [_r(2, 3)], lambda x: x),
    OpCase("identity_n", lambda x, y: tf.identity_n([x, y]), [_r(2), _r(3, 1)],
           lambda x, y: [x, y]),
    OpCase("placeholder_with_default",
           lambda x: tf.compat.v1.placeholder_with_default(x, [None, 3]), [_r(2, 3)], lambda x: x),
    OpCase("ensure_shape", lambda x: tf.ensure_shape(x, [None, 3]), [_r(2, 3)], lambda x: x),
    OpCase("stop_gradient_forward", lambda x: tf.stop_gradient(x), [_r(4)], lambda x: x,
           grad=False),
    OpCase("zeros_like", lambda x: tf.zeros_like(x), [_r(2, 3)], np.zeros_like),
    OpCase("ones_like", lambda x: tf.ones_like(x), [_r(2, 3)], np.ones_like),
    OpCase("zeros_like_int", lambda x: tf.zeros_like(x), [_i(1, 2, 3)], np.zeros_like,
           **_NO_FLOAT),
    OpCase("ones_like_dtype", lambda x: tf.ones_like(x, dtype=tf.int32), [_r(2, 2)],
           lambda x: np.ones(x.shape, np.int32), grad=False),
    # Shape family
    OpCase("shape", lambda x: tf.shape(x), [_r(2, 3)], lambda x: np.array(x.shape, np.int32),
           grad=False),
    OpCase("shape_int64", lambda x: tf.shape(x, out_type=tf.int64), [_r(4, 1, 2)],
           lambda x: np.array(x.shape, np.int64), grad=False),
    OpCase("shape_n", lambda x, y: tf.shape_n([x, y]), [_r(2, 3), _r(5)],
           lambda x, y: [np.array(x.shape, np.int32), np.array(y.shape, np.int32)], grad=False),
    OpCase("size", lambda x: tf.size(x), [_r(2, 3)], lambda x: np.array(6, np.int32),
           grad=False),
    OpCase("rank", lambda x: tf.rank(x), [_r(2, 3, 1)], lambda x: np.array(3, np.int32),
           grad=False),
    # Reshape family
    OpCase("reshape", lambda x: tf.reshape(x, [3, -1]), [_r(2, 3)], lambda x: x.reshape(3, -1)),
    OpCase("reshape_scalar", lambda x: tf.reshape(x, []), [_r(1, 1)], lambda x: x.reshape(())),
    OpCase("reshape_like", lambda x, y: tf.reshape(x, tf.shape(y)), [_r(6), _r(2, 3)],
           lambda x, y: x.reshape(y.shape), grad=(0,)),
    OpCase("reshape_int", lambda x: tf.reshape(x, [2, 2]), [_i(1, 2, 3, 4)],
           lambda x: x.reshape(2, 2), **_NO_FLOAT),
    OpCase("expand_dims", lambda x: tf.expand_dims(x, 1), [_r(2, 3)],
           lambda x: np.expand_dims(x, 1)),
    OpCase("expand_dims_neg", lambda x: tf.expand_dims(x, -1), [_r(2, 3)],
           lambda x: np.expand_dims(x, -1)),
    OpCase("squeeze_all", lambda x: tf.squeeze(x), [_r(1, 3, 1)], np.squeeze,
           static_shape_exact=True),
    OpCase("squeeze_axis", lambda x: tf.squeeze(x, [-1]), [_r(1, 3, 1)],
           lambda x: np.squeeze(x, -1)),
    OpCase("transpose_default", lambda x: tf.transpose(x), [_r(2, 3, 4)], np.transpose),
    OpCase("transpose_perm", lambda x: tf.transpose(x, [1, 2, 0]), [_r(2, 3, 4)],
           lambda x: np.transpose(x, [1, 2, 0])),
    OpCase("transpose_int", lambda x: tf.transpose(x), [np.arange(6, dtype=np.int64).reshape(2, 3)],
           np.transpose, **_NO_FLOAT),
    OpCase("invert_permutation", lambda p: array_transpose.invert_permutation(p), [_i(2, 0, 3, 1)],
           lambda p: np.argsort(p).astype(np.int32), **_NO_FLOAT),
    # Pack / concat / slice
    OpCase("stack", lambda x, y: tf.stack([x, y]), [_r(2, 3), _r(2, 3)],
           lambda x, y: np.stack([x, y])),
    OpCase("stack_axis", lambda x, y: tf.stack([x, y], axis=-1), [_r(2, 3), _r(2, 3)],
           lambda x, y: np.stack([x, y], -1)),
    OpCase("unstack", lambda x: tf.unstack(x, num=3), [_r(3, 2)], lambda x: list(x)),
    OpCase("unstack_axis", lambda x: tf.unstack(x, num=2, axis=1), [_r(3, 2)], lambda x: list(x.T)),
    OpCase("unstack_one", lambda x: tf.unstack(x, num=1, axis=1), [_r(3, 1)],
           lambda x: [x[:, 0]]),
    OpCase("concat0", lambda x, y: tf.concat([x, y], 0), [_r(2, 3), _r(1, 3)],
           lambda x, y: np.concatenate([x, y], 0)),
    OpCase("concat_neg", lambda x, y, z: tf.concat([x, y, z], -1),
           [_r(2, 1), _r(2, 3), _r(2, 2)], lambda x, y, z: np.concatenate([x, y, z], -1)),
    OpCase("concat_one", lambda x: tf.concat([x], 0), [_r(2)], lambda x: x),
    OpCase("concat_int", lambda x, y: tf.concat([x, y], 0), [_i(1, 2), _i(3)],
           lambda x, y: np.concatenate([x, y]), **_NO_FLOAT),
    OpCase("slice", lambda x: tf.slice(x, [1, 0], [2, -1]), [_r(3, 4)], lambda x: x[1:3, :]),
    OpCase("strided_slice", lambda x: tf.strided_slice(x, [0, 3], [2, 0], [1, -2]),
           [_r(3, 4)], lambda x: x[0:2, 3:0:-2]),
    OpCase("strided_slice_masks", lambda x: tf.strided_slice(
        x, [1, 0, 2], [0, 0, 3], [1, 1, 1], begin_mask=0, end_mask=1, ellipsis_mask=0,
        new_axis_mask=2, shrink_axis_mask=4), [_r(3, 4)], lambda x: x[1:, None, 2]),
    # Fill / tile / broadcast / pad / range
    OpCase("fill", lambda v: tf.fill([2, 3], v), [np.array(0.5)], lambda v: np.full((2, 3), v)),
    OpCase("zeros", lambda x: tf.concat([tf.zeros([1, 3], x.dtype), x], 0), [_r(2, 3)],
           lambda x: np.concatenate([np.zeros((1, 3)), x])),
    OpCase("ones_int", lambda: tf.ones([2], tf.int32), [], lambda: np.ones(2, np.int32),
           **_NO_FLOAT),
    OpCase("zeros_dynamic", lambda x: tf.zeros(tf.shape(x), tf.float64), [_r(2, 3)],
           np.zeros_like, dtypes=(tf.float64,), grad=False),
    OpCase("tile", lambda x: tf.tile(x, [2, 3]), [_r(2, 2)], lambda x: np.tile(x, [2, 3])),
    OpCase("tile_int", lambda x: tf.tile(x, [2]), [_i(1, 2)], lambda x: np.tile(x, 2),
           **_NO_FLOAT),
    OpCase("broadcast_to", lambda x: tf.broadcast_to(x, [4, 2, 3]), [_r(2, 1)],
           lambda x: np.broadcast_to(x, (4, 2, 3))),
    OpCase("pad", lambda x: tf.pad(x, [[1, 0], [2, 1]]), [_r(2, 3)],
           lambda x: np.pad(x, [[1, 0], [2, 1]])),
    OpCase("pad_value", lambda x: tf.pad(x, [[1, 1], [0, 2]], constant_values=2.5), [_r(2, 3)],
           lambda x: np.pad(x, [[1, 1], [0, 2]], constant_values=2.5)),
    OpCase("pad_reflect", lambda x: tf.pad(x, [[1, 1], [2, 0]], "REFLECT"), [_r(3, 3)],
           lambda x: _mirror(x, [[1, 1], [2, 0]], "REFLECT")),
    OpCase("pad_symmetric", lambda x: tf.pad(x, [[2, 1], [0, 3]], "SYMMETRIC"), [_r(2, 3)],
           lambda x: _mirror(x, [[2, 1], [0, 3]], "SYMMETRIC")),
    OpCase("range", lambda: tf.range(2, 11, 3), [], lambda: np.arange(2, 11, 3, dtype=np.int32),
           **_NO_FLOAT),
    OpCase("range_neg", lambda: tf.range(5, -2, -2), [], lambda: np.arange(5, -2, -2, np.int32),
           **_NO_FLOAT),
    OpCase("range_float", lambda: tf.range(1, 2.5, 0.5), [],
           lambda: np.arange(1, 2.5, 0.5, dtype=np.float32), **_NO_FLOAT),
    OpCase("range_limit_only", lambda: tf.range(4, dtype=tf.float64), [],
           lambda: np.arange(4.0), **_NO_FLOAT),
    # Gather / one_hot / segment sum / where
    OpCase("gather", lambda x, i: tf.gather(x, i), [_r(5, 2), _i(4, 0, 4)],
           lambda x, i: x[i]),
    OpCase("gather_axis1_2d", lambda x, i: tf.gather(x, i, axis=1), [_r(2, 4, 3),
                                                                    np.array([[0, 3], [1, 1]])],
           lambda x, i: np.take(x, i, axis=1)),
    OpCase("gather_axis_neg", lambda x: tf.gather(x, 2, axis=-1), [_r(3, 4)],
           lambda x: x[:, 2]),
    OpCase("gather_int", lambda x, i: tf.gather(x, i), [_i(5, 6, 7), _i(2, 0)],
           lambda x, i: x[i], **_NO_FLOAT),
    OpCase("one_hot", lambda i: tf.one_hot(i, 4), [_i(0, 3, -1, 7)], lambda i: _one_hot(i, 4),
           **_NO_FLOAT),
    OpCase("one_hot_axis0", lambda i: tf.one_hot(i, 3, axis=0, on_value=5, off_value=-1),
           [np.array([[0, 2], [1, 1]])],
           lambda i: (_one_hot(i, 3, 0) * 6 - 1).astype(np.int32), **_NO_FLOAT),
    OpCase("unsorted_segment_sum", lambda d, s: array_gather.unsorted_segment_sum(d, s, 4),
           [_r(5, 2), _i(3, 0, -1, 3, 1)], lambda d, s: _segment_sum(d, s, 4)),
    OpCase("where", lambda c: tf.where(c), [np.array([[True, False], [False, True]])],
           lambda c: np.argwhere(c), static_shape_exact=False, **_NO_FLOAT),
]



def test_stop_gradient_blocks_gradient():
    x = tf.constant([1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = tf.stop_gradient(x) + x
    assert np.allclose(tape.gradient(y, x).numpy(), [1.0, 1.0])


# -- Errors: build time (ValueError with TF's shape-function wording) ----------------------------

def _graph_error(fn, match):
    with Graph().as_default():
        with pytest.raises(ValueError, match=match):
            fn()


X23 = np.arange(6.0).reshape(2, 3)

BUILD_ERRORS = [
    (lambda: tf.reshape(tf.constant(X23), [4]),
     r"Cannot reshape a tensor with 6 elements to shape \[4\] \(4 elements\) for "
     r"'\{\{node Reshape\}\} = Reshape"),
    (lambda: tf.reshape(tf.constant(X23), [-1, 4]),
     "Dimension size must be evenly divisible by 4 but is 6"),
    (lambda: tf.concat([tf.constant(X23), tf.zeros([3, 2], tf.float64)], 0),
     r"Dimension 0 in both shapes must be equal, but are 3 and 2. Shapes are \[3\] and \[2\]"),
    (lambda: tf.concat([tf.constant(X23), tf.zeros([3], tf.float64)], 0),
     "Shape must be rank 2 but is rank 1"),
    (lambda: tf.concat([tf.constant(X23)] * 2, 2), "Shape must be at least rank 3 but is rank 2"),
    (lambda: tf.transpose(tf.constant(X23), [0, 2]), "perm dim 2 is out of range of input rank 2"),
    (lambda: tf.transpose(tf.constant(X23), [0, 1, 2]), "Dimension must be 2 but is 3"),
    (lambda: tf.squeeze(tf.constant(X23), [0]),
     r"Can not squeeze dim\[0\], expected a dimension of 1, got 2"),
    (lambda: tf.squeeze(tf.constant(X23), [3]), r"squeeze_dims\[0\] not in \[-2,2\)"),
    (lambda: tf.expand_dims(tf.constant(X23), 4), r"dim 4 not in the interval \[-3, 2\]"),
    (lambda: tf.stack([tf.constant(X23), tf.zeros([3, 2], tf.float64)]),
     "Dimension 0 in both shapes must be equal, but are 2 and 3"),
    (lambda: tf.stack([tf.constant(X23)] * 2, axis=3), r"Argument `axis` = 3 not in range"),
    (lambda: tf.unstack(tf.compat.v1.placeholder(tf.float32, [None, 3])),
     r"Cannot infer argument `num` from shape \(None, 3\)"),
    (lambda: tf.slice(tf.constant(X23), [0], [1]), "Shape must be rank 1 but is rank 2"),
    (lambda: tf.constant(X23)[5], "slice index 5 of dimension 0 out of bounds"),
    (lambda: tf.constant(X23)[0, 0, 0],
     "Index out of range using input dim 2; input has only 2 dims"),
    (lambda: tf.tile(tf.constant(X23), [1]), "Shape must be rank 2 but is rank 1 for "
     r"'\{\{node Tile\}\}"),
    (lambda: tf.broadcast_to(tf.constant(X23), [4, 3]),
     "Dimensions must be equal, but are 2 and 4"),
    (lambda: tf.broadcast_to(tf.constant(X23), [3]), "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.fill([2, -1], 1.0), "Fill dimensions must be >= 0"),
    (lambda: tf.gather(tf.constant(X23), [0], axis=2),
     "Shape must be at least rank 3 but is rank 2"),
    (lambda: tf.pad(tf.constant(X23), [[1, 1]]), "Shape must be rank 1 but is rank 2"),
    (lambda: tf.pad(tf.constant(X23), [[1, 1], [0, -1]]), "Paddings must be non-negative"),
    (lambda: tf.range(0, 5, 0), "Requires delta != 0"),
    (lambda: tf.range(5, 0, 1), "Requires start <= limit when delta > 0: 5/0"),
    (lambda: tf.ensure_shape(tf.constant(X23), [3, 3]),
     "Dimension 0 in both shapes must be equal, but are 3 and 2"),
]


@pytest.mark.parametrize("fn,match", BUILD_ERRORS, ids=[m[:40] for _, m in BUILD_ERRORS])
def test_build_time_errors(fn, match):
    _graph_error(fn, match)


# -- Errors: run time (InvalidArgumentError from the kernels, naming the op) ---------------------

RUN_ERRORS = [
    (lambda x: tf.reshape(x, [4]), X23,
     "Input to reshape is a tensor with 6 values, but the requested shape has 4", "Reshape"),
    (lambda x: tf.reshape(x, [-1, 4]), X23, "the requested shape requires a multiple of 4",
     "Reshape"),
    (lambda x: tf.gather(x, [7]), np.arange(5.0), r"indices\[0\] = 7 is not in \[0, 5\)",
     "GatherV2"),
    (lambda x: tf.gather(x, [[1, -1]]), np.arange(5.0),
     r"indices\[0,1\] = -1 is not in \[0, 5\)", "GatherV2"),
    (lambda x: x[-5], X23, "slice index -3 of dimension 0 out of bounds.", "StridedSlice"),
    (lambda x: tf.slice(x, [1, 1], [2, 1]), X23, r"Expected size\[0\] in \[0, 1\], but got 2",
     "Slice"),
    (lambda x: tf.squeeze(x, [0]), X23, r"Can not squeeze dim\[0\]", "Squeeze"),
    (lambda x: tf.unstack(x, num=3), X23, "Input shape axis 0 must equal 3", "Unpack"),
    (lambda x: tf.stack([x, x[0]]), X23, "Shapes of all inputs must match", "Pack"),
    (lambda x: tf.concat([x, x[0]], 0), X23, "ConcatOp : Ranks of all input tensors should match",
     "ConcatV2"),
    (lambda x: tf.broadcast_to(x, [4, 3]), X23, r"Incompatible shapes: \[2,3\] vs. \[4,3\]",
     "BroadcastTo"),
    (lambda x: tf.tile(x, [1]), X23, "Expected multiples argument to be a vector of length 2",
     "Tile"),
    (lambda x: tf.pad(x, [[3, 0], [0, 0]], "REFLECT"), X23,
     "paddings must be less than the dimension size: 3, 0 not less than 2", "MirrorPad"),
    (lambda x: tf.ensure_shape(x, [3, 3]), X23, "is not compatible with expected shape",
     "EnsureShape"),
    (lambda x: array_gather.unsorted_segment_sum(x, [0, 7], 3), X23,
     r"segment_ids\[1\] = 7 is out of range \[0, 3\)", "UnsortedSegmentSum"),
]


@pytest.mark.parametrize("fn,x,match,op", RUN_ERRORS, ids=[r[3] + "-" + r[2][:20]
                                                            for r in RUN_ERRORS])
def test_eager_run_time_errors(fn, x, match, op):
    with pytest.raises(InvalidArgumentError, match=match) as info:
        fn(tf.constant(x))
    assert f"[Op:{op}]" in str(info.value)


@pytest.mark.parametrize("fn,x,match,op", RUN_ERRORS, ids=[r[3] + "-" + r[2][:20]
                                                            for r in RUN_ERRORS])
def test_graph_run_time_errors(fn, x, match, op):
    g = Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float64, None)  # unknown rank: no build-time check can fire
        out = fn(p)
    with pytest.raises(InvalidArgumentError, match=match) as info:
        run_plan(g, [p], out if isinstance(out, list) else [out], [x])
    assert "[[{{node " in str(info.value)
    assert info.value.op is not None and info.value.op.type == op


# -- Graph structure: TF's static shortcuts and node layout --------------------------------------

def test_static_shapes_fold_to_constants_as_tf():
    with Graph().as_default():
        x = tf.constant(X23)
        p = tf.compat.v1.placeholder(tf.float32, [None, 3])
        assert tf.shape(x).op.type == "Const" and tf.rank(p).op.type == "Const"
        assert tf.shape(p).op.type == "Shape" and tf.size(p).op.type == "Size"
        assert constant_value(tf.shape(x)).tolist() == [2, 3]
        assert tf.zeros([2, 3]).op.type == "Const" and tf.ones([50, 50]).op.type == "Fill"
        z = tf.zeros(tf.shape(p))
        assert z.op.type == "Fill" and z.shape.as_list() == [None, 3]
        assert tf.zeros_like(x, dtype=tf.int32).op.type == "Const"
        assert tf.concat([x], 0).op.type == "Identity"
        assert tf.pad(x, [[1, 1], [0, 0]]).op.type == "Pad"
        assert tf.pad(x, [[1, 1], [0, 0]], constant_values=2.0).op.type == "PadV2"
        grp = tf.group(x, p, name="grp")
        assert grp.type == "NoOp" and grp.name == "grp"
        assert {o.name for o in grp.control_inputs} == {x.op.name, p.op.name}
        assert tf.no_op().type == "NoOp"


def test_partial_shapes_through_shape_tensors():
    with Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None, 3])
        assert tf.reshape(p, [-1, 2]).shape.as_list() == [None, 2]
        assert tf.reshape(p, tf.shape(p)[0:1]).shape.as_list() == [None]
        assert tf.reshape(p, [tf.shape(p)[0], 3, 1]).shape.as_list() == [None, 3, 1]
        assert tf.reshape(p, tf.stack([-1, tf.shape(p)[1]])).shape.as_list() == [None, 3]
        assert tf.broadcast_to(1.0, tf.shape(p)).shape.as_list() == [None, 3]
        assert tf.fill(tf.concat([tf.shape(p), [2]], 0), 0.0).shape.as_list() == [None, 3, 2]
        assert tf.tile(p, [2, 2]).shape.as_list() == [None, 6]
        assert constant_value(tf.shape(tf.constant(X23))[-1]) == 3


def test_getitem_node_layout_matches_tf():
    with Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None, 3, 4])
        y = p[1:, None, ..., -1]
        op = y.op
        assert op.type == "StridedSlice" and op.name == "strided_slice"
        assert [t.op.name for t in op.inputs[1:]] == [
            "strided_slice/stack", "strided_slice/stack_1", "strided_slice/stack_2"]
        assert {k: op.attrs[k] for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                         "new_axis_mask", "shrink_axis_mask")} == {
            "begin_mask": 0, "end_mask": 1, "ellipsis_mask": 4, "new_axis_mask": 2,
            "shrink_axis_mask": 8}
        assert y.shape.as_list() == [None, 1, 3]
        z = p[tf.constant(0)]
        assert z.op.name == "strided_slice_1" and z.op.inputs[1].op.type == "Pack"
        assert z.shape.as_list() == [3, 4]


def test_slice_gradient_with_unknown_input_rank():
    """The padding of Slice's gradient is built from Rank(x) when the rank is unknown."""
    x_val = _r(3, 4)
    g = Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float64, None)
        begin = tf.compat.v1.placeholder(tf.int32, [None])
        y = tf.slice(x, begin, [2, 2])
        (dx,) = tf.compat.v1.gradients(tf.reduce_sum(y * y), [x])
        with tf.compat.v1.Session(graph=g) as sess:
            got = sess.run(dx, {x: x_val, begin: [1, 2]})
    want = np.zeros_like(x_val)
    want[1:3, 2:4] = 2 * x_val[1:3, 2:4]
    np.testing.assert_allclose(got, want)


def test_a_scalar_shape_is_one_dimension():
    """TF: tf.zeros(2) is [0, 0] (TensorShape(2) is (2,)), eagerly and in graphs, also for a
    scalar shape tensor."""
    assert tf.zeros(2).numpy().tolist() == [0.0, 0.0]
    assert tf.ones(tf.constant(3), tf.int32).numpy().tolist() == [1, 1, 1]
    assert tf.function(lambda: tf.zeros(2))().numpy().tolist() == [0.0, 0.0]
