"""`tf.test.TestCase`: absltest's TestCase with TensorFlow's additions — `evaluate`, test
Sessions for TF1 graphs, a per-test temp dir, reseeding before each test, and the array
assertions (`assertAllClose` over nested structures of tensors and arrays, with TF's failure
report) — plus `tf.test.main`, `Benchmark` and the small helpers TF's tests use.
"""

from __future__ import annotations

import collections.abc
import contextlib
import random
import re
import tempfile
import unittest.mock

import numpy as np
from absl.testing import absltest

from ndflow.core import context, dtypes, errors, nest
from ndflow.core.api_export import tf_export
from ndflow.core.graph import SymbolicTensor
from ndflow.ops import random_seed
from ndflow.runtime.config_proto import ConfigProto
from ndflow.runtime.session import Session, get_default_session

_TEMP_ROOT: list = []


def _temp_root() -> str:
    if not _TEMP_ROOT:
        _TEMP_ROOT.append(tempfile.mkdtemp(prefix="ndflow_test_"))
    return _TEMP_ROOT[0]


@tf_export(v1=["test.get_temp_dir"])
def get_temp_dir() -> str:
    """The directory the tests of this process share (TF1's module-level function)."""
    return _temp_root()


tf_export(v1=["test.mock"])(unittest.mock)


def _to_numpy(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, bytes):
        return np.array(value, dtype=object)
    return np.asarray(value)


