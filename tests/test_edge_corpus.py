"""TensorFlow 2.21's values and errors at the edges, over a fixed-seed generated corpus (issue 55):
tests/fixtures/edge_corpus/cases.py draws a few dozen cases per class - special values through
MatMul/einsum, softmax, max pooling, cumsum/cumprod, top_k, integer convolution, argsort,
empty batches, the v1 cross-entropy's dim, and bad inputs TF rejects - and its generate.py
recorded what TF 2.21 returned or raised. Each case here runs ndflow on the same inputs: the
same dtypes and shapes, NaN and inf at the same places, the finite values to the case's
tolerance (exact unless the case says otherwise), or an error of the same class."""

from __future__ import annotations

import builtins
import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

FIXTURE = fixture_modules.FIXTURES / "edge_corpus"
CORPUS = fixture_modules.load("edge_corpus", "cases")
CASES = json.loads((FIXTURE / "corpus.json").read_text())["cases"]
with np.load(FIXTURE / "corpus.npz", allow_pickle=False) as _npz:
    BLOBS = dict(_npz.items())


def _error_class(name):
    return getattr(tf.errors, name, None) or getattr(builtins, name)


def _check_error(case, outputs, error):
    want = _error_class(case["error"])
    assert error is not None, (f"TF raised {case['error']}: {case['message']}; ndflow returned "
                               f"{[(d, a.shape) for d, a in outputs]}")
    assert isinstance(error, want) and (issubclass(want, tf.errors.OpError)
                                        or not isinstance(error, tf.errors.OpError)), (
        f"TF raised {case['error']}: {case['message']}; ndflow raised "
        f"{type(error).__name__}: {error}")


def _check_values(case, want, got):
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    for mask in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(mask(got), mask(want), err_msg=mask.__name__)
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=case["rtol"], atol=case["atol"])
    if case["signed_zeros"]:
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg="signbit")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_matches_tensorflow(case):
    inputs = [CORPUS.unpack(BLOBS, ref) for ref in case["in"]]
    outputs, error = [], None
    try:
        outputs = CORPUS.run(tf, case, inputs)
    except Exception as e:  # noqa: BLE001 - compared with TF's error below
        error = e
    if "error" in case:
        _check_error(case, outputs, error)
        return
    if error is not None:
        raise AssertionError(f"TF returned {case['outputs']}; ndflow raised") from error
    assert [(d, list(a.shape)) for d, a in outputs] == [  # dtypes and shapes
        (o["dtype"], o["shape"]) for o in case["outputs"]]
    if case["check"] == "shape":
        return
    for want, (_, got) in zip(case["outputs"], outputs):
        _check_values(case, CORPUS.unpack(BLOBS, want["at"]), got)


def test_the_corpus_covers_every_class_with_errors_and_values():
    classes, counts = {}, {}
    for case in CASES:
        classes.setdefault(case["cls"], set()).add("error" if "error" in case else "value")
        counts[case["cls"]] = counts.get(case["cls"], 0) + 1
    assert len(classes) == 20 and min(counts.values()) >= 16, counts
    bad_inputs = {"slice_float_indices", "shape_out_type", "identity_n_empty", "argminmax",
                  "ensure_shape_negative", "split_sizes", "where_broadcast", "clip_broadcast",
                  "concat_mismatch"}
    assert all(classes[cls] == {"error", "value"} for cls in bad_inputs), classes
