"""GatherNd / ScatterNd / TensorScatter* and the Python-built arrays (`tf.eye`,
`tf.linspace`, `tf.meshgrid`, `tf.sequence_mask`): table-driven against NumPy, gradients by
finite differences; errors as TF 2.21."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from tests.ops.harness import OpCase

rng = np.random.default_rng(9)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


_IDX2 = np.array([[0, 1], [2, 0], [1, 1]])
_IDX1 = np.array([[3], [0], [3]])  # a duplicate: scatter_nd sums it
_UNIQUE_IDX = np.array([[3], [0]])


def _np_scatter_nd(indices, updates, shape):
    out = np.zeros(shape)
    for i, u in zip(indices.reshape(-1, indices.shape[-1]),
                    updates.reshape((-1,) + tuple(shape[indices.shape[-1]:]))):
        out[tuple(i)] += u
    return out


def _np_tensor_scatter(t, indices, updates, fn):
    out = t.copy()
    for i, u in zip(indices.reshape(-1, indices.shape[-1]),
                    updates.reshape((-1,) + t.shape[indices.shape[-1]:])):
        out[tuple(i)] = fn(out[tuple(i)], u)
    return out


CASES = [
    OpCase("gather_nd_elements", lambda p: tf.gather_nd(p, _IDX2), [_r(3, 2)],
           lambda p: p[_IDX2[:, 0], _IDX2[:, 1]]),
    OpCase("gather_nd_slices_batched", lambda p: tf.gather_nd(p, _IDX1.reshape(3, 1, 1)),
           [_r(4, 2, 3)], lambda p: p[_IDX1.reshape(3, 1)]),
    OpCase("gather_nd_v1", lambda p: tf.compat.v1.gather_nd(p, [[1, 0, 2]]), [_r(2, 2, 3)],
           lambda p: p[[1], [0], [2]]),
    OpCase("scatter_nd_sums_duplicates", lambda u: tf.scatter_nd(_IDX1, u, [5, 2]),
           [_r(3, 2)], lambda u: _np_scatter_nd(_IDX1, u, (5, 2))),
    OpCase("tensor_scatter_nd_update", lambda t, u: tf.tensor_scatter_nd_update(t, _UNIQUE_IDX, u),
           [_r(4, 2), _r(2, 2)], lambda t, u: _np_tensor_scatter(t, _UNIQUE_IDX, u,
                                                                  lambda a, b: b)),
    OpCase("tensor_scatter_nd_add", lambda t, u: tf.tensor_scatter_nd_add(t, _IDX1, u),
           [_r(4, 2), _r(3, 2)], lambda t, u: _np_tensor_scatter(t, _IDX1, u, np.add)),
    OpCase("tensor_scatter_nd_sub", lambda t, u: tf.tensor_scatter_nd_sub(t, _IDX1, u),
           [_r(4, 2), _r(3, 2)], lambda t, u: _np_tensor_scatter(t, _IDX1, u, np.subtract)),
    OpCase("tensor_scatter_nd_max", lambda t, u: tf.tensor_scatter_nd_max(t, _UNIQUE_IDX, u),
           [_r(4, 2), _r(2, 2)], lambda t, u: _np_tensor_scatter(t, _UNIQUE_IDX, u,
                                                                  np.maximum)),
    OpCase("tensor_scatter_nd_min", lambda t, u: tf.tensor_scatter_nd_min(t, _UNIQUE_IDX, u),
           [_r(4, 2), _r(2, 2)], lambda t, u: _np_tensor_scatter(t, _UNIQUE_IDX, u,
                                                                  np.minimum)),
    OpCase("eye", lambda: tf.eye(2, 3), [], lambda: np.eye(2, 3), grad=False),
    OpCase("eye_batch_int", lambda: tf.eye(2, batch_shape=[3], dtype=tf.int32), [],
           lambda: np.broadcast_to(np.eye(2, dtype=np.int32), (3, 2, 2)), grad=False),
    OpCase("linspace", lambda a, b: tf.linspace(a, b, 5), [np.array(-1.0), np.array(2.0)],
           lambda a, b: np.linspace(a, b, 5), static_shape_exact=False),
    OpCase("linspace_axis", lambda a, b: tf.linspace(a, b, 4, axis=-1), [_r(2), _r(2)],
           lambda a, b: np.linspace(a, b, 4, axis=-1), static_shape_exact=False),
    OpCase("meshgrid_xy", lambda x, y: tf.meshgrid(x, y), [_r(3), _r(2)],
           lambda x, y: list(np.meshgrid(x, y))),
    OpCase("meshgrid_ij", lambda x, y, z: tf.meshgrid(x, y, z, indexing="ij"),
           [_r(3), _r(2), _r(2)], lambda x, y, z: list(np.meshgrid(x, y, z, indexing="ij"))),
    OpCase("sequence_mask", lambda: tf.sequence_mask([1, 3, 0], 4), [],
           lambda: np.arange(4) < np.array([1, 3, 0])[:, None], grad=False),
    OpCase("sequence_mask_default_maxlen_float",
           lambda: tf.sequence_mask([[2], [1]], dtype=tf.float32), [],
           lambda: (np.arange(2) < np.array([[2], [1]])[..., None]).astype(np.float64),
           grad=False, static_shape_exact=False),
]


def test_gather_nd_gradient_sums_repeated_indices():
    x = tf.Variable(np.arange(6.0).reshape(3, 2))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather_nd(x, [[0, 1], [2, 0], [0, 1]]) * [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0, 4], [0, 0], [2, 0]])


def test_linspace_of_integers_is_float64_as_tf():
    """TF's linspace divides the integer span truly (float64) and casts the ends to it."""
    got = tf.linspace(-2, 2, 5)
    assert got.dtype == tf.float64
    np.testing.assert_array_equal(got.numpy(), np.linspace(-2, 2, 5))
    got = tf.linspace([0, 1], [4, 5], 3, axis=1)
    np.testing.assert_array_equal(got.numpy(), np.linspace([0, 1], [4, 5], 3, axis=1))
    assert tf.linspace(-2.0, 2, 5).dtype == tf.float32


