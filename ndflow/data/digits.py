"""The UCI 8x8 handwritten digits shipped inside ndflow, optionally in MNIST's format.

1797 digits (the UCI `optdigits` test set, CC BY 4.0; see README.md beside this file) with
8x8 pixels counting 0..16 set pixels each. `load_digits()` scales them to MNIST's format —
the digit resized (bilinear) to a 20x20 box, placed in a 28x28 image so that its centre of mass
sits at the centre, values 0..255 uint8 with 0 as background — so MNIST code runs on them
unchanged, offline.

The split is fixed and stratified: within each class, in file order, examples 0-6 of every
ten go to train, 7 to validation and 8-9 to test, giving 1266 / 178 / 353 examples with every
class present in each split in proportion.
"""

from __future__ import annotations

import gzip
import io
import zlib
from importlib import resources

import numpy as np

from ndflow.core.errors import DataLossError
from ndflow.data.splits import DatasetSplits, LabeledImages

RESOURCE = "digits.csv.gz"
NUM_EXAMPLES = 1797
SOURCE_SIZE = 8
MAX_COUNT = 16
IMAGE_SIZE = 28
BOX_SIZE = 20
NUM_CLASSES = 10

# Position within a class's examples, modulo 10 -> split.
_VALIDATION_SLOTS = (7,)
_TEST_SLOTS = (8, 9)


def load_raw(data: bytes | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Images (1797, 8, 8) uint8 in 0..16 and labels (1797,) int64 from the packaged CSV
    (or from gzip-compressed CSV `data`). Raises DataLossError if the data is malformed."""
    if data is None:
        data = resources.files("ndflow.data").joinpath(RESOURCE).read_bytes()
    try:
        text = gzip.decompress(data).decode("ascii")
        table = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.int64, ndmin=2)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError) as e:
        raise DataLossError(None, None, f"Corrupt digits data {RESOURCE}: {e}") from e
    if table.shape[1:] != (SOURCE_SIZE * SOURCE_SIZE + 1,):
        raise DataLossError(None, None, f"Corrupt digits data {RESOURCE}: expected "
                                        f"{SOURCE_SIZE * SOURCE_SIZE + 1} columns, got "
                                        f"{table.shape[1]}")
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.size and (pixels.min() < 0 or pixels.max() > MAX_COUNT):
        raise DataLossError(None, None, f"Corrupt digits data {RESOURCE}: pixel values "
                                        f"outside 0..{MAX_COUNT}")
    if labels.size and (labels.min() < 0 or labels.max() >= NUM_CLASSES):
        raise DataLossError(None, None, f"Corrupt digits data {RESOURCE}: labels outside 0..9")
    images = pixels.reshape(-1, SOURCE_SIZE, SOURCE_SIZE).astype(np.uint8)
    return images, labels.astype(np.int64)


def _bilinear_matrix(src: int, dst: int) -> np.ndarray:
    """(dst, src) weights of a 1-D bilinear resize with half-pixel centres (as
    tf.image.resize's 'bilinear' method): out = M @ in."""
    centres = (np.arange(dst) + 0.5) * (src / dst) - 0.5
    centres = np.clip(centres, 0, src - 1)
    lo = np.floor(centres).astype(np.int64)
    hi = np.minimum(lo + 1, src - 1)
    frac = centres - lo
    m = np.zeros((dst, src))
    m[np.arange(dst), lo] += 1 - frac
    m[np.arange(dst), hi] += frac
    return m


def resize_bilinear(images: np.ndarray, size: int) -> np.ndarray:
    """(N, h, w) -> (N, size, size) float64 by separable bilinear interpolation."""
    rows = _bilinear_matrix(images.shape[1], size)
    cols = _bilinear_matrix(images.shape[2], size)
    return np.einsum("ij,njk,lk->nil", rows, images.astype(np.float64), cols)


def to_mnist_format(images: np.ndarray, max_value: int = MAX_COUNT) -> np.ndarray:
    """(N, h, w) images with values 0..max_value -> (N, 28, 28) uint8 like MNIST: scaled to
    0..255, resized to a 20x20 box, centred by centre of mass in the 28x28 frame."""
    if images.ndim != 3:
        raise ValueError(f"expected images of shape (N, h, w), got {images.shape}")
    boxes = resize_bilinear(images, BOX_SIZE) * (255.0 / max_value)
    boxes = np.clip(np.rint(boxes), 0, 255).astype(np.uint8)
    out = np.zeros((images.shape[0], IMAGE_SIZE, IMAGE_SIZE), np.uint8)
    mass = boxes.sum(axis=(1, 2), dtype=np.float64)
    grid = np.arange(BOX_SIZE, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        cy = np.where(mass > 0, (boxes.sum(axis=2) @ grid) / mass, (BOX_SIZE - 1) / 2)
        cx = np.where(mass > 0, (boxes.sum(axis=1) @ grid) / mass, (BOX_SIZE - 1) / 2)
    centre = (IMAGE_SIZE - 1) / 2
    room = IMAGE_SIZE - BOX_SIZE
    top = np.clip(np.rint(centre - cy), 0, room).astype(np.int64)
    left = np.clip(np.rint(centre - cx), 0, room).astype(np.int64)
    for i in range(images.shape[0]):
        out[i, top[i]:top[i] + BOX_SIZE, left[i]:left[i] + BOX_SIZE] = boxes[i]
    return out


def split_indices(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train, validation, test) index arrays of the fixed stratified split (module doc)."""
    rank = np.zeros(labels.shape[0], np.int64)
    for cls in np.unique(labels):
        members = np.flatnonzero(labels == cls)
        rank[members] = np.arange(members.size)
    slot = rank % 10
    validation = np.isin(slot, _VALIDATION_SLOTS)
    test = np.isin(slot, _TEST_SLOTS)
    train = ~(validation | test)
    return np.flatnonzero(train), np.flatnonzero(validation), np.flatnonzero(test)


def load_digits(mnist_format: bool = True) -> DatasetSplits:
    """The packaged digits as train/validation/test splits: (N, 28, 28) uint8 0..255 images
    when `mnist_format`, else the raw (N, 8, 8) uint8 0..16 ones; labels (N,) int64."""
    images, labels = load_raw()
    if mnist_format:
        images = to_mnist_format(images)
    train, validation, test = split_indices(labels)
    return DatasetSplits(
        train=LabeledImages(images[train], labels[train]),
        validation=LabeledImages(images[validation], labels[validation]),
        test=LabeledImages(images[test], labels[test]),
        source="digits" if mnist_format else "digits8x8",
    )
