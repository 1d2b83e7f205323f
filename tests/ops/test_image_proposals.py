"""tf.image.generate_bounding_box_proposals (GenerateBoundingBoxProposals). TF 2.21 has the op
on GPUs only: its CPU build gives the static shapes and shape errors
(tests/fixtures/image_proposals); the values are checked against NumPy references of the GPU
kernel's arithmetic (float32 with a fused multiply-add, and float64), hand-computed cases and
each step's documented semantics."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import image_proposals as kernels
from tests import fixture_modules

CONFIGS = fixture_modules.load("image_proposals")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "image_proposals" / "values.json").read_text())
CASES = CONFIGS.cases(tf)
CLIP = np.float32(math.log(1000.0 / 16.0))


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def _round32(exact: Fraction) -> np.float32:
    """The float32 nearest `exact` (ties to even), by comparing the neighbours."""
    f = np.float32(float(exact))
    candidates = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact),
                                          int(np.array(c).view(np.uint32)) & 1))


def _fma(a, b, c) -> np.float32:
    return _round32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def test_fma32_rounds_once():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3000).astype(np.float32)
    b = rng.standard_normal(3000).astype(np.float32)
    c = (rng.standard_normal(3000) * 4).astype(np.float32)
    # near-midpoint sums: c's last bits cancel most of a * b
    a[:1000] = np.float32(1) + np.float32(2.0 ** -23) * rng.integers(1, 64, 1000)
    b[:1000] = np.float32(1) + np.float32(2.0 ** -23) * rng.integers(1, 64, 1000)
    c[:1000] = -np.float32(1) + np.float32(2.0 ** -24) * rng.integers(-3, 3, 1000)
    # double rounding: a * b + c lands exactly on a float32 midpoint in float64 while the
    # exact sum lies below it (the correct float32 is the odd neighbour) or above it
    u = np.float32(2.0 ** -15)
    a[1000:1002] = np.float32(1) - u
    b[1000:1002] = (np.float32(1) + u) * np.float32(2.0 ** -24)
    c[1000], c[1001] = np.float32(1) + np.float32(2.0 ** -23), np.float32(1)
    a[1002], b[1002], c[1002] = np.float32(1) + u, np.float32(1) + u, np.float32(-1)
    got = kernels.fma32(*(torch.from_numpy(v) for v in (a, b, c))).numpy()
    twice = (a.astype(np.float64) * b + c).astype(np.float32)
    assert (twice[1000:1002] != got[1000:1002]).any()    # the midpoint cases do matter
    want = np.array([_fma(*t) for t in zip(a, b, c)], np.float32)
    np.testing.assert_array_equal(got, want)
    separate = a * b + c
    assert (separate != want).any()      # the cases do tell one rounding from two


def _radix_order(row):
    bits = row.astype(np.float32).view(np.uint32).astype(np.int64)
    key = np.where(bits & 0x80000000, bits ^ 0xFFFFFFFF, bits | 0x80000000)
    return np.argsort(-key, kind="stable")


def _decode32(anchor, delta, info, min_size):
    """One box, float32, in the GPU kernel's statement order (fused ctr + w * d)."""
    f = np.float32
    y1, x1, y2, x2 = (f(v) for v in anchor)
    dy, dx, dh, dw = (f(v) for v in delta)
    dw, dh = f(np.fmin(dw, CLIP)), f(np.fmin(dh, CLIP))
    width = f(x2 - x1)
    ctr_x = f(x1 + f(0.5) * width)
    pred_ctr_x = _fma(width, dx, ctr_x)
    pred_w = f(width * f(np.exp(np.float64(dw))))
    x1, x2 = f(pred_ctr_x - f(0.5) * pred_w), f(pred_ctr_x + f(0.5) * pred_w)
    height = f(y2 - y1)
    ctr_y = f(y1 + f(0.5) * height)
    pred_ctr_y = _fma(height, dy, ctr_y)
    pred_h = f(height * f(np.exp(np.float64(dh))))
    y1, y2 = f(pred_ctr_y - f(0.5) * pred_h), f(pred_ctr_y + f(0.5) * pred_h)
    img_h, img_w, scale = f(info[0]), f(info[1]), f(info[2])
    x1, y1 = f(np.fmax(np.fmin(x1, img_w), f(0))), f(np.fmax(np.fmin(y1, img_h), f(0)))
    x2, y2 = f(np.fmax(np.fmin(x2, img_w), f(0))), f(np.fmax(np.fmin(y2, img_h), f(0)))
    keep = np.fmin(f(x2 - x1), f(y2 - y1)) >= f(f(min_size) * scale)
    return (x1, y1, x2, y2), bool(keep)


