"""tf.io.decode_webp (DecodeWebP), WebP files through the other decoders, and
tf.io.decode_and_crop_jpeg (DecodeAndCropJpeg): TF 2.21's results bit for bit
(tests/fixtures/image_codec_extra: WebP files lossless and lossy, still and animated; crops of
4:2:0, 4:2:2, 4:4:4, grayscale, progressive, restart-marker, odd-sized, tiny and CMYK JPEGs
under every attr; errors; static shapes), the source pixels of lossless files, and
independent loop references of libjpeg's upsampling and color conversion."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import image_jpeg
from tests import fixture_modules

CONFIGS = fixture_modules.load("image_codec_extra")
MAKE_FILES = fixture_modules.load("image_codec_extra", "make_files")
HERE = fixture_modules.FIXTURES / "image_codec_extra"
TF_VALUES = json.loads((HERE / "values.json").read_text())
CASES = CONFIGS.cases(tf)


def _read(name: str) -> bytes:
    return (HERE / name).read_bytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    got, want = CONFIGS.record(name, CASES[name]), TF_VALUES[name]
    if not CONFIGS.approximate(name):
        assert got == want
        return
    assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
    diff = np.abs(CONFIGS.values(got).astype(int) - CONFIGS.values(want).astype(int))
    assert diff.max() <= CONFIGS.APPROXIMATE_TOLERANCE
    assert diff.mean() <= CONFIGS.APPROXIMATE_MEAN


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def test_exact_cases_far_outnumber_approximate_ones():
    approximate = [n for n in CASES if CONFIGS.approximate(n)]
    crops = [n for n in CASES if n.startswith("crop_")]
    assert len(approximate) < 0.05 * len(crops)


# WebP ----------------------------------------------------------------------------------


def test_lossless_webp_gives_the_source_pixels():
    rgb = MAKE_FILES.pattern(37, 53, 0)
    got = tf.io.decode_webp(_read("rgb_lossless.webp")).numpy()
    np.testing.assert_array_equal(got, rgb[None])
    rgba = tf.image.decode_webp(_read("rgba_lossless.webp"), channels=4).numpy()[0]
    np.testing.assert_array_equal(rgba[..., :3], rgb)      # exact=True keeps hidden RGB
    assert rgba[:5, :5, 3].max() == 0 and rgba[5:, 5:, 3].max() > 200
    first = tf.io.decode_image(_read("rgb_lossless.webp"), expand_animations=False).numpy()
    np.testing.assert_array_equal(first, rgb)


def test_animation_frames_are_the_shifted_canvases():
    frames = tf.io.decode_webp(_read("anim_rgba.webp")).numpy()
    assert frames.shape == (3, 37, 53, 4)
    for k in (1, 2):
        np.testing.assert_array_equal(frames[k], np.roll(frames[0], 6 * k, axis=1))


def test_webp_errors_are_tensorflows():
    rgba = _read("rgba_lossless.webp")
    for fn, message in [
        (lambda: tf.io.decode_webp(rgba, channels=3),
         "Number of channels requested does not match input"),
        (lambda: tf.io.decode_webp(rgba, channels=1), "WebP only supports 3 or 4 channels"),
        (lambda: tf.io.decode_image(rgba, dtype=tf.float32),
         "WebP only supports uint8 for dtype"),
        (lambda: tf.io.decode_webp(b"RIFF\x00\x00\x00\x00WEBPxxxx"),
         "Failed to decode WebP header."),
        (lambda: tf.io.decode_webp(rgba[:200]), "Failed to decode WebP image."),
        (lambda: tf.io.decode_webp(b""), "Input is empty."),
        (lambda: tf.io.decode_gif(rgba), "Number of channels requested does not match"),
        (lambda: tf.io.decode_webp(b"GIF89a" + bytes(20)), "Bad op type DecodeWebP"),
    ]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            fn()


def test_webp_features_of_headers():
    from ndflow.kernels import image_webp  # noqa: PLC0415
    assert image_webp.features(_read("rgb_lossless.webp")) == (False, False)
    assert image_webp.features(_read("rgba_lossless.webp")) == (True, False)
    assert image_webp.features(_read("rgb_lossy.webp")) == (False, False)
    assert image_webp.features(_read("rgba_lossy.webp")) == (True, False)
    assert image_webp.features(_read("anim_rgba.webp")) == (True, True)
    assert image_webp.features(b"RIFF\x00\x00\x00\x00WEBPxxxx") is None
    assert image_webp.features(_read("rgb_lossless.webp")[:22]) is None


def test_webp_static_shape_in_function():
    f = tf.function(lambda c: tf.io.decode_webp(c, channels=4))
    concrete = f.get_concrete_function(tf.TensorSpec([], tf.string))
    assert concrete.outputs[0].shape.as_list() == [None, None, None, 4]
    np.testing.assert_array_equal(f(tf.constant(_read("rgba_lossy.webp"))).numpy(),
                                  tf.io.decode_webp(_read("rgba_lossy.webp")).numpy())


# JPEG ----------------------------------------------------------------------------------


def _fancy_loop(c: np.ndarray, fh: int, fv: int) -> np.ndarray:
    """jdsample.c's fancy upsamplers as loops over one plane (edges replicated)."""
    rows, cols = c.shape
    c = c.astype(int)
    get = lambda i, j: c[min(max(i, 0), rows - 1), min(max(j, 0), cols - 1)]  # noqa: E731
    out = np.zeros((rows * fv, cols * fh), int)
    for i in range(rows * fv):
        for j in range(cols * fh):
            ci, cj = i // fv, j // fh
            if fv == 2 and fh == 2:
                di, dj = (-1 if i % 2 == 0 else 1), (-1 if j % 2 == 0 else 1)
                near = 3 * get(ci, cj) + get(ci + di, cj)
                beside = 3 * get(ci, cj + dj) + get(ci + di, cj + dj)
                out[i, j] = (3 * near + beside + (8 if j % 2 == 0 else 7)) >> 4
            elif fh == 2:
                dj = -1 if j % 2 == 0 else 1
                out[i, j] = (3 * get(ci, cj) + get(ci, cj + dj) + (1 if j % 2 == 0 else 2)) >> 2
            else:
                di = -1 if i % 2 == 0 else 1
                out[i, j] = (3 * get(ci, cj) + get(ci + di, cj) + (1 if i % 2 == 0 else 2)) >> 2
    return out


