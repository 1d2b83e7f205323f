"""tf.test: TestCase behaviour (assertions and their failure reports, evaluate, Sessions,
reseeding, temp dirs), gradient checking against known Jacobians, the platform queries."""

from __future__ import annotations

import os
import unittest

import numpy as np
import pytest

import ndflow as tf


def _run(case_class) -> unittest.TestResult:
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(case_class).run(result)
    return result


def test_assertions_pass_and_fail_as_tensorflows():
    failures = {}

    class T(tf.test.TestCase):
        def test_close_nested(self):
            self.assertAllClose({"a": (tf.constant([1.0, 2.0]), 3.0)},
                                {"a": (np.array([1.0, 2.0 + 1e-7]), 3.0)})
            self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))
            self.assertNotAllClose([1.0], [1.1])
            self.assertAllEqual(tf.constant([b"a", b"b"]), [b"a", b"b"])
            self.assertAllInRange([0.0, 0.5, 1.0], 0.0, 1.0)
            self.assertAllInSet([1, 2, 2], {1, 2, 3})
            self.assertAllGreater([2, 3], 1)
            self.assertShapeEqual(np.zeros([2, 3]), tf.zeros([2, 3]))
            self.assertDTypeEqual(np.zeros(2, np.float32), tf.float32)
            self.assertArrayNear([1.0, 2.0], [1.05, 2.0], 0.1)

        def test_close_fails_with_report(self):
            try:
                self.assertAllClose([1.0, 2.0], [1.0, 2.1])
            except AssertionError as e:
                failures["close"] = str(e)

        def test_mismatched_structures(self):
            with self.assertRaisesRegex(ValueError, "Mismatched length: a\\[1\\] has 2 items"):
                self.assertAllClose([1.0, [1.0, [2.0]]], [1.0, [1.0, [2.0], 3.0]])
            with self.assertRaisesRegex(ValueError, "Can't compare dict to non-dict"):
                self.assertAllClose({"a": 1.0}, [1.0])

        def test_op_error(self):
            with self.assertRaisesOpError("must be positive"):
                tf.debugging.assert_positive(tf.constant(-1.0), message="must be positive")

    result = _run(T)
    assert result.wasSuccessful(), result.failures + result.errors
    report = failures["close"]
    assert "not close where = (array([1]),)" in report
    assert "not close lhs = [2.]" in report and "not close rhs = [2.1]" in report
    assert "dtype = float64, shape = (2,)" in report


def test_sessions_evaluate_seed_and_temp_dirs():
    seen = {}

    class T(tf.test.TestCase):
        def test_graph_mode(self):
            with tf.Graph().as_default():
                x = tf.compat.v1.placeholder(tf.float32, [2])
                y = x * 3.0
                with self.cached_session() as sess:
                    seen["graph"] = sess.run(y, {x: [1.0, 2.0]})
                    assert self.cached_session is not None
                    seen["eval"] = self.evaluate(tf.constant([4, 5]) * 2)

        def test_eager(self):
            seen["eager"] = self.evaluate({"a": tf.constant([1, 2])})
            seen["draw"] = float(np.random.rand())
            d = self.get_temp_dir()
            assert os.path.isdir(d) and self.get_temp_dir() == d
            seen["dir"] = d

        def test_eager_again(self):
            seen["draw2"] = float(np.random.rand())
            seen["dir2"] = self.get_temp_dir()

    result = _run(T)
    assert result.wasSuccessful(), result.failures + result.errors
    np.testing.assert_array_equal(seen["graph"], [3.0, 6.0])
    np.testing.assert_array_equal(seen["eval"], [8, 10])
    assert isinstance(seen["eager"]["a"], np.ndarray)
    assert seen["draw"] == seen["draw2"]          # NumPy reseeded before every test
    assert seen["dir"] != seen["dir2"]            # one temp dir per test
    # test_session is a method TF's loader also collects, and skips as "Not a test."
    assert [t._testMethodName for t, why in result.skipped] == ["test_session"]


def test_compute_gradient_matches_the_jacobian():
    def f(x, y):
        return tf.stack([x[0] * x[1], tf.sin(y[0]) + x[2]])

    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5])
    theoretical, numerical = tf.test.compute_gradient(f, [x, y])
    want_x = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    want_y = np.array([[0.0], [np.cos(0.5)]])
    np.testing.assert_allclose(theoretical[0], want_x)
    np.testing.assert_allclose(theoretical[1], want_y)
    np.testing.assert_allclose(numerical[0], want_x, atol=1e-5)
    np.testing.assert_allclose(numerical[1], want_y, atol=1e-5)
    with pytest.raises(ValueError, match="must be a list or tuple"):
        tf.test.compute_gradient(f, x)


def test_compute_gradient_in_a_graph_and_tf1_error():
    with tf.Graph().as_default(), tf.compat.v1.Session().as_default():
        t, n = tf.test.compute_gradient(lambda a: a * a, [np.array([1.0, 3.0])])
        np.testing.assert_allclose(t[0], np.diag([2.0, 6.0]))
        x = tf.compat.v1.placeholder(tf.float64, [3])
        y = tf.reduce_sum(x * x) * tf.ones([2], tf.float64)
        jt, jn = tf.compat.v1.test.compute_gradient(x, [3], y, [2],
                                                    x_init_value=np.array([1.0, 2.0, 3.0]))
        assert jt.shape == (3, 2)  # TF1's (x_size, y_size)
        np.testing.assert_allclose(jt, [[2.0, 2.0], [4.0, 4.0], [6.0, 6.0]])
        assert tf.compat.v1.test.compute_gradient_error(x, [3], y, [2]) < 1e-6


def test_platform_queries_on_this_cpu_build():
    import torch
    assert tf.test.is_built_with_cuda() == (torch.version.cuda is not None)
    assert tf.test.is_gpu_available() == torch.cuda.is_available()
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if torch.cuda.is_available() else "")
    assert tf.test.is_built_with_xla() and not tf.test.is_built_with_rocm()