def _decode64(anchor, delta, info, min_size):
    y1, x1, y2, x2 = (float(v) for v in anchor)
    dy, dx, dh, dw = (float(v) for v in delta)
    dw, dh = min(dw, float(CLIP)), min(dh, float(CLIP))
    w, h = x2 - x1, y2 - y1
    cx, cy = x1 + 0.5 * w + w * dx, y1 + 0.5 * h + h * dy
    pw, ph = w * math.exp(dw), h * math.exp(dh)
    x1, x2 = min(max(cx - pw / 2, 0), info[1]), min(max(cx + pw / 2, 0), info[1])
    y1, y2 = min(max(cy - ph / 2, 0), info[0]), min(max(cy + ph / 2, 0), info[0])
    return (x1, y1, x2, y2), min(x2 - x1, y2 - y1) >= min_size * info[2]


def _suppressed(a, b, t):
    """NmsGpu's OverThreshold (a kept, b later), float32."""
    f = np.float32
    area_a, area_b = f((a[2] - a[0]) * (a[3] - a[1])), f((b[2] - b[0]) * (b[3] - b[1]))
    if area_a == 0 or area_b == 0:
        return False
    w = f(max(f(min(a[2], b[2]) - max(a[0], b[0])), f(0)))
    h = f(max(f(min(a[3], b[3]) - max(a[1], b[1])), f(0)))
    inter = f(w * h)
    return inter > f(f(f(area_a + area_b) - inter) * f(t))


def reference(scores, deltas, info, anchors, nms, pre, min_size, post, decode=_decode32):
    n, h, w, a = scores.shape
    k = h * w * a
    rois = np.zeros((n, post, 4), np.float64)
    probs = np.zeros((n, post), np.float64)
    flat_anchors = anchors.reshape(-1)[:k * 4].reshape(k, 4)
    for i in range(n):
        row = scores[i].reshape(k)
        order = _radix_order(row)[:min(k, pre)]
        boxes = []
        for j in order:
            box, keep = decode(flat_anchors[j], deltas[i].reshape(k, 4)[j], info[i], min_size)
            if keep:
                boxes.append((box, row[j]))
        kept = []
        for box, score in boxes:
            if len(kept) == post:
                break
            if not any(_suppressed(kb, box, nms) for kb, _ in kept):
                kept.append((box, score))
        for r, (box, score) in enumerate(kept):
            rois[i, r] = [box[1], box[0], box[3], box[2]]
            probs[i, r] = score
    return rois, probs


