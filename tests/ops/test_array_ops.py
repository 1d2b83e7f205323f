"""Array ops, table-driven (see harness.py); errors and graph structure as plain tests.

`__getitem__` / StridedSlice indexing has its own table in test_array_getitem.py.
"""

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.tape import GradientTape
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import array as A
from ndflow.ops.apply import constant_value
from ndflow.ops.op_def import REGISTRY
from tests.ops.harness import OpCase, check_forward, check_gradients, check_shapes, run_plan

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
    OpCase("identity", lambda x: A.identity(x), [_r(2, 3)], lambda x: x),
    OpCase("identity_n", lambda x, y: A.identity_n([x, y]), [_r(2), _r(3, 1)],
           lambda x, y: [x, y]),
    OpCase("placeholder_with_default", lambda x: A.placeholder_with_default(x, [None, 3]),
           [_r(2, 3)], lambda x: x),
    OpCase("ensure_shape", lambda x: A.ensure_shape(x, [None, 3]), [_r(2, 3)], lambda x: x),
    OpCase("stop_gradient_forward", lambda x: A.stop_gradient(x), [_r(4)], lambda x: x,
           grad=False),
    OpCase("zeros_like", lambda x: A.zeros_like(x), [_r(2, 3)], np.zeros_like),
    OpCase("ones_like", lambda x: A.ones_like(x), [_r(2, 3)], np.ones_like),
    OpCase("zeros_like_int", lambda x: A.zeros_like(x), [_i(1, 2, 3)], np.zeros_like,
           **_NO_FLOAT),
    OpCase("ones_like_dtype", lambda x: A.ones_like(x, dtype=tf.int32), [_r(2, 2)],
           lambda x: np.ones(x.shape, np.int32), grad=False),
    # Shape family
    OpCase("shape", lambda x: A.shape(x), [_r(2, 3)], lambda x: np.array(x.shape, np.int32),
           grad=False),
    OpCase("shape_int64", lambda x: A.shape(x, out_type=tf.int64), [_r(4, 1, 2)],
           lambda x: np.array(x.shape, np.int64), grad=False),
    OpCase("shape_n", lambda x, y: A.shape_n([x, y]), [_r(2, 3), _r(5)],
           lambda x, y: [np.array(x.shape, np.int32), np.array(y.shape, np.int32)], grad=False),
    OpCase("size", lambda x: A.size(x), [_r(2, 3)], lambda x: np.array(6, np.int32),
           grad=False),
    OpCase("rank", lambda x: A.rank(x), [_r(2, 3, 1)], lambda x: np.array(3, np.int32),
           grad=False),
    # Reshape family
    OpCase("reshape", lambda x: A.reshape(x, [3, -1]), [_r(2, 3)], lambda x: x.reshape(3, -1)),
    OpCase("reshape_scalar", lambda x: A.reshape(x, []), [_r(1, 1)], lambda x: x.reshape(())),
    OpCase("reshape_like", lambda x, y: A.reshape(x, A.shape(y)), [_r(6), _r(2, 3)],
           lambda x, y: x.reshape(y.shape), grad=(0,)),
    OpCase("reshape_int", lambda x: A.reshape(x, [2, 2]), [_i(1, 2, 3, 4)],
           lambda x: x.reshape(2, 2), **_NO_FLOAT),
    OpCase("expand_dims", lambda x: A.expand_dims(x, 1), [_r(2, 3)],
           lambda x: np.expand_dims(x, 1)),
    OpCase("expand_dims_neg", lambda x: A.expand_dims(x, -1), [_r(2, 3)],
           lambda x: np.expand_dims(x, -1)),
    OpCase("squeeze_all", lambda x: A.squeeze(x), [_r(1, 3, 1)], np.squeeze,
           static_shape_exact=True),
    OpCase("squeeze_axis", lambda x: A.squeeze(x, [-1]), [_r(1, 3, 1)],
           lambda x: np.squeeze(x, -1)),
    OpCase("transpose_default", lambda x: A.transpose(x), [_r(2, 3, 4)], np.transpose),
    OpCase("transpose_perm", lambda x: A.transpose(x, [1, 2, 0]), [_r(2, 3, 4)],
           lambda x: np.transpose(x, [1, 2, 0])),
    OpCase("transpose_int", lambda x: A.transpose(x), [np.arange(6, dtype=np.int64).reshape(2, 3)],
           np.transpose, **_NO_FLOAT),
    OpCase("invert_permutation", lambda p: A.invert_permutation(p), [_i(2, 0, 3, 1)],
           lambda p: np.argsort(p).astype(np.int32), **_NO_FLOAT),
    # Pack / concat / slice
    OpCase("stack", lambda x, y: A.stack([x, y]), [_r(2, 3), _r(2, 3)],
           lambda x, y: np.stack([x, y])),
    OpCase("stack_axis", lambda x, y: A.stack([x, y], axis=-1), [_r(2, 3), _r(2, 3)],
           lambda x, y: np.stack([x, y], -1)),
    OpCase("unstack", lambda x: A.unstack(x, num=3), [_r(3, 2)], lambda x: list(x)),
    OpCase("unstack_axis", lambda x: A.unstack(x, num=2, axis=1), [_r(3, 2)], lambda x: list(x.T)),
    OpCase("unstack_one", lambda x: A.unstack(x, num=1, axis=1), [_r(3, 1)],
           lambda x: [x[:, 0]]),
    OpCase("concat0", lambda x, y: A.concat([x, y], 0), [_r(2, 3), _r(1, 3)],
           lambda x, y: np.concatenate([x, y], 0)),
    OpCase("concat_neg", lambda x, y, z: A.concat([x, y, z], -1),
           [_r(2, 1), _r(2, 3), _r(2, 2)], lambda x, y, z: np.concatenate([x, y, z], -1)),
    OpCase("concat_one", lambda x: A.concat([x], 0), [_r(2)], lambda x: x),
    OpCase("concat_int", lambda x, y: A.concat([x, y], 0), [_i(1, 2), _i(3)],
           lambda x, y: np.concatenate([x, y]), **_NO_FLOAT),
    OpCase("slice", lambda x: A.slice(x, [1, 0], [2, -1]), [_r(3, 4)], lambda x: x[1:3, :]),
    OpCase("strided_slice", lambda x: A.strided_slice(x, [0, 3], [2, 0], [1, -2]),
           [_r(3, 4)], lambda x: x[0:2, 3:0:-2]),
    OpCase("strided_slice_masks", lambda x: A.strided_slice(
        x, [1, 0, 2], [0, 0, 3], [1, 1, 1], begin_mask=0, end_mask=1, ellipsis_mask=0,
        new_axis_mask=2, shrink_axis_mask=4), [_r(3, 4)], lambda x: x[1:, None, 2]),
    # Fill / tile / broadcast / pad / range
    OpCase("fill", lambda v: A.fill([2, 3], v), [np.array(0.5)], lambda v: np.full((2, 3), v)),
    OpCase("zeros", lambda x: A.concat([A.zeros([1, 3], x.dtype), x], 0), [_r(2, 3)],
           lambda x: np.concatenate([np.zeros((1, 3)), x])),
    OpCase("ones_int", lambda: A.ones([2], tf.int32), [], lambda: np.ones(2, np.int32),
           **_NO_FLOAT),
    OpCase("zeros_dynamic", lambda x: A.zeros(A.shape(x), tf.float64), [_r(2, 3)],
           np.zeros_like, dtypes=(tf.float64,), grad=False),
    OpCase("tile", lambda x: A.tile(x, [2, 3]), [_r(2, 2)], lambda x: np.tile(x, [2, 3])),
    OpCase("tile_int", lambda x: A.tile(x, [2]), [_i(1, 2)], lambda x: np.tile(x, 2),
           **_NO_FLOAT),
    OpCase("broadcast_to", lambda x: A.broadcast_to(x, [4, 2, 3]), [_r(2, 1)],
           lambda x: np.broadcast_to(x, (4, 2, 3))),
    OpCase("pad", lambda x: A.pad(x, [[1, 0], [2, 1]]), [_r(2, 3)],
           lambda x: np.pad(x, [[1, 0], [2, 1]])),
    OpCase("pad_value", lambda x: A.pad(x, [[1, 1], [0, 2]], constant_values=2.5), [_r(2, 3)],
           lambda x: np.pad(x, [[1, 1], [0, 2]], constant_values=2.5)),
    OpCase("pad_reflect", lambda x: A.pad(x, [[1, 1], [2, 0]], "REFLECT"), [_r(3, 3)],
           lambda x: _mirror(x, [[1, 1], [2, 0]], "REFLECT")),
    OpCase("pad_symmetric", lambda x: A.pad(x, [[2, 1], [0, 3]], "SYMMETRIC"), [_r(2, 3)],
           lambda x: _mirror(x, [[2, 1], [0, 3]], "SYMMETRIC")),
    OpCase("range", lambda: A.range(2, 11, 3), [], lambda: np.arange(2, 11, 3, dtype=np.int32),
           **_NO_FLOAT),
    OpCase("range_neg", lambda: A.range(5, -2, -2), [], lambda: np.arange(5, -2, -2, np.int32),
           **_NO_FLOAT),
    OpCase("range_float", lambda: A.range(1, 2.5, 0.5), [],
           lambda: np.arange(1, 2.5, 0.5, dtype=np.float32), **_NO_FLOAT),
    OpCase("range_limit_only", lambda: A.range(4, dtype=tf.float64), [],
           lambda: np.arange(4.0), **_NO_FLOAT),
    # Gather / one_hot / segment sum / where
    OpCase("gather", lambda x, i: A.gather(x, i), [_r(5, 2), _i(4, 0, 4)],
           lambda x, i: x[i]),
    OpCase("gather_axis1_2d", lambda x, i: A.gather(x, i, axis=1), [_r(2, 4, 3),
                                                                    np.array([[0, 3], [1, 1]])],
           lambda x, i: np.take(x, i, axis=1)),
    OpCase("gather_axis_neg", lambda x: A.gather(x, 2, axis=-1), [_r(3, 4)],
           lambda x: x[:, 2]),
    OpCase("gather_int", lambda x, i: A.gather(x, i), [_i(5, 6, 7), _i(2, 0)],
           lambda x, i: x[i], **_NO_FLOAT),
    OpCase("one_hot", lambda i: A.one_hot(i, 4), [_i(0, 3, -1, 7)], lambda i: _one_hot(i, 4),
           **_NO_FLOAT),
    OpCase("one_hot_axis0", lambda i: A.one_hot(i, 3, axis=0, on_value=5, off_value=-1),
           [np.array([[0, 2], [1, 1]])],
           lambda i: (_one_hot(i, 3, 0) * 6 - 1).astype(np.int32), **_NO_FLOAT),
    OpCase("unsorted_segment_sum", lambda d, s: A.unsorted_segment_sum(d, s, 4),
           [_r(5, 2), _i(3, 0, -1, 3, 1)], lambda d, s: _segment_sum(d, s, 4)),
    OpCase("where", lambda c: A.where(c), [np.array([[True, False], [False, True]])],
           lambda c: np.argwhere(c), static_shape_exact=False, **_NO_FLOAT),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward(case):
    check_forward(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_shape_inference(case):
    check_shapes(case)


def _needs_math_ops(case):
    return case.id == "unsorted_segment_sum" and not {"Maximum", "Cast"} <= set(REGISTRY)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    if _needs_math_ops(case):
        pytest.skip("needs the math family's Maximum and Cast")
    check_gradients(case)


def test_stop_gradient_blocks_gradient():
    x = A.constant([1.0, 2.0])
    with GradientTape() as tape:
        tape.watch(x)
        y = A.stop_gradient(x) + x
    assert np.allclose(tape.gradient(y, x).numpy(), [1.0, 1.0])


# -- Errors: build time (ValueError with TF's shape-function wording) ----------------------------

def _graph_error(fn, match):
    with Graph().as_default():
        with pytest.raises(ValueError, match=match):
            fn()


X23 = np.arange(6.0).reshape(2, 3)

BUILD_ERRORS = [
    (lambda: A.reshape(A.constant(X23), [4]),
     r"Cannot reshape a tensor with 6 elements to shape \[4\] \(4 elements\) for "
     r"'\{\{node Reshape\}\} = Reshape"),
    (lambda: A.reshape(A.constant(X23), [-1, 4]),
     "Dimension size must be evenly divisible by 4 but is 6"),
    (lambda: A.concat([A.constant(X23), A.zeros([3, 2], tf.float64)], 0),
     r"Dimension 0 in both shapes must be equal, but are 3 and 2. Shapes are \[3\] and \[2\]"),
    (lambda: A.concat([A.constant(X23), A.zeros([3], tf.float64)], 0),
     "Shape must be rank 2 but is rank 1"),
    (lambda: A.concat([A.constant(X23)] * 2, 2), "Shape must be at least rank 3 but is rank 2"),
    (lambda: A.transpose(A.constant(X23), [0, 2]), "perm dim 2 is out of range of input rank 2"),
    (lambda: A.transpose(A.constant(X23), [0, 1, 2]), "Dimension must be 2 but is 3"),
    (lambda: A.squeeze(A.constant(X23), [0]),
     r"Can not squeeze dim\[0\], expected a dimension of 1, got 2"),
    (lambda: A.squeeze(A.constant(X23), [3]), r"squeeze_dims\[0\] not in \[-2,2\)"),
    (lambda: A.expand_dims(A.constant(X23), 4), r"dim 4 not in the interval \[-3, 2\]"),
    (lambda: A.stack([A.constant(X23), A.zeros([3, 2], tf.float64)]),
     "Dimension 0 in both shapes must be equal, but are 2 and 3"),
    (lambda: A.stack([A.constant(X23)] * 2, axis=3), r"Argument `axis` = 3 not in range"),
    (lambda: A.unstack(A.placeholder(tf.float32, [None, 3])),
     r"Cannot infer argument `num` from shape \(None, 3\)"),
    (lambda: A.slice(A.constant(X23), [0], [1]), "Shape must be rank 1 but is rank 2"),
    (lambda: A.slice(A.constant(X23), [1, 0], [2, 1]),
     r"Expected size\[0\] in \[0, 1\], but got 2"),
    (lambda: A.constant(X23)[5], "slice index 5 of dimension 0 out of bounds"),
    (lambda: A.constant(X23)[0, 0, 0],
     "Index out of range using input dim 2; input has only 2 dims"),
    (lambda: A.tile(A.constant(X23), [1]), "Shape must be rank 2 but is rank 1 for "
     r"'\{\{node Tile\}\}"),
    (lambda: A.broadcast_to(A.constant(X23), [4, 3]), "Dimensions must be equal, but are 2 and 4"),
    (lambda: A.broadcast_to(A.constant(X23), [3]), "Shape must be at most rank 1 but is rank 2"),
    (lambda: A.fill([2, -1], 1.0), "Fill dimensions must be >= 0"),
    (lambda: A.gather(A.constant(X23), [0], axis=2), "Shape must be at least rank 3 but is rank 2"),
    (lambda: A.pad(A.constant(X23), [[1, 1]]), "Shape must be rank 1 but is rank 2"),
    (lambda: A.pad(A.constant(X23), [[1, 1], [0, -1]]), "Paddings must be non-negative"),
    (lambda: A.range(0, 5, 0), "Requires delta != 0"),
    (lambda: A.range(5, 0, 1), "Requires start <= limit when delta > 0: 5/0"),
    (lambda: A.ensure_shape(A.constant(X23), [3, 3]),
     "Dimension 0 in both shapes must be equal, but are 3 and 2"),
]


@pytest.mark.parametrize("fn,match", BUILD_ERRORS, ids=[m[:40] for _, m in BUILD_ERRORS])
def test_build_time_errors(fn, match):
    _graph_error(fn, match)


# -- Errors: run time (InvalidArgumentError from the kernels, naming the op) ---------------------

RUN_ERRORS = [
    (lambda x: A.reshape(x, [4]), X23,
     "Input to reshape is a tensor with 6 values, but the requested shape has 4", "Reshape"),
    (lambda x: A.reshape(x, [-1, 4]), X23, "the requested shape requires a multiple of 4",
     "Reshape"),
    (lambda x: A.gather(x, [7]), np.arange(5.0), r"indices\[0\] = 7 is not in \[0, 5\)",
     "GatherV2"),
    (lambda x: A.gather(x, [[1, -1]]), np.arange(5.0),
     r"indices\[0,1\] = -1 is not in \[0, 5\)", "GatherV2"),
    (lambda x: x[-5], X23, "slice index -3 of dimension 0 out of bounds.", "StridedSlice"),
    (lambda x: A.slice(x, [1, 1], [2, 1]), X23, r"Expected size\[0\] in \[0, 1\], but got 2",
     "Slice"),
    (lambda x: A.squeeze(x, [0]), X23, r"Can not squeeze dim\[0\]", "Squeeze"),
    (lambda x: A.unstack(x, num=3), X23, "Input shape axis 0 must equal 3", "Unpack"),
    (lambda x: A.stack([x, x[0]]), X23, "Shapes of all inputs must match", "Pack"),
    (lambda x: A.concat([x, x[0]], 0), X23, "ConcatOp : Ranks of all input tensors should match",
     "ConcatV2"),
    (lambda x: A.broadcast_to(x, [4, 3]), X23, r"Incompatible shapes: \[2,3\] vs. \[4,3\]",
     "BroadcastTo"),
    (lambda x: A.tile(x, [1]), X23, "Expected multiples argument to be a vector of length 2",
     "Tile"),
    (lambda x: A.pad(x, [[3, 0], [0, 0]], "REFLECT"), X23,
     "paddings must be less than the dimension size: 3, 0 not less than 2", "MirrorPad"),
    (lambda x: A.ensure_shape(x, [3, 3]), X23, "is not compatible with expected shape",
     "EnsureShape"),
    (lambda x: A.unsorted_segment_sum(x, [0, 7], 3), X23,
     r"segment_ids\[1\] = 7 is out of range \[0, 3\)", "UnsortedSegmentSum"),
]


@pytest.mark.parametrize("fn,x,match,op", RUN_ERRORS, ids=[r[3] + "-" + r[2][:20]
                                                            for r in RUN_ERRORS])
def test_eager_run_time_errors(fn, x, match, op):
    with pytest.raises(InvalidArgumentError, match=match) as info:
        fn(A.constant(x))
    assert f"[Op:{op}]" in str(info.value)


@pytest.mark.parametrize("fn,x,match,op", RUN_ERRORS, ids=[r[3] + "-" + r[2][:20]
                                                            for r in RUN_ERRORS])
def test_graph_run_time_errors(fn, x, match, op):
    g = Graph()
    with g.as_default():
        p = A.placeholder(tf.float64, None)  # unknown rank: no build-time check can fire
        out = fn(p)
    with pytest.raises(InvalidArgumentError, match=match) as info:
        run_plan(g, [p], out if isinstance(out, list) else [out], [x])
    assert "[[{{node " in str(info.value)
    assert info.value.op is not None and info.value.op.type == op


# -- Graph structure: TF's static shortcuts and node layout --------------------------------------

def test_static_shapes_fold_to_constants_as_tf():
    with Graph().as_default():
        x = A.constant(X23)
        p = A.placeholder(tf.float32, [None, 3])
        assert A.shape(x).op.type == "Const" and A.rank(p).op.type == "Const"
        assert A.shape(p).op.type == "Shape" and A.size(p).op.type == "Size"
        assert constant_value(A.shape(x)).tolist() == [2, 3]
        assert A.zeros([2, 3]).op.type == "Const" and A.ones([50, 50]).op.type == "Fill"
        z = A.zeros(A.shape(p))
        assert z.op.type == "Fill" and z.shape.as_list() == [None, 3]
        assert A.zeros_like(x, dtype=tf.int32).op.type == "Const"
        assert A.concat([x], 0).op.type == "Identity"
        assert A.pad(x, [[1, 1], [0, 0]]).op.type == "Pad"
        assert A.pad(x, [[1, 1], [0, 0]], constant_values=2.0).op.type == "PadV2"
        grp = A.group(x, p, name="grp")
        assert grp.type == "NoOp" and grp.name == "grp"
        assert {o.name for o in grp.control_inputs} == {x.op.name, p.op.name}
        assert A.no_op().type == "NoOp"


def test_partial_shapes_through_shape_tensors():
    with Graph().as_default():
        p = A.placeholder(tf.float32, [None, 3])
        assert A.reshape(p, [-1, 2]).shape.as_list() == [None, 2]
        assert A.reshape(p, A.shape(p)[0:1]).shape.as_list() == [None]
        assert A.reshape(p, [A.shape(p)[0], 3, 1]).shape.as_list() == [None, 3, 1]
        assert A.reshape(p, A.stack([-1, A.shape(p)[1]])).shape.as_list() == [None, 3]
        assert A.broadcast_to(1.0, A.shape(p)).shape.as_list() == [None, 3]
        assert A.fill(A.concat([A.shape(p), [2]], 0), 0.0).shape.as_list() == [None, 3, 2]
        assert A.tile(p, [2, 2]).shape.as_list() == [None, 6]
        assert constant_value(A.shape(A.constant(X23))[-1]) == 3


def test_getitem_node_layout_matches_tf():
    with Graph().as_default():
        p = A.placeholder(tf.float32, [None, 3, 4])
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
        z = p[A.constant(0)]
        assert z.op.name == "strided_slice_1" and z.op.inputs[1].op.type == "Pack"
        assert z.shape.as_list() == [3, 4]
