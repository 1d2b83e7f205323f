"""tf.io.decode_jpeg (DecodeJpeg) and JPEG files through decode_image / decode_png: TF 2.21's
pixels bit for bit (tests/fixtures/decode_jpeg: every attr — ratio, fancy_upscaling,
dct_method, channels, truncation — on 4:2:0, 4:2:2, 4:4:0, 4:4:4, grayscale, progressive,
restart-marker, odd-sized, tiny and CMYK files), errors and static shapes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("image_codec_extra")
CASES_MODULE = fixture_modules.load("decode_jpeg", "cases")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "decode_jpeg" / "values.json").read_text())
CASES = CASES_MODULE.cases(tf, CONFIGS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    got, want = CASES_MODULE.record(CONFIGS, name, CASES[name]), TF_VALUES[name]
    if name in CASES_MODULE.RECOVERED:      # the rows decoded from the data itself
        rows = CASES_MODULE.RECOVERED[name]
        np.testing.assert_array_equal(CONFIGS.values(got)[:rows], CONFIGS.values(want)[:rows])
        assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
    else:
        assert got == want


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted([*CASES, "static_shapes"])


def test_static_shapes_match_tensorflow():
    assert CASES_MODULE.static_shapes(tf) == TF_VALUES["static_shapes"]


@pytest.mark.parametrize("attrs", sorted(CONFIGS.ATTRS))
def test_decode_jpeg_is_decode_and_crop_of_the_whole_image(attrs):
    """TF's DecodeJpeg and DecodeAndCropJpeg share one decode (jpeg::Uncompress)."""
    data = CASES_MODULE.read("p420.jpg")
    kw = CONFIGS.ATTRS[attrs]
    whole = tf.io.decode_jpeg(data, **kw).numpy()
    h, w = whole.shape[:2]
    np.testing.assert_array_equal(tf.io.decode_and_crop_jpeg(data, [0, 0, h, w], **kw), whole)


@pytest.mark.parametrize("kw, message", [
    ({"ratio": 3}, "ratio must be 1, 2, 4, or 8, got 3"),
    ({"dct_method": "FLOAT"}, "dct_method must be one of"),
    ({"channels": 4}, "JPEG does not support 4 channels"),
])
def test_bad_attrs_are_tensorflows_errors(kw, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.io.decode_jpeg(CASES_MODULE.read("p420.jpg"), **kw)