def _inputs(seed, n=2, h=5, w=6, a=3, size=64.0):
    rng = np.random.default_rng(seed)
    scores = rng.random((n, h, w, a)).astype(np.float32)
    deltas = (rng.standard_normal((n, h, w, 4 * a)) * 0.3).astype(np.float32)
    cy, cx = np.meshgrid((np.arange(h) + 0.5) * size / h, (np.arange(w) + 0.5) * size / w,
                         indexing="ij")
    sizes = np.array([[6, 6], [10, 5], [5, 10]], np.float32)[np.arange(a) % 3] * \
        (1 + np.arange(a) // 3)[:, None]
    anchors = np.stack([cy[..., None] - sizes[:, 0] / 2, cx[..., None] - sizes[:, 1] / 2,
                        cy[..., None] + sizes[:, 0] / 2, cx[..., None] + sizes[:, 1] / 2],
                       -1).reshape(h, w, 4 * a).astype(np.float32)
    info = np.array([[size, size, 1.0, 0, 0], [size * 0.75, size, 0.5, 0, 0]] * n,
                    np.float32)[:n]
    return scores, deltas, info, anchors


@pytest.mark.parametrize("seed,nms,pre,min_size,post", [
    (0, 0.7, 6000, 1.0, 300), (1, 0.5, 40, 2.0, 20), (2, 0.3, 90, 0.0, 10),
    (3, 0.0, 25, 4.0, 50), (4, 1.0, 1000, 0.5, 7), (5, 0.6, 1, 0.0, 3)])
def test_matches_float32_reference(seed, nms, pre, min_size, post):
    scores, deltas, info, anchors = _inputs(seed)
    rois, probs = tf.image.generate_bounding_box_proposals(
        scores, deltas, info, anchors, nms_threshold=nms, pre_nms_topn=pre,
        min_size=min_size, post_nms_topn=post)
    want_rois, want_probs = reference(scores, deltas, info, anchors, nms, pre, min_size, post)
    assert rois.shape == (2, post, 4) and probs.shape == (2, post)
    assert rois.dtype == tf.float32 and probs.dtype == tf.float32
    np.testing.assert_array_equal(probs.numpy(), want_probs)
    # exp may differ from the reference's by an ulp, so may the corners
    np.testing.assert_allclose(rois.numpy(), want_rois, rtol=4e-7, atol=1e-6)
    assert (probs.numpy()[:, 1:] <= probs.numpy()[:, :-1]).all()   # score order


def test_matches_float64_reference():
    scores, deltas, info, anchors = _inputs(7, n=1, h=8, w=8, a=6, size=100.0)
    rois, probs = tf.image.generate_bounding_box_proposals(
        scores, deltas, info, anchors, nms_threshold=0.6, pre_nms_topn=200, min_size=3.0,
        post_nms_topn=60)
    want_rois, want_probs = reference(scores, deltas, info, anchors, 0.6, 200, 3.0, 60,
                                      decode=_decode64)
    np.testing.assert_array_equal(probs.numpy(), want_probs)
    np.testing.assert_allclose(rois.numpy(), want_rois, rtol=1e-5, atol=1e-4)


def _one(scores, deltas, anchors, info=(10.0, 10.0, 1.0, 0.0, 0.0), **kw):
    """One image on a 1 x 1 grid: scores [A], deltas [A, 4], anchors [A, 4]."""
    a = len(scores)
    out = tf.image.generate_bounding_box_proposals(
        np.asarray(scores, np.float32).reshape(1, 1, 1, a),
        np.asarray(deltas, np.float32).reshape(1, 1, 1, 4 * a),
        np.asarray([info], np.float32), np.asarray(anchors, np.float32).reshape(1, 1, 4 * a),
        **kw)
    return out.rois.numpy()[0], out.roi_probabilities.numpy()[0]


def test_decoding_fuses_the_center_update():
    """With dh = dw = 0 (exp exact) every corner is exact: the centers are TF's fused
    ctr + w * d (one rounding), which two roundings would miss for some boxes."""
    rng = np.random.default_rng(5)
    n = 400
    y1 = rng.random(n).astype(np.float32) * 50
    x1 = rng.random(n).astype(np.float32) * 50
    anchors = np.stack([y1, x1, y1 + (rng.random(n) * 30 + 1).astype(np.float32),
                        x1 + (rng.random(n) * 30 + 1).astype(np.float32)], -1)
    deltas = np.zeros((n, 4), np.float32)
    deltas[:, :2] = rng.standard_normal((n, 2)).astype(np.float32) * 0.2
    scores = np.linspace(1, 0.5, n, dtype=np.float32)
    rois, probs = _one(scores, deltas, anchors.astype(np.float32),
                       info=(1000.0, 1000.0, 1.0, 0, 0), min_size=0.0, nms_threshold=1.0,
                       post_nms_topn=n)
    want = np.array([_decode32(a, d, (1000.0, 1000.0, 1.0), 0.0)[0]
                     for a, d in zip(anchors, deltas)], np.float32)[:, [1, 0, 3, 2]]
    np.testing.assert_array_equal(probs, scores)
    np.testing.assert_array_equal(rois, want)
    w = anchors[:, 3] - anchors[:, 1]
    separate = (anchors[:, 1] + np.float32(0.5) * w) + w * deltas[:, 1]
    fused = np.array([_fma(wi, di, ci) for wi, di, ci in
                      zip(w, deltas[:, 1], anchors[:, 1] + np.float32(0.5) * w)], np.float32)
    assert (separate != fused).any()


def test_size_deltas_are_capped():
    """dh, dw above log(1000 / 16) act as log(1000 / 16): a box grows 62.5 times at most."""
    anchors = [[500, 500, 502, 504]]
    for d in (CLIP, np.float32(10.0), np.float32(np.nan)):
        rois, _ = _one([1.0], [[0, 0, d, d]], anchors, info=(1000.0, 1000.0, 1.0, 0, 0),
                       min_size=0.0, post_nms_topn=1)
        np.testing.assert_allclose(rois[0, 2] - rois[0, 0], 2 * 62.5, rtol=1e-5)
        np.testing.assert_allclose(rois[0, 3] - rois[0, 1], 4 * 62.5, rtol=1e-5)


def test_hand_computed_decoding_and_clipping():
    anchors = [[1, 1, 3, 5], [0, 0, 4, 4], [2, 2, 8, 8]]
    deltas = [[0, 0, 0, 0],                     # unchanged
              [0.5, -0.25, math.log(2), 0],     # center +2 in y, -1 in x; twice as tall
              [0, 0, 10, 10]]                   # capped at log(1000/16): clipped to 10 x 10
    rois, probs = _one([0.9, 0.8, 0.7], deltas, anchors, min_size=0.0, post_nms_topn=4,
                       nms_threshold=1.0)
    np.testing.assert_array_equal(probs, np.float32([0.9, 0.8, 0.7, 0]))
    np.testing.assert_allclose(rois[0], [1, 1, 3, 5])
    np.testing.assert_allclose(rois[1], [0, 0, 8, 3], atol=1e-6)      # y 0..8, x -1..3 clipped
    np.testing.assert_allclose(rois[2], [0, 0, 10, 10])
    np.testing.assert_array_equal(rois[3], [0, 0, 0, 0])


def test_min_size_is_scaled_by_image_info():
    anchors = [[0, 0, 2, 2], [0, 0, 4, 3], [0, 0, 6, 6]]
    kw = dict(nms_threshold=1.0, post_nms_topn=3)
    _, probs = _one([0.3, 0.2, 0.1], np.zeros((3, 4)), anchors, min_size=3.0, **kw)
    np.testing.assert_array_equal(probs, np.float32([0.2, 0.1, 0]))       # sides >= 3
    _, probs = _one([0.3, 0.2, 0.1], np.zeros((3, 4)), anchors, min_size=3.0,
                    info=(10, 10, 2.0, 0, 0), **kw)
    np.testing.assert_array_equal(probs, np.float32([0.1, 0, 0]))         # sides >= 6


def test_suppression_threshold_and_zero_area_boxes():
    anchors = [[0, 0, 4, 4], [0, 1, 4, 5], [0, 0, 4, 4], [5, 5, 5, 8]]  # iou(0, 1) = 0.6
    # suppression needs intersection > union * threshold: at 0.6 (12 > 20 * 0.6f = 12) not
    scores = [0.9, 0.8, 0.7, 0.6]
    zero = np.zeros((4, 4))
    for threshold, want in [(0.59, [0.9, 0.6]), (0.6, [0.9, 0.8, 0.6]), (0.61, [0.9, 0.8, 0.6]),
                            (1.0, [0.9, 0.8, 0.7, 0.6])]:
        _, probs = _one(scores, zero, anchors, min_size=0.0, nms_threshold=threshold,
                        post_nms_topn=4)
        np.testing.assert_array_equal(probs[:len(want)], np.float32(want))
        assert (probs[len(want):] == 0).all()
    # the zero-area box (index 3) survives threshold 0, which drops any overlap
    _, probs = _one(scores, zero, anchors, min_size=0.0, nms_threshold=0.0, post_nms_topn=4)
    np.testing.assert_array_equal(probs, np.float32([0.9, 0.6, 0, 0]))


def test_score_order_ties_and_pre_nms_topn():
    anchors = [[0, 0, 2, 2], [3, 3, 5, 5], [6, 6, 8, 8], [0, 6, 2, 8]]
    zero = np.zeros((4, 4))
    rois, probs = _one([0.5, 0.7, 0.5, 0.7], zero, anchors, min_size=0.0, post_nms_topn=4)
    np.testing.assert_array_equal(probs, np.float32([0.7, 0.7, 0.5, 0.5]))
    np.testing.assert_array_equal(rois[:, 0], [3, 0, 0, 6])      # ties: lower index first
    rois, probs = _one([0.5, 0.7, 0.5, 0.7], zero, anchors, min_size=0.0, post_nms_topn=4,
                       pre_nms_topn=3)
    np.testing.assert_array_equal(probs, np.float32([0.7, 0.7, 0.5, 0]))
    # +0.0 before -0.0, NaN (positive) before everything, -inf last, as CUB's radix sort
    _, probs = _one([-0.0, 0.0, np.nan, -np.inf], zero, anchors, min_size=0.0,
                    post_nms_topn=4)
    np.testing.assert_array_equal(np.isnan(probs), [True, False, False, False])
    assert [str(p) for p in probs[1:]] == ["0.0", "-0.0", "-inf"]


def test_grid_and_batch_layout():
    """scores [N, H, W, A] index (h, w, a); anchors and deltas follow it; images apart."""
    scores, deltas, info, anchors = _inputs(9, n=3, h=2, w=3, a=2)
    deltas[:] = 0
    rois, probs = tf.image.generate_bounding_box_proposals(
        scores, deltas, info, anchors, nms_threshold=1.0, pre_nms_topn=100, min_size=0.0,
        post_nms_topn=12)
    for i in range(3):
        order = np.argsort(-scores[i].reshape(-1), kind="stable")
        np.testing.assert_array_equal(probs.numpy()[i], scores[i].reshape(-1)[order])
        want = np.clip(anchors.reshape(-1, 4)[order], 0, [info[i][0], info[i][1]] * 2)
        np.testing.assert_allclose(rois.numpy()[i], want, atol=1e-5)


def test_in_function_and_graph_shapes():
    scores, deltas, info, anchors = _inputs(3)
    f = tf.function(lambda s, d: tf.image.generate_bounding_box_proposals(
        s, d, info, anchors, post_nms_topn=9))
    out = f(tf.constant(scores), tf.constant(deltas))
    assert out._fields == ("rois", "roi_probabilities")
    eager = tf.image.generate_bounding_box_proposals(scores, deltas, info, anchors,
                                                     post_nms_topn=9)
    np.testing.assert_array_equal(out.rois.numpy(), eager.rois.numpy())
    np.testing.assert_array_equal(out.roi_probabilities.numpy(),
                                  eager.roi_probabilities.numpy())
    concrete = f.get_concrete_function(tf.TensorSpec([None, 5, 6, 3]),
                                       tf.TensorSpec([None, 5, 6, 12]))
    assert [o.shape.as_list() for o in concrete.outputs] == [[None, 9, 4], [None, 9]]


def test_empty_inputs():
    rois, probs = tf.image.generate_bounding_box_proposals(
        np.zeros((0, 2, 2, 1), np.float32), np.zeros((0, 2, 2, 4), np.float32),
        np.zeros((0, 5), np.float32), np.zeros((2, 2, 4), np.float32), post_nms_topn=3)
    assert rois.shape == (0, 3, 4) and probs.shape == (0, 3)
    rois, probs = tf.image.generate_bounding_box_proposals(
        np.zeros((1, 0, 2, 1), np.float32), np.zeros((1, 0, 2, 4), np.float32),
        np.ones((1, 5), np.float32), np.zeros((0, 2, 4), np.float32), post_nms_topn=3)
    np.testing.assert_array_equal(rois.numpy(), np.zeros((1, 3, 4)))


@pytest.mark.parametrize("kw,error,message", [
    ({"post_nms_topn": 0}, tf.errors.InvalidArgumentError, "post_nms_topn can't be 0 or less"),
    ({"nms_threshold": 1.5}, tf.errors.InvalidArgumentError,
     "nms_threshold should be between 0 and 1. Got 1.5"),
    ({"nms_threshold": -0.1}, tf.errors.InvalidArgumentError, "nms_threshold should be"),
    ({"pre_nms_topn": 0}, tf.errors.InvalidArgumentError,
     "pre_nms_topn should be greater than 00"),
])
def test_kernel_errors(kw, error, message):
    scores, deltas, info, anchors = _inputs(0, n=1)
    with pytest.raises(error, match=message):
        tf.image.generate_bounding_box_proposals(scores, deltas, info, anchors, **kw)


def test_shape_errors():
    scores, deltas, info, anchors = _inputs(0, n=1, a=3)
    with pytest.raises(tf.errors.OutOfRangeError, match="Box dimensions need to be 4"):
        tf.image.generate_bounding_box_proposals(scores, deltas, info, anchors[..., :9])
    with pytest.raises(tf.errors.InvalidArgumentError, match="bbox_deltas must have shape"):
        tf.image.generate_bounding_box_proposals(scores, deltas[..., :8], info, anchors)
    with pytest.raises(tf.errors.InvalidArgumentError, match="anchors must have"):
        tf.image.generate_bounding_box_proposals(scores, deltas, info, anchors[:2])


def test_not_differentiable():
    scores, deltas, info, anchors = _inputs(0, n=1)
    s = tf.constant(scores)
    with tf.GradientTape() as tape:
        tape.watch(s)
        out = tf.image.generate_bounding_box_proposals(s, deltas, info, anchors)
        loss = tf.reduce_sum(out.roi_probabilities)
    assert tape.gradient(loss, s) is None
