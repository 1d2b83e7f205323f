"""ndflow.data.digits: the packaged UCI digits, scaled to MNIST's format."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ndflow.core.errors import DataLossError
from ndflow.data import digits


@pytest.fixture(scope="module")
def splits():
    return digits.load_digits()


def test_raw_data():
    images, labels = digits.load_raw()
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert images.min() == 0 and images.max() == 16
    assert labels.dtype == np.int64 and set(labels.tolist()) == set(range(10))
    # The first row of the UCI file is a zero.
    assert labels[0] == 0 and images[0, 0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]


def test_shapes_and_ranges(splits):
    assert splits.source == "digits"
    for split in (splits.train, splits.validation, splits.test):
        assert split.images.shape[1:] == (28, 28) and split.images.dtype == np.uint8
        assert split.labels.shape == (split.images.shape[0],)
        assert split.labels.dtype == np.int64
        assert split.labels.min() >= 0 and split.labels.max() <= 9
        assert split.images.max() == 255  # MNIST's range: 0 background .. 255 ink
    assert (len(splits.train), len(splits.validation), len(splits.test)) == (1266, 178, 353)


def test_split_is_a_partition_and_fixed():
    _, labels = digits.load_raw()
    train, validation, test = digits.split_indices(labels)
    everything = np.concatenate([train, validation, test])
    assert np.array_equal(np.sort(everything), np.arange(labels.size))
    again = digits.split_indices(labels)
    assert all(np.array_equal(a, b) for a, b in zip((train, validation, test), again))


def test_class_balance(splits):
    _, labels = digits.load_raw()
    totals = np.bincount(labels, minlength=10)
    for split, share in ((splits.train, 0.7), (splits.validation, 0.1), (splits.test, 0.2)):
        counts = np.bincount(split.labels, minlength=10)
        assert np.all(np.abs(counts - share * totals) <= 3), (counts, share * totals)


def test_digit_box_and_centering(splits):
    images = splits.train.images.astype(np.float64)
    # Ink stays inside the 28x28 frame with at least a 4-pixel empty border on average,
    # and the centre of mass sits near the centre, as in MNIST.
    rows = images.sum(axis=2) > 0
    cols = images.sum(axis=1) > 0
    height = rows.shape[1] - np.argmax(rows[:, ::-1], axis=1) - np.argmax(rows, axis=1)
    width = cols.shape[1] - np.argmax(cols[:, ::-1], axis=1) - np.argmax(cols, axis=1)
    assert height.max() <= 20 and width.max() <= 20
    ys, xs = np.mgrid[:28, :28]
    mass = images.sum(axis=(1, 2))
    cy = (images * ys).sum(axis=(1, 2)) / mass
    cx = (images * xs).sum(axis=(1, 2)) / mass
    assert np.all(np.abs(cy - 13.5) <= 1.0) and np.all(np.abs(cx - 13.5) <= 1.0)


def test_raw_8x8_option():
    raw = digits.load_digits(mnist_format=False)
    assert raw.train.images.shape[1:] == (8, 8) and raw.train.images.max() <= 16
    assert raw.source == "digits8x8"


def test_resize_bilinear_properties():
    constant = np.full((2, 8, 8), 5.0)
    np.testing.assert_allclose(digits.resize_bilinear(constant, 20), 5.0)
    ramp = np.tile(np.arange(8.0), (1, 8, 1))  # increases along x
    out = digits.resize_bilinear(ramp, 20)
    assert out.shape == (1, 20, 20)
    assert np.all(np.diff(out[0, 0]) >= 0) and out[0, 0, 0] == 0 and out[0, 0, -1] == 7
    np.testing.assert_allclose(out[0, :, 5], out[0, 0, 5])  # constant along y


def test_to_mnist_format_blank_and_full():
    blank = digits.to_mnist_format(np.zeros((1, 8, 8), np.uint8))
    assert blank.shape == (1, 28, 28) and blank.max() == 0
    full = digits.to_mnist_format(np.full((1, 8, 8), 16, np.uint8))
    assert full.max() == 255 and (full > 0).sum() == 400  # the 20x20 box
    assert full[0, 4:24, 4:24].min() == 255


def test_corrupt_packaged_data_is_reported():
    with pytest.raises(DataLossError, match="digits"):
        digits.load_raw(b"not gzip")
    with pytest.raises(DataLossError, match="columns"):
        digits.load_raw(gzip.compress(b"1,2,3\n"))
    row = ",".join(["17"] * 64 + ["3"]).encode()
    with pytest.raises(DataLossError, match="pixel values"):
        digits.load_raw(gzip.compress(row))
    row = ",".join(["1"] * 64 + ["10"]).encode()
    with pytest.raises(DataLossError, match="labels"):
        digits.load_raw(gzip.compress(row))