@tf_export("test.TestCase")
class TestCase(absltest.TestCase):
    """Base class for tests of TensorFlow programs."""

    _set_default_seed = True

    def __init__(self, methodName="runTest"):  # noqa: N803 - unittest's name
        super().__init__(methodName)
        self._cached_session = None
        self._tempdir = None

    def setUp(self):
        super().setUp()
        self._clear_cached_session()
        random.seed(random_seed.DEFAULT_GRAPH_SEED)
        np.random.seed(random_seed.DEFAULT_GRAPH_SEED)
        if context.executing_eagerly() or not context.state().graph_stack:
            context.reset_default_graph()
        if self._set_default_seed:
            random_seed.set_random_seed(random_seed.DEFAULT_GRAPH_SEED)
        if self.id().endswith(".test_session"):  # the method, not a test
            self.skipTest("Not a test.")

    def tearDown(self):
        self._clear_cached_session()
        super().tearDown()

    def _clear_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    def get_temp_dir(self) -> str:
        """A directory of this test's own (the same one on every call within the test)."""
        if not self._tempdir:
            self._tempdir = tempfile.mkdtemp(dir=_temp_root())
        return self._tempdir

    # -- running tensors -------------------------------------------------------------------------
    def evaluate(self, tensors):
        """NumPy values of a tensor or a nested structure of them: eagerly their values, in a
        graph run by the default Session (else a test Session)."""
        if context.executing_eagerly():
            return nest.map_structure(_to_numpy, tensors, expand_composites=False)
        flat = nest.flatten(tensors, expand_composites=False)
        sess = get_default_session()
        if sess is None:
            with self.session() as sess:
                values = sess.run(flat)
        else:
            values = sess.run(flat)
        return nest.pack_sequence_as(tensors, values, expand_composites=False)

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):  # noqa: ARG002
        """A new Session on `graph` (the default graph), made default; eagerly, nothing to
        run (yields None, as TF's warner that has no run)."""
        if context.executing_eagerly():
            yield None
            return
        with Session(graph=graph, config=config or ConfigProto()) as sess, \
                sess.graph.as_default(), sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):  # noqa: ARG002
        """The test's one Session (made on first use, closed in tearDown), made default."""
        if context.executing_eagerly():
            yield None
            return
        if self._cached_session is None:
            self._cached_session = Session(graph=graph, config=config or ConfigProto())
        elif graph is not None and self._cached_session.graph is not graph:
            raise ValueError("The graph used to get the cached session is different than the "
                             "one that was used to create the session. Maybe create a new "
                             "session with self.session()")
        sess = self._cached_session
        with sess.graph.as_default(), sess.as_default():
            yield sess

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """Deprecated: `session()` / `cached_session()`."""
        return self.cached_session(graph, config, use_gpu, force_gpu)

    # -- array assertions ----------------------------------------------------------------------
    def _array(self, value) -> np.ndarray:
        return _to_numpy(self.evaluate(value) if _is_tensor(value) else value)

    def _assert_array_close(self, a, b, rtol, atol, msg):
        a, b = self._array(a), self._array(b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got "
                         f"{b.shape}." + (f" with contents {b}." if b.size < 500 else ""))
        a_dtype = a.dtype
        if a.dtype == dtypes.bfloat16.np_dtype:
            a = a.astype(np.float32)
        if b.dtype == dtypes.bfloat16.np_dtype:
            b = b.astype(np.float32)
        if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            return
        msgs = [msg]
        bad = np.logical_or(np.abs(a - b) > atol + rtol * np.abs(b), np.isnan(a) != np.isnan(b))
        x, y = (a[np.where(bad)], b[np.where(bad)]) if a.ndim else (a, b)
        if a.ndim:
            msgs.append(f"not close where = {np.where(bad)}")
        msgs += [f"not close lhs = {x}", f"not close rhs = {y}",
                 f"not close dif = {np.abs(x - y)}", f"not close tol = {atol + rtol * np.abs(y)}",
                 f"dtype = {a_dtype}, shape = {a.shape}"]
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(msgs),
                                   equal_nan=True)

    def _assert_close_recursive(self, a, b, rtol, atol, path, msg):
        where = "[" + "][".join(str(p) for p in path) + "]" if path else ""
        a = a._asdict() if hasattr(a, "_asdict") else a
        b = b._asdict() if hasattr(b, "_asdict") else b
        a_dict = isinstance(a, collections.abc.Mapping)
        if a_dict != isinstance(b, collections.abc.Mapping):
            raise ValueError(f"Can't compare dict to non-dict, a{where} vs b{where}. {msg}")
        if a_dict:
            self.assertCountEqual(a.keys(), b.keys(),
                                  msg=f"mismatched keys: a{where} has keys {a.keys()}, but "
                                  f"b{where} has keys {b.keys()}. {msg}")
            for k in a:
                self._assert_close_recursive(a[k], b[k], rtol, atol, [*path, k], msg)
            return
        if isinstance(a, (list, tuple)):
            try:
                self._assert_array_close(a, b, rtol, atol, f"Mismatched value: a{where} is "
                                         f"different from b{where}. {msg}")
                return
            except (ValueError, TypeError):
                if len(a) != len(b):
                    raise ValueError(f"Mismatched length: a{where} has {len(a)} items, but "
                                     f"b{where} has {len(b)} items. {msg}") from None
                for i, (x, y) in enumerate(zip(a, b)):
                    self._assert_close_recursive(x, y, rtol, atol, [*path, str(i)], msg)
                return
        self._assert_array_close(a, b, rtol, atol,
                                 f"Mismatched value: a{where} is different from b{where}. {msg}")

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Nested structures (dicts, namedtuples, lists, tuples) of tensors or arrays with
        |a - b| <= atol + rtol * |b| everywhere (NaNs in the same places)."""
        self._assert_close_recursive(a, b, rtol, atol, [], msg or "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,  # noqa: N802
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3,
                                      bfloat16_rtol=1e-2, bfloat16_atol=1e-2, msg=None):
        a, b = self._array(a), self._array(b)
        kinds = {a.dtype, b.dtype}
        if kinds & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if dtypes.bfloat16.np_dtype in kinds:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Same shape and equal elements (strings compared as bytes)."""
        a, b = self._array(a), self._array(b)
        msg = msg or ""
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}."
                         + (f" Contents: {b}. \n{msg}" if b.size < 500 else f"\n{msg}"))
        same = a == b
        if np.issubdtype(a.dtype, np.floating) and np.issubdtype(b.dtype, np.floating):
            same = same | (np.isnan(a) & np.isnan(b))
        if not np.all(same):
            np.testing.assert_array_equal(a, b, err_msg=f"{msg}\nnot equal where = "
                                          f"{np.where(~np.asarray(same))}")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def _assert_all(self, a, holds, what: str, target):
        a = self._array(a)
        if not np.all(holds(a)):
            raise AssertionError(f"{a} is not {what} {target}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self._assert_all(a, lambda x: x > comparison_target, "greater than", comparison_target)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self._assert_all(a, lambda x: x < comparison_target, "less than", comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self._assert_all(a, lambda x: x >= comparison_target, "greater than or equal to",
                         comparison_target)

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self._assert_all(a, lambda x: x <= comparison_target, "less than or equal to",
                         comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        t = self._array(target)
        low = t > lower_bound if open_lower_bound else t >= lower_bound
        high = t < upper_bound if open_upper_bound else t <= upper_bound
        if not np.all(low & high):
            bounds = ("(" if open_lower_bound else "[") + f"{lower_bound}, {upper_bound}" + \
                (")" if open_upper_bound else "]")
            raise AssertionError(f"{int(np.sum(~(low & high)))} of the {t.size} element(s) "
                                 f"are outside the range {bounds}. Subscript(s) and value(s) "
                                 f"of the offending elements:\n{np.argwhere(~(low & high))}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        t = self._array(target)
        bad = set(np.unique(t).tolist()) - set(expected_set)
        if bad:
            raise AssertionError(f"{len(bad)} unique element(s) are not in the set "
                                 f"{set(expected_set)}: {bad}")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err,
                        f"{f1!r} != {f2!r} +/- {err!r}" + (f" ({msg})" if msg else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        """A NumPy array's shape equals a tensor's static shape."""
        if not isinstance(input_a, (np.ndarray, np.generic)):
            raise TypeError(f"input_a must be a Numpy ndarray, Numpy scalar, or a Tensor.Instead"
                            f" received {type(input_a)}")
        shape_b = input_b.shape if isinstance(input_b, (np.ndarray, np.generic)) \
            else input_b.shape.as_list()
        self.assertAllEqual(np.shape(input_a), list(shape_b), msg=msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        want = np.dtype(dtypes.as_dtype(expected_dtype).np_dtype)
        for t in (target if isinstance(target, list) else [target]):
            self.assertEqual(self._array(t).dtype, want)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        norm = [str(d or "").lower().replace("/device:", "/") for d in (device1, device2)]
        self.assertEqual(norm[0], norm[1],
                         f"Devices {device1} and {device2} are not equal. {msg or ''}")

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r}"
                      + (f" : {msg!r}" if msg else ""))

    # -- errors ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        """The block raises `exception_type` whose message matches the regex (searched) or
        satisfies the predicate."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                message = e.message if isinstance(e, errors.OpError) else str(e)
                return re.search(expected_err_re_or_predicate, message) is not None
        try:
            yield
            self.fail(f"{exception_type.__name__} not raised")
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(errors.OpError,
                                                   expected_err_re_or_predicate)


def _is_tensor(value) -> bool:
    return hasattr(value, "numpy") or isinstance(value, SymbolicTensor)


@tf_export("test.main")
def main(argv=None):
    """Runs the tests of `__main__` (absltest's runner, as TensorFlow's)."""
    absltest.main(argv=argv)


@tf_export("test.Benchmark")
class Benchmark:
    """Base class of benchmarks: `report_benchmark` logs a benchmark entry; `evaluate` runs
    tensors eagerly or in the default Session."""

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        entry = {"name": name or type(self).__name__, "iters": iters, "cpu_time": cpu_time,
                 "wall_time": wall_time, "throughput": throughput, "extras": extras or {},
                 "metrics": metrics or []}
        print(f"entry {{ {', '.join(f'{k}: {v}' for k, v in entry.items() if v)} }}")
        return entry

    def evaluate(self, tensors):
        if context.executing_eagerly():
            return nest.map_structure(_to_numpy, tensors, expand_composites=False)
        return get_default_session().run(tensors)


@tf_export("test.benchmark_config")
def benchmark_config() -> ConfigProto:
    """A ConfigProto for benchmarks (TF's turns off the graph-rewriting optimizers' noise)."""
    return ConfigProto()


@tf_export("test.assert_equal_graph_def", v1=[])
def assert_equal_graph_def(expected, actual) -> None:
    """AssertionError unless the two GraphDefs have the same nodes (by name; order ignored)."""
    want = {n.name: n for n in expected.node}
    got = {n.name: n for n in actual.node}
    if set(want) != set(got):
        raise AssertionError(f"GraphDefs differ in their nodes: only expected "
                             f"{sorted(set(want) - set(got))}, only actual "
                             f"{sorted(set(got) - set(want))}")
    for name, node in want.items():
        other = got[name]
        if (node.op != other.op or list(node.input) != list(other.input)
                or node.device != other.device or dict(node.attr) != dict(other.attr)):
            raise AssertionError(f"Node {name!r} differs:\nexpected:\n{node}\nactual:\n{other}")


@tf_export(v1=["test.assert_equal_graph_def"])
def assert_equal_graph_def_v1(actual, expected, checkpoint_v2=False,  # noqa: ARG001
                              hash_table_shared_name=False) -> None:  # noqa: ARG001
    """TF1's argument order; the checkpoint/hash-table normalizations have nothing to strip in
    ndflow's GraphDefs."""
    assert_equal_graph_def(expected, actual)


@tf_export("test.disable_with_predicate")
def disable_with_predicate(pred, skip_message):
    """A test decorator that skips the test when `pred()` is true."""
    def decorator(func):
        def wrapped(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)
        return wrapped
    return decorator


@tf_export("test.with_eager_op_as_function")
def with_eager_op_as_function(cls=None, only_as_function=False):  # noqa: ARG001
    """TF runs the class's tests again with eager ops wrapped in functions; ndflow's eager ops
    have one execution path, so the class is returned as it is."""
    return cls if cls is not None else (lambda c: c)

