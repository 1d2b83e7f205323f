"""tf.math.sobol_sample against TF 2.21 bit for bit (tests/fixtures/sobol_sample: dims 1-50,
1000 and 21200, skips up to the int32 edge where TF's scale wraps negative, float32/float64),
plus TF's errors and graph-mode static shapes, and the direction numbers' defining property."""

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import sobol
from ndflow.ops.sobol_ops import SobolSample

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "sobol_sample")
EXPECTED = np.load(os.path.join(HERE, "expected.npz"))
with open(os.path.join(HERE, "errors.json")) as _f:
    ERRORS = json.load(_f)


@pytest.mark.parametrize("key", sorted(EXPECTED.files))
def test_matches_tf_bit_for_bit(key):
    dtype, dim, n, skip = key.split("_")
    got = tf.math.sobol_sample(int(dim), int(n), skip=int(skip), dtype=getattr(tf, dtype))
    want = EXPECTED[key]
    assert got.dtype.name == dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_tensor_arguments_in_a_function():
    @tf.function
    def f(dim, n, skip):
        return tf.math.sobol_sample(dim, n, skip, dtype=tf.float64)

    got = f(tf.constant(7), tf.constant(1500), tf.constant(777))
    np.testing.assert_array_equal(got.numpy(), EXPECTED["float64_7_1500_777"])


@pytest.mark.parametrize("case", [c for c in ERRORS["errors"] if "args" in c],
                         ids=lambda c: str(c["args"]))
def test_errors_match_tf(case):
    with pytest.raises(InvalidArgumentError) as e:
        tf.math.sobol_sample(*case["args"])
    # TF's eager message wraps the kernel's text in a function-node prefix.
    assert str(e.value).startswith(case["message"].split("}} ")[1].split(" [Op:")[0])


@pytest.mark.parametrize("dtype", [tf.int32, tf.float16])
def test_dtype_outside_the_attr_list(dtype):
    case = next(c for c in ERRORS["errors"] if c.get("dtype") == dtype.name)
    assert case["error"] == "InvalidArgumentError"
    with pytest.raises(InvalidArgumentError, match="not in the list of allowed values"):
        tf.math.sobol_sample(2, 3, dtype=dtype)


def test_graph_static_shapes_match_tf():
    with tf.Graph().as_default():
        n = tf.compat.v1.placeholder(tf.int32, [])
        got = {"static": tf.math.sobol_sample(3, 5).shape.as_list(),
               "unknown_n": tf.math.sobol_sample(3, n).shape.as_list(),
               "unknown_dim": tf.math.sobol_sample(n, 4).shape.as_list()}
    assert got == ERRORS["shapes"]


def test_direction_numbers_follow_the_recurrence():
    # Independent of the fixture: every m_k is odd and below 2^(k+1), and the first 2^b
    # points of each dimension are a permutation of the 2^b dyadic cells (a (0,1)-sequence
    # per coordinate).
    m = sobol.direction_numbers()
    assert m.shape == (21201, 31)
    assert (m % 2 == 1).all()
    assert (m < (2 << np.arange(31))[None, :]).all()
    pts = sobol.sobol_points(40, 255, 0, np.float64)  # points 1..255, plus 0 = all 2^8 cells
    cells = np.sort(np.floor(np.vstack([np.zeros((1, 40)), pts]) * 256), axis=0)
    np.testing.assert_array_equal(cells, np.arange(256)[:, None] * np.ones((1, 40)))


def test_no_gradient_registered_as_in_tf():
    assert sobol.sobol_points(2, 1, 0, np.float32).tolist() == [[0.5, 0.5]]
    assert SobolSample.gradient_undefined and SobolSample.grad_fn is None