@pytest.mark.parametrize("call,error,message", [
    (lambda: tf.gather_nd(tf.zeros([3, 2]), [[5, 0]]), InvalidArgumentError,
     r"indices\[0\] = \[5, 0\] does not index into param shape \[3,2\]"),
    (lambda: tf.scatter_nd([[1]], [1.0, 2.0], [3]), (InvalidArgumentError, ValueError),
     "must match"),
    (lambda: tf.meshgrid([1], [2], sparse=True), TypeError,
     "'sparse' is an invalid keyword argument for this function"),
    (lambda: tf.meshgrid([1], [2], indexing="xx"), ValueError,
     "Argument `indexing` parameter must be either 'xy' or 'ij', got 'xx'"),
    (lambda: tf.sequence_mask([1, 2], [3, 4]), ValueError,
     "Argument `maxlen` must be scalar for sequence_mask"),
])
def test_errors_are_tensorflows(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_graph_shapes():
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None, 4, 5])
        assert tf.gather_nd(p, tf.zeros([7, 2], tf.int32)).shape.as_list() == [7, 5]
        with pytest.raises(ValueError, match="indices.shape\\[-1\\] must be <= params.rank"):
            tf.gather_nd(p, tf.zeros([7, 4], tf.int32))
        assert tf.scatter_nd(tf.zeros([3, 1], tf.int32), tf.zeros([3, 2]),
                             [6, 2]).shape.as_list() == [6, 2]
        assert tf.eye(3).shape.as_list() == [3, 3]


def test_bad_indices_policy_ignore_reads_zeros_and_skips_updates():
    # TF 2.21 (CPU):
    #   tf.gather_nd([[1., 2.], [3., 4.]], [[0, 1], [5, 0], [1, 1]],
    #                bad_indices_policy="IGNORE")                   -> [2., 0., 4.]
    #   tf.gather_nd(same, [[-1], [1]], bad_indices_policy="IGNORE") -> [[0., 0.], [3., 4.]]
    #   tf.gather_nd(["a", "b"], [[3], [1]], bad_indices_policy="IGNORE") -> [b"", b"b"]
    #   tf.tensor_scatter_nd_add([1., 2., 3.], [[-1], [1]], [9., 8.],
    #                            bad_indices_policy="IGNORE")       -> [1., 10., 3.]
    #   tf.scatter_nd([[5], [1]], [9., 8.], [3], bad_indices_policy="IGNORE") -> [0., 8., 0.]
    p = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    got = tf.gather_nd(p, [[0, 1], [5, 0], [1, 1]], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [2.0, 0.0, 4.0])
    got = tf.gather_nd(p, [[-1], [1]], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [[0.0, 0.0], [3.0, 4.0]])
    got = tf.gather_nd(tf.constant(["a", "b"]), [[3], [1]], bad_indices_policy="IGNORE")
    assert got.numpy().tolist() == [b"", b"b"]
    got = tf.tensor_scatter_nd_add(tf.constant([1.0, 2.0, 3.0]), [[-1], [1]], [9.0, 8.0],
                                   bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [1.0, 10.0, 3.0])
    got = tf.scatter_nd([[5], [1]], [9.0, 8.0], [3], bad_indices_policy="IGNORE")
    np.testing.assert_array_equal(got.numpy(), [0.0, 8.0, 0.0])
    traced = tf.function(lambda: tf.gather_nd(p, [[0, 1], [5, 0]],
                                              bad_indices_policy="IGNORE"))
    np.testing.assert_array_equal(traced().numpy(), [2.0, 0.0])


