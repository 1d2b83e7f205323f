"""The unsigned dtypes uint16, uint32 and uint64 (ndflow/kernels/unsigned.py): results and
errors against TF 2.21's own (tests/fixtures/unsigned), and the arithmetic of every way an op
runs on them (same-width views, flipped top bits, zero-extension, uint64 division) against
NumPy's unsigned arithmetic on random operands with the top bit set."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from tests import fixture_modules

CASES_MODULE = fixture_modules.load("unsigned")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "unsigned" / "values.json").read_text())
CASES = CASES_MODULE.cases(tf)
UNSIGNED = CASES_MODULE.UNSIGNED

# Where TF 2.21 and ndflow both refuse, but with other exception types.
_NO_KERNEL = ("TF declares MatMul for the unsigned types but registers no kernel for them "
              "(NotFoundError); ndflow's MatMul does not declare them (InvalidArgumentError)")
OTHER_ERROR = {
    **{f"{dt}/matmul": _NO_KERNEL for dt in UNSIGNED},
    "uint16/stateless_uniform_full": "TF's Python wrapper refuses uint16 (ValueError) before the "
                                     "op's attr check does (InvalidArgumentError)",
    **{f"{dt}/range": "TF fails an internal assert (AssertionError); ndflow's Range has no "
                      "unsigned kernel and says so (ValueError)" for dt in UNSIGNED},
    **{f"uint64/{c}": "TF 2.21 crashes in its converter (SystemError); ndflow's ValueError "
                      "names the range" for c in ("constant_negative", "constant_too_big")},
}
# Where the results differ.
DIFFERENT = {
    **{f"{dt}/{c}": "TF wraps a Python int out of the type's range; ndflow refuses it "
                    "(ValueError), as it does for uint8"
       for dt in ("uint16", "uint32") for c in ("constant_negative", "constant_too_big")},
    "uint16/tile": "TF 2.21 has no uint16 Tile kernel (UnimplementedError); ndflow tiles",
}
# Casts of floats out of the type's range are undefined in C++: TF's values come from its
# compiler's instructions (they even differ between vectorized and scalar elements), so only
# the in-range elements and the result's type are compared.
OUT_OF_RANGE_CASTS = {f"{dt}/cast_from_float{w}_out_of_range" for dt in UNSIGNED
                      for w in (32, 64)}


def _record(name):
    return CASES_MODULE.record(CASES[name])


@pytest.mark.parametrize("name", sorted(set(CASES) - set(OTHER_ERROR) - set(DIFFERENT)
                                        - OUT_OF_RANGE_CASTS))
def test_results_match_tensorflow(name):
    assert _record(name) == TF_VALUES[name], name


@pytest.mark.parametrize("name", sorted(OTHER_ERROR))
def test_refused_where_tensorflow_refuses(name):
    got, want = _record(name), TF_VALUES[name]
    assert "error" in want and "error" in got, (name, got)
    assert got != want, f"{name} now matches TF: drop it from OTHER_ERROR"


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_listed_differences_are_current(name):
    """A listed case that starts matching TF leaves the list (and the note in docs/types.md)."""
    assert _record(name) != TF_VALUES[name], DIFFERENT[name]


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE_CASTS))
def test_out_of_range_casts_agree_in_range(name):
    got, want = _record(name), TF_VALUES[name]
    assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
    bits = np.dtype(got["dtype"]).itemsize * 8
    inputs = ([-1.0, np.nan, np.inf, -np.inf, 2.0 ** bits * 2, 70000.0, 5e9, 2e19]
              if "float32" in name else [-3.0, np.nan, 2.0 ** bits, 65536.0, 4294967296.0, 1e20])
    defined = [i for i, x in enumerate(inputs) if np.isfinite(x) and -2.0 ** (bits - 1) <= x
               < 2.0 ** bits]
    assert defined, name
    assert [got["values"][i] for i in defined] == [want["values"][i] for i in defined]


# -- every policy's arithmetic against NumPy's ---------------------------------------------------

def _operands(name, n=4096, seed=0):
    rng = np.random.default_rng(seed)
    info = np.iinfo(name)
    a = rng.integers(0, int(info.max) + 1, n, dtype=name)
    b = rng.integers(0, int(info.max) + 1, n, dtype=name)
    edges = np.array([0, 1, int(info.max), int(info.max) - 1, int(info.max) // 2,
                      int(info.max) // 2 + 1], name)
    a[:6], b[:6] = edges, edges[::-1]
    b[b == 0] = 1      # division operands (a zero divisor is its own test)
    return a, b


_BINARY = {
    "add": (lambda x, y: x + y, np.add), "sub": (lambda x, y: x - y, np.subtract),
    "mul": (lambda x, y: x * y, np.multiply), "floordiv": (lambda x, y: x // y, np.floor_divide),
    "floormod": (lambda x, y: x % y, np.remainder),
    "truncatediv": (tf.truncatediv, np.floor_divide),
    "maximum": (tf.maximum, np.maximum), "minimum": (tf.minimum, np.minimum),
    "less": (tf.less, np.less), "greater_equal": (tf.greater_equal, np.greater_equal),
    "equal": (tf.equal, np.equal), "bitwise_xor": (tf.bitwise.bitwise_xor, np.bitwise_xor),
}


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("op", sorted(_BINARY))
@pytest.mark.parametrize("graph", [False, True])
def test_binary_ops_match_numpy(name, op, graph):
    a, b = _operands(name)
    fn, ref = _BINARY[op]
    if graph:
        fn = tf.function(fn)
    got = fn(tf.constant(a), tf.constant(b)).numpy()
    with np.errstate(over="ignore"):
        want = ref(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", UNSIGNED)
def test_reductions_sorts_and_casts_match_numpy(name):
    a, _ = _operands(name, n=1000, seed=1)
    m = a.reshape(10, 100)
    x = tf.constant(m)
    np.testing.assert_array_equal(tf.reduce_max(x, 1).numpy(), m.max(1))
    np.testing.assert_array_equal(tf.reduce_min(x, 0).numpy(), m.min(0))
    np.testing.assert_array_equal(tf.argmax(x, 1).numpy(), m.argmax(1))
    np.testing.assert_array_equal(tf.reduce_sum(x, 1).numpy(), m.sum(1, dtype=name))
    np.testing.assert_array_equal(tf.sort(x).numpy(), np.sort(m, 1))
    np.testing.assert_array_equal(tf.math.top_k(x, 5).values.numpy(), np.sort(m, 1)[:, ::-1][:, :5])
    # the mean divides the exact sum (TF sums uint16 and uint32 past their range)
    exact = m.astype(object).sum(1)
    if name != "uint64":
        np.testing.assert_array_equal(tf.reduce_mean(x, 1).numpy(), (exact // 100).astype(name))
    else:
        np.testing.assert_array_equal(tf.reduce_mean(x, 1).numpy(),
                                      ((exact % 2**64) // 100).astype(name))
    for dst in (np.float32, np.float64, np.int64, np.int8):
        np.testing.assert_array_equal(tf.cast(x, tf.as_dtype(dst)).numpy(), m.astype(dst))


@pytest.mark.parametrize("name", UNSIGNED)
def test_shifts_clamp_the_amount_read_unsigned(name):
    a, b = _operands(name, n=512, seed=2)
    bits = np.dtype(name).itemsize * 8
    s = (b % np.array(bits + 8, name)).astype(name)
    s[:3] = np.array([int(np.iinfo(name).max), bits, 0], name)   # huge, width, none
    clamped = np.minimum(s, bits - 1).astype(name)
    got_r = tf.bitwise.right_shift(tf.constant(a), tf.constant(s)).numpy()
    got_l = tf.bitwise.left_shift(tf.constant(a), tf.constant(s)).numpy()
    np.testing.assert_array_equal(got_r, a >> clamped)
    np.testing.assert_array_equal(got_l, a << clamped)


@pytest.mark.parametrize("name", UNSIGNED)
def test_division_by_zero_names_the_op(name):
    x = tf.constant(np.array([1, 2], name))
    with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
        x // tf.constant(np.array([1, 0], name))


def test_an_op_without_an_unsigned_kernel_is_not_found():
    """Declared for the type (as TF declares RealDiv) but with no kernel: TF's NotFoundError
    naming the op and the type, never ATen's error."""
    x = tf.constant(np.array([1, 2], np.uint32))
    with pytest.raises(errors.NotFoundError, match="(?s)RealDiv.*DT_UINT32"):
        tf.raw_ops.RealDiv(x=x, y=x)


