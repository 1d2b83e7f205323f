"""Data for the MNIST example: real MNIST when available, else the bundled UCI digits."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ndflow.core.errors import DataLossError, NotFoundError, UnavailableError
from ndflow.data.digits import load_digits
from ndflow.data.mnist import load_mnist

IMAGE_SIZE = 28
NUM_CHANNELS = 1
PIXEL_DEPTH = 255
NUM_LABELS = 10


@dataclass
class Data:
    train_data: np.ndarray
    train_labels: np.ndarray
    validation_data: np.ndarray
    validation_labels: np.ndarray
    test_data: np.ndarray
    test_labels: np.ndarray
    source: str


def normalize(images: np.ndarray) -> np.ndarray:
    """uint8 [0, 255] images -> float32 NHWC in [-0.5, 0.5], as the original example."""
    data = images.astype(np.float32)
    data = (data - (PIXEL_DEPTH / 2.0)) / PIXEL_DEPTH
    return data.reshape(-1, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS)


def fake_data(num_images: int) -> tuple[np.ndarray, np.ndarray]:
    """Generated data of MNIST's dimensions (the original `--self_test` data)."""
    data = np.ndarray(shape=(num_images, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS), dtype=np.float32)
    labels = np.zeros(shape=(num_images,), dtype=np.int64)
    for image in range(num_images):
        label = image % 2
        data[image, :, :, 0] = label - 0.5
        labels[image] = label
    return data, labels


def load(data_dir: str | None, self_test: bool, eval_batch_size: int) -> Data:
    if self_test:
        print("Running self-test.")
        train = fake_data(256)
        validation = fake_data(eval_batch_size)
        test = fake_data(eval_batch_size)
        return Data(*train, *validation, *test, source="self_test")
    try:
        splits = load_mnist(data_dir)
    except (UnavailableError, NotFoundError, DataLossError, OSError) as e:
        print(f"MNIST is not available: {e}\nTraining on the bundled UCI handwritten digits "
              "(1797 8x8 images scaled to 28x28) instead.", file=sys.stderr)
        splits = load_digits()
    return Data(normalize(splits.train.images), splits.train.labels,
                normalize(splits.validation.images), splits.validation.labels,
                normalize(splits.test.images), splits.test.labels, source=splits.source)


def error_rate(predictions: np.ndarray, labels: np.ndarray) -> float:
    """Error rate in percent from dense predictions and sparse labels."""
    return 100.0 - (100.0 * np.sum(np.argmax(predictions, 1) == labels) / predictions.shape[0])
