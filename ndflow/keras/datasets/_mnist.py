"""`tf.keras.datasets.mnist` and `fashion_mnist`: 28x28 grayscale images with 10 classes,
from Keras' mnist.npz (read with pickling off) and Zalando's four gzip IDX files."""

import os
import zipfile

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.errors import DataLossError
from ndflow.data import idx
from ndflow.keras.datasets import _cache

_MNIST_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
_MNIST_KEYS = ("x_train", "y_train", "x_test", "y_test")
# Keras' order and names; Keras records no hashes for these files.
_FASHION_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
                  "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


@keras_export("keras.datasets.mnist.load_data")
def load_mnist(path="mnist.npz"):
    """The MNIST handwritten digits: 60,000 training and 10,000 test 28x28 greyscale
    images, labelled 0-9.

    Read from `path` in `$KERAS_HOME/datasets` (default `~/.keras/datasets`), downloaded
    from Keras' origin (SHA-256 checked) when missing; the archive is read with pickling
    off.

    Args:
      path: the file name (no directory) to cache the archive under.

    Returns:
      `(x_train, y_train), (x_test, y_test)`: uint8 images (N, 28, 28) and uint8 labels
      (N,).

    Raises:
      ValueError: `path` contains a directory, or the archive is malformed.
    """
    path = os.fspath(path)
    if os.sep in path:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify "
                         "the file's parent directory, use the `cache_dir` argument. "
                         f"Received: fname={path}")
    [file] = _cache.fetch("MNIST", [(path, _cache.ORIGIN + "mnist.npz", _MNIST_SHA256)])
    try:
        _check_npz_sizes(file)
        with np.load(file, allow_pickle=False) as f:
            missing = [k for k in _MNIST_KEYS if k not in f.files]
            if missing:
                raise DataLossError(None, None, f"Corrupt MNIST archive {file}: it has no "
                                                f"{missing} (members: {f.files})")
            x_train, y_train, x_test, y_test = (f[k] for k in _MNIST_KEYS)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        # ValueError includes numpy's refusal of pickled (object) members
        raise DataLossError(None, None, f"Corrupt MNIST archive {file}: "
                                        f"{type(e).__name__}: {e}") from None
    return (x_train, y_train), (x_test, y_test)


def _check_npz_sizes(file: str) -> None:
    """Refuses a member whose .npy header claims more data than the member holds (a crafted
    header would otherwise make NumPy allocate the claimed size before failing)."""
    with zipfile.ZipFile(file) as zf:
        for info in zf.infolist():
            with zf.open(info) as member:
                version = np.lib.format.read_magic(member)
                header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                    np.lib.format.read_array_header_2_0
                shape, _, dtype = header(member)
                claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if claimed > info.file_size:
                raise DataLossError(None, None, f"Corrupt MNIST archive {file}: member "
                                                f"{info.filename} claims shape {shape} "
                                                f"({claimed} bytes) but holds "
                                                f"{info.file_size} bytes")


@keras_export("keras.datasets.fashion_mnist.load_data")
def load_fashion_mnist():
    """Fashion-MNIST: 60,000 training and 10,000 test 28x28 greyscale images of clothing,
    labelled 0-9 (T-shirt, trouser, pullover, dress, coat, sandal, shirt, sneaker, bag,
    ankle boot).

    Read from `$KERAS_HOME/datasets/fashion-mnist` (default
    `~/.keras/datasets/fashion-mnist`), downloaded from Keras' origin when missing.

    Returns:
      `(x_train, y_train), (x_test, y_test)`: uint8 images (N, 28, 28) and uint8 labels
      (N,).
    """
    paths = _cache.fetch("Fashion-MNIST", [(f, _cache.ORIGIN + f, None) for f in _FASHION_FILES],
                         subdir="fashion-mnist")
    y_train, x_train, y_test, x_test = (idx.read_idx(p) for p in paths)
    for labels, images, label_path, image_path in ((y_train, x_train, paths[0], paths[1]),
                                                   (y_test, x_test, paths[2], paths[3])):
        _expect(label_path, labels.ndim == 1 and labels.dtype.name == "uint8",
                f"expected 1-d uint8 labels, got {labels.dtype} {labels.shape}")
        _expect(image_path, images.shape[1:] == (28, 28) and images.dtype.name == "uint8",
                f"expected uint8 28x28 images, got {images.dtype} {images.shape}")
        _expect(image_path, len(images) == len(labels),
                f"{len(images)} images but {len(labels)} labels in "
                f"{os.path.basename(label_path)}")
    return (x_train, y_train), (x_test, y_test)


def _expect(path: str, ok: bool, why: str) -> None:
    if not ok:
        raise DataLossError(None, None, f"Not a Fashion-MNIST file {path}: {why}")