@pytest.mark.parametrize("policy", ["", "DEFAULT", "ERROR"])
def test_bad_indices_policy_default_and_error_raise(policy):
    # TF 2.21: "indices[1] = [5, 0] does not index into param shape [2,2]"
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[5, 0\] does not index "
                                                   r"into param shape \[2,2\]"):
        tf.gather_nd(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [[0, 1], [5, 0]],
                     bad_indices_policy=policy)


def test_index_errors_name_what_tensorflow_names():
    # TF 2.21: GatherNd's ends with the node's name (the op type eagerly), the scatters' say
    # "shape" only
    p = tf.constant([1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match=r"^indices\[0\] = \[7\] does not index into "
                                                   r"param shape \[2\], node name: GatherNd "):
        tf.gather_nd(p, [[7]], name="foo")
    with pytest.raises(InvalidArgumentError, match=r"param shape \[2\], node name: foo\n"):
        tf.function(lambda x: tf.gather_nd(x, [[7]], name="foo"))(p)
    for call in (lambda: tf.scatter_nd([[7]], [1.0], [2]),
                 lambda: tf.tensor_scatter_nd_update(p, [[7]], [1.0])):
        with pytest.raises(InvalidArgumentError, match=r"^indices\[0\] = \[7\] does not index "
                                                       r"into shape \[2\] "):
            call()


@pytest.mark.parametrize("policy", ["bogus", "ignore"])
def test_an_unknown_bad_indices_policy_fails_as_tensorflow(policy):
    # TF 2.21: GatherNd has no kernel for it (eagerly NotFoundError "Could not find device for
    # node: {{node GatherNd}} = GatherNd[..., bad_indices_policy="bogus"]\nAll kernels
    # registered for op GatherNd:\n ...", in a tf.function InvalidArgumentError "No OpKernel
    # was registered to support Op 'GatherNd' ..."); the scatters' kernels fail when made:
    # InvalidArgumentError "Unknown bad indices handling attribute: bogus"
    p, i = tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([[0], [1]])
    with pytest.raises(tf.errors.NotFoundError) as info:
        tf.gather_nd(p, i, bad_indices_policy=policy)
    lines = info.value.message.split("\n")
    assert lines[0] == ("Could not find device for node: {{node GatherNd}} = GatherNd["
                        f'Tindices=DT_INT32, Tparams=DT_FLOAT, bad_indices_policy="{policy}"]')
    assert lines[1] == "All kernels registered for op GatherNd:"
    assert len(lines) == 72 and lines[-1] == (
        "  device='CPU'; Tparams in [DT_UINT64]; Tindices in [DT_INT16]; bad_indices_policy in "
        '["", "DEFAULT", "ERROR", "IGNORE"]')
    with pytest.raises(InvalidArgumentError, match="No OpKernel was registered to support Op "
                                                   "'GatherNd' used by {{node GatherNd}}"):
        tf.function(lambda: tf.gather_nd(p, i, bad_indices_policy=policy))()
    unknown = f"Unknown bad indices handling attribute: {policy}"
    u = tf.constant([[5.0, 6.0], [7.0, 8.0]])
    for call in (lambda: tf.scatter_nd(i, u, [2, 2], bad_indices_policy=policy),
                 lambda: tf.tensor_scatter_nd_add(p, i, u, bad_indices_policy=policy),
                 lambda: tf.tensor_scatter_nd_max(p, i, u, bad_indices_policy=policy),
                 lambda: tf.raw_ops.TensorScatterUpdate(tensor=p, indices=i, updates=u,
                                                        bad_indices_policy=policy)):
        with pytest.raises(InvalidArgumentError, match=f"^{unknown} "):
            call()
    with pytest.raises(InvalidArgumentError, match=(  # TF's text for a lambda's failure
            rf"^\{{\{{function_node (__inference_<lambda>_\d+)\}}\}} {unknown}\n\t "
            rf"\[\[\{{\{{node ScatterNd\}}\}}\]\] \[Op:\1\]$")):
        tf.function(lambda x: tf.scatter_nd(i, x, [2, 2], bad_indices_policy=policy))(u)
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match=f"^{unknown} "):
        tf.raw_ops.ResourceScatterNdUpdate(ref=v.handle, indices=[[0]], updates=[5.0],
                                           bad_indices_policy=policy)
    assert v.numpy().tolist() == [1.0, 2.0]
