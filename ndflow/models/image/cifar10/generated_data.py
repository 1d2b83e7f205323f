"""A small stand-in for CIFAR-10 in its exact binary format, made from the bundled digits.

Without network, and with no `cifar-10-batches-bin` directory, the examples still run: the
UCI handwritten digits shipped with ndflow (ndflow/data/digits.csv.gz, already scaled to
MNIST's 28x28) are padded to 32x32 and painted in two colours per image (background and ink,
drawn from a fixed random stream so that colour says nothing about the label), then written
as CIFAR-10 records: 1 label byte + 3072 image bytes, channel-major (R plane, G plane, B
plane, each row-major). The split is the digits' own: train + validation (1444 images) across
data_batch_1..5.bin, test (353) in test_batch.bin.
"""

from __future__ import annotations

import os

import numpy as np

from ndflow.core.atomic_file import atomic_write
from ndflow.data.digits import load_digits

LABEL_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
NUM_TRAIN_FILES = 5
SEED = 1234


def to_cifar_images(images: np.ndarray, rng: np.random.RandomState) -> np.ndarray:
    """(N, 28, 28) uint8 ink masks -> (N, 32, 32, 3) uint8 colour images."""
    alpha = np.pad(images, ((0, 0), (2, 2), (2, 2))).astype(np.float64)[..., None] / 255.0
    n = images.shape[0]
    background = rng.randint(0, 256, size=(n, 1, 1, 3)).astype(np.float64)
    ink = rng.randint(0, 256, size=(n, 1, 1, 3)).astype(np.float64)
    # Keep the digit legible: push ink away from a background that is too close to it.
    close = np.abs(ink - background).sum(axis=-1, keepdims=True) < 192
    ink = np.where(close, 255.0 - background, ink)
    return np.rint(background * (1 - alpha) + ink * alpha).astype(np.uint8)


def encode_records(images: np.ndarray, labels: np.ndarray) -> bytes:
    """CIFAR-10 binary records: per image one label byte, then the CHW uint8 pixels."""
    chw = np.ascontiguousarray(images.transpose(0, 3, 1, 2)).reshape(images.shape[0], -1)
    records = np.concatenate([labels.astype(np.uint8)[:, None], chw], axis=1)
    return records.tobytes()


def write_batches(directory: str) -> None:
    """Writes data_batch_1..5.bin, test_batch.bin and batches.meta.txt into `directory`."""
    os.makedirs(directory, exist_ok=True)
    splits = load_digits()
    rng = np.random.RandomState(SEED)
    train_images = np.concatenate([splits.train.images, splits.validation.images])
    train_labels = np.concatenate([splits.train.labels, splits.validation.labels])
    train = to_cifar_images(train_images, rng)
    test = to_cifar_images(splits.test.images, rng)
    for i, part in enumerate(np.array_split(np.arange(train.shape[0]), NUM_TRAIN_FILES)):
        atomic_write(os.path.join(directory, f"data_batch_{i + 1}.bin"),
                      encode_records(train[part], train_labels[part]))
    atomic_write(os.path.join(directory, "test_batch.bin"),
                  encode_records(test, splits.test.labels))
    atomic_write(os.path.join(directory, "batches.meta.txt"),
                  ("\n".join(LABEL_NAMES) + "\n").encode())