@pytest.mark.parametrize("factors", [(2, 2), (2, 1), (1, 2)])
def test_upsampling_matches_loop_reference(factors):
    c = np.random.default_rng(1).integers(0, 256, (5, 7))
    fh, fv = factors
    rows = np.arange(5 * fv)
    got = image_jpeg._upsample(c, rows, 0, 7, 7 * fh, factors, True)  # noqa: SLF001
    np.testing.assert_array_equal(got, _fancy_loop(c, fh, fv))
    plain = image_jpeg._upsample(c, rows, 0, 7, 7 * fh, factors, False)  # noqa: SLF001
    np.testing.assert_array_equal(plain, np.repeat(np.repeat(c, fv, 0), fh, 1))


@pytest.mark.parametrize("name", ["p420.jpg", "p422.jpg", "odd420.jpg", "tiny420.jpg"])
def test_numpy_fallback_matches_the_numba_kernel(name, monkeypatch):
    """Without numba the upsampling and color conversion run in NumPy: same pixels."""
    data = _read(name)
    kws = [{}, {"dct_method": "INTEGER_ACCURATE"},
           {"dct_method": "INTEGER_ACCURATE", "fancy_upscaling": False}, {"ratio": 2}]

    def decode_all():
        out = []
        for kw in kws:
            h, w = (-(-d // kw.get("ratio", 1)) for d in CONFIGS._size(name[:-4]))  # noqa: SLF001
            for win in ([0, 0, h, w], [0, min(16, w - 1), h, max(1, w - 16)],
                        [h // 2, 1, 1, 1]):
                out.append(tf.io.decode_and_crop_jpeg(data, win, **kw).numpy())
        return out
    with_numba = decode_all()
    monkeypatch.setattr(image_jpeg, "_ycc", lambda: None)
    for a, b in zip(with_numba, decode_all(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_kernel_color_conversion_is_libjpegs_tables():
    """The numba kernel's arithmetic YCbCr -> RGB equals jdcolor.c's tables for every
    (Y, Cb, Cr) (no upsampling: 1 x 1 factors)."""
    kernel = image_jpeg._ycc()  # noqa: SLF001
    if kernel is None:
        pytest.skip("numba is not installed")
    cb, cr = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    y = (cb * 7 + cr * 13) % 256
    ycc = np.stack([y, cb, cr], -1).astype(np.uint8)
    out = np.empty_like(ycc)
    kernel(ycc, 0, ycc, 1, 1, 0, 256, 0, 1, 1, False, out)
    np.testing.assert_array_equal(out, image_jpeg.ycc_to_rgb(y, cb, cr))


def test_color_conversion_matches_the_formula():
    y, cb, cr = (np.random.default_rng(s).integers(0, 256, 5000) for s in range(3))
    rgb = image_jpeg.ycc_to_rgb(y, cb, cr).astype(float)
    want = np.stack([y + 1.402 * (cr - 128), y - 0.34414 * (cb - 128) - 0.71414 * (cr - 128),
                     y + 1.772 * (cb - 128)], -1)
    assert np.abs(rgb - np.clip(want, 0, 255)).max() <= 1.0


def test_crops_of_unsubsampled_files_are_slices():
    for name, kw in [("p444.jpg", {}), ("gray.jpg", {}), ("p420.jpg", {"channels": 1}),
                     ("p420.jpg", {"fancy_upscaling": False}), ("p420.jpg", {"ratio": 2})]:
        data = _read(name)
        h, w = -(-61 // kw.get("ratio", 1)), -(-83 // kw.get("ratio", 1))
        full = tf.io.decode_and_crop_jpeg(data, [0, 0, h, w], **kw).numpy()
        for win in ([3, 5, 20, 30], [0, 16, h, 1], [h - 2, w - 7, 2, 7]):
            got = tf.io.decode_and_crop_jpeg(data, win, **kw).numpy()
            y, x, hh, ww = win
            np.testing.assert_array_equal(got, full[y:y + hh, x:x + ww])


def test_fancy_crop_edges_are_libjpeg_region_edges():
    """A 4:2:0 crop's chroma is upsampled over its 16-pixel-aligned region alone: only the
    columns at that region's sides differ from the whole image's (as TF's)."""
    data = _read("p420.jpg")
    full = tf.io.decode_and_crop_jpeg(data, [0, 0, 61, 83]).numpy().astype(int)
    # region [16, 36): its first column (16) and last (35) take the region's edge values
    got = tf.io.decode_and_crop_jpeg(data, [0, 16, 61, 20]).numpy().astype(int)
    cols = np.flatnonzero(np.abs(got - full[:, 16:36]).max((0, 2)))
    assert set(cols) <= {0, 19} and len(cols) == 2
    # window [17, 37): region [16, 37) is 21 wide, its last column the left half of a
    # chroma sample: no edge differs
    got = tf.io.decode_and_crop_jpeg(data, [0, 17, 61, 20]).numpy()
    np.testing.assert_array_equal(got, full[:, 17:37])


def test_truncated_data_keeps_the_rows_decoded():
    data = _read("p420.jpg")
    cut = data[:int(len(data) * 0.8)]
    whole = tf.io.decode_and_crop_jpeg(data, [0, 0, 61, 83]).numpy()
    got = tf.io.decode_and_crop_jpeg(cut, [0, 0, 61, 83], acceptable_fraction=0.1).numpy()
    rows = np.flatnonzero(got.reshape(61, -1).any(1))
    done = rows.max() + 1
    assert 0 < done < 61 and (got[done:] == 0).all()
    np.testing.assert_array_equal(got[:done], whole[:done])
    with pytest.raises(tf.errors.InvalidArgumentError, match="jpeg::Uncompress failed"):
        tf.io.decode_and_crop_jpeg(cut, [0, 0, 61, 83])
    with pytest.raises(tf.errors.InvalidArgumentError, match="jpeg::Uncompress failed"):
        tf.io.decode_and_crop_jpeg(cut, [done + 2, 0, 5, 5], acceptable_fraction=0.0)


def test_crop_errors_are_tensorflows():
    data = _read("p420.jpg")
    for fn, message in [
        (lambda: tf.io.decode_and_crop_jpeg(data, [0, 0, 62, 83]),
         "jpeg::Uncompress failed. Invalid JPEG data or crop window."),
        (lambda: tf.io.decode_and_crop_jpeg(data, [[0, 0, 1, 1]]),
         r"crop_window must be 1-D, got shape \[1,4\]"),
        (lambda: tf.io.decode_and_crop_jpeg(data, [0, 0, 1]),
         r"crop_size must have four elements \[3\]"),
        (lambda: tf.io.decode_and_crop_jpeg(data, [0, 0, 1, 1], channels=4),
         "JPEG does not support 4 channels"),
        (lambda: tf.io.decode_and_crop_jpeg(data, [0, 0, 1, 1], ratio=3),
         "ratio must be 1, 2, 4, or 8, got 3"),
        (lambda: tf.io.decode_and_crop_jpeg(tf.io.encode_png(np.zeros((2, 2, 3), np.uint8)),
                                            [0, 0, 1, 1]),
         "DecodeAndCropJpeg operation can run on JPEG only, but detected PNG."),
    ]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            fn()


def test_crop_static_shapes_and_function():
    f = tf.function(lambda c: tf.io.decode_and_crop_jpeg(c, [2, 3, 10, 12], channels=3))
    concrete = f.get_concrete_function(tf.TensorSpec([], tf.string))
    assert concrete.outputs[0].shape.as_list() == [10, 12, 3]
    g = tf.function(lambda c, w: tf.io.decode_and_crop_jpeg(c, w))
    concrete = g.get_concrete_function(tf.TensorSpec([], tf.string),
                                       tf.TensorSpec([4], tf.int32))
    assert concrete.outputs[0].shape.as_list() == [None, None, None]
    data = _read("p420.jpg")
    np.testing.assert_array_equal(
        g(tf.constant(data), tf.constant([2, 3, 10, 12])).numpy(),
        tf.io.decode_and_crop_jpeg(data, [2, 3, 10, 12]).numpy())
