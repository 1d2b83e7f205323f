"""keras.ops result dtypes and shapes against Keras 3.15's (TensorFlow backend), for a grid of
ops x input dtypes (tests/fixtures/keras_ops/keras_ops_dtypes.json, made by generate.py
beside it): every call Keras answers, ndflow answers with the same dtype and shape; every
call Keras refuses, ndflow refuses with an error (not a wrong result)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "keras_ops" / "keras_ops_dtypes.json"
CASES = json.loads(FIXTURE.read_text())["cases"]
# ndflow has no uint16/uint32/uint64 tensors (nor do its ATen kernels): calls that take them
# are skipped, results Keras gives in them are expected as int64 (the same values).
MISSING_DTYPES = {"uint16", "uint32", "uint64"}
# Calls Keras' TensorFlow backend refuses for its own reasons where ndflow answers as NumPy
# does: (op, reason).
KERAS_TF_ONLY_REFUSALS = {
    "i0": "TensorFlow has no bfloat16 kernel for BesselI0 (NotFoundError)",
    "pad": "an int pad_width becomes ((p, p),) and tf.pad wants one row per axis",
}
REFUSALS = (TypeError, ValueError, errors.InvalidArgumentError, errors.NotFoundError,
            errors.UnimplementedError)


def tensor_values(spec):
    """As generate.py's: deterministic positive values in every op's domain."""
    shape, dtype = tuple(spec["t"]), spec["d"]
    if "v" in spec:
        return np.asarray(spec["v"]).reshape(shape)
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % 2 == 0).reshape(shape)
    if dtype.startswith(("int", "uint")):
        return ((np.arange(n) % 3) + 1).astype(dtype).reshape(shape)
    return np.linspace(0.1, 0.9, n).reshape(shape)


def _make(a):
    if isinstance(a, dict) and "t" in a:
        return tf.cast(tf.constant(tensor_values(a)), a["d"])
    if isinstance(a, list):
        return [_make(v) for v in a]
    return a


def _uses_missing(value) -> bool:
    return MISSING_DTYPES & set(json.dumps(value).replace('"', " ").split())


def _function(name):
    obj = tf.keras if name.startswith("activations.") else tf.keras.ops
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _expected(result):
    return [[("int64" if d in MISSING_DTYPES else d), s] for d, s in result]


def _check(case) -> str | None:
    op, args, kwargs, result = case
    try:
        out = _function(op)(*_make(args), **{k: _make(v) for k, v in kwargs.items()})
    except REFUSALS as e:
        if result[0] == "error":
            return None
        return f"{op}{args}{kwargs}: raised {type(e).__name__}: {str(e)[:200]}"
    if result[0] == "error":
        if op in KERAS_TF_ONLY_REFUSALS:
            return None
        return f"{op}{args}{kwargs}: Keras raises {result[1]}, ndflow returned"
    flat = tf.nest.flatten(out)
    got = [[o.dtype.name, list(o.shape)] if hasattr(o, "dtype") else ["python", repr(o)]
           for o in flat]
    if got != _expected(result):
        return f"{op}{args}{kwargs}: got {got}, Keras {result}"
    return None


def _groups():
    groups = defaultdict(list)
    for case in CASES:
        if not _uses_missing(case[1]) and not _uses_missing(case[2]):
            groups[case[0].split(".")[0] if "." in case[0] else case[0][:1]].append(case)
    return groups


GROUPS = _groups()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_result_dtypes_and_shapes_match_keras(group):
    """One test per first letter of the op names (many ops per test: pytest's per-test cost
    would be most of the time otherwise)."""
    problems = [p for p in map(_check, GROUPS[group]) if p]
    assert not problems, f"{len(problems)} of {len(GROUPS[group])}:\n" + "\n".join(problems)