def test_values_keep_their_type_through_holders_of_values(tmp_path):
    """Variables, checkpoints, SavedModels, tf.data, function calls and the JIT hold unsigned
    values as they are: what comes back out is the same type and bits."""
    big = np.array([1, 2**64 - 1, 2**63], np.uint64)
    v = tf.Variable(big)
    v.assign_add(tf.constant(np.array([1, 1, 1], np.uint64)))
    np.testing.assert_array_equal(v.numpy(), big + np.uint64(1))
    ckpt = tf.train.Checkpoint(v=v)
    path = ckpt.save(str(tmp_path / "ckpt"))
    v.assign(tf.zeros([3], tf.uint64))
    ckpt.restore(path)
    np.testing.assert_array_equal(v.numpy(), big + np.uint64(1))

    module = tf.Module()
    module.f = tf.function(lambda x: tf.maximum(x, x // 3) + 1,
                           input_signature=[tf.TensorSpec([3], tf.uint64)])
    tf.saved_model.save(module, str(tmp_path / "model"))
    loaded = tf.saved_model.load(str(tmp_path / "model"))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(loaded.f(tf.constant(big)).numpy(), big + np.uint64(1))

    ds = tf.data.Dataset.from_tensor_slices(big).map(lambda x: x // 2).batch(3)
    (batch,) = list(ds)
    assert batch.dtype == tf.uint64
    np.testing.assert_array_equal(batch.numpy(), big // np.uint64(2))

    a = np.array([1, 2**32 - 1, 5], np.uint32)
    b = np.array([3, 2, 2**31 + 1], np.uint32)
    for jit in (False, True):
        f = tf.function(lambda x, y: tf.maximum(x * y + 1, x // y) - y, jit_compile=jit)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(f(a, b).numpy(),
                                          np.maximum(a * b + np.uint32(1), a // b) - b)


def test_tensor_protos_use_tensorflows_fields():
    for name, field in (("uint16", "int_val"), ("uint32", "uint32_val"),
                        ("uint64", "uint64_val")):
        top = int(np.iinfo(name).max)
        p = tf.make_tensor_proto(np.array(top, name))
        assert list(getattr(p, field)) == [top]
        many = np.array([0, top, 5], name)
        back = tf.make_ndarray(tf.make_tensor_proto(many))
        assert back.dtype == many.dtype
        np.testing.assert_array_equal(back, many)
