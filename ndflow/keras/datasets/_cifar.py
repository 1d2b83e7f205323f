"""`tf.keras.datasets.cifar10` and `cifar100`: CIFAR's "python version" archives, pickled
batches inside a .tar.gz.

The batches are read straight out of the archive (nothing is extracted, so no member path
can escape the cache directory) or, where Keras already extracted the archive into its cache,
from those files. Each batch is a dict pickled by Python 2 — b'data': (N, 3072) uint8 rows
of 1024 red, 1024 green, 1024 blue values; the labels: N ints — and is read by the
restricted unpickler, which refuses anything but arrays and plain containers.
"""

import os
import pickle
import tarfile
import zlib

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.errors import DataLossError
from ndflow.keras import backend_functions
from ndflow.keras.datasets import _cache
from ndflow.keras.datasets._restricted_pickle import load_restricted

CIFAR_HOST = "https://www.cs.toronto.edu/~kriz/"
_CIFAR10_SHA256 = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"
_CIFAR10_MEMBERS = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
_MAX_BATCH_BYTES = 1 << 30   # CIFAR-100's train batch, the largest, is ~155 MB
_CIFAR100_SHA256 = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


@keras_export("keras.datasets.cifar10.load_data")
def load_cifar10():
    """CIFAR-10: 50,000 training and 10,000 test 32x32 colour images in 10 classes
    (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck).

    Read from cifar-10-python.tar.gz in `$KERAS_HOME/datasets` (default
    `~/.keras/datasets`; Keras' own cached copy is used too), downloaded from the CIFAR
    site (SHA-256 checked) when missing.

    Returns:
      `(x_train, y_train), (x_test, y_test)`: uint8 images (N, 32, 32, 3) (channels last
      by default, `keras.config.image_data_format()`) and uint8 labels (N, 1) in 0..9.
    """
    batches = load_archive("CIFAR-10", "cifar-10-python.tar.gz", "cifar-10-batches-py-target",
                           _CIFAR10_SHA256, "cifar-10-batches-py", _CIFAR10_MEMBERS)
    parts = [images_and_labels(batch, "labels", where) for batch, where in batches]
    x_train = np.concatenate([x for x, _ in parts[:5]])
    y_train = np.concatenate([np.asarray(y, np.uint8) for _, y in parts[:5]])
    x_test, y_test = parts[5][0], np.asarray(parts[5][1]).astype(np.uint8)
    return ((to_image_format(x_train), y_train.reshape(-1, 1)),
            (to_image_format(x_test), y_test.reshape(-1, 1)))


@keras_export("keras.datasets.cifar100.load_data")
def load_cifar100(label_mode="fine"):
    """CIFAR-100: 50,000 training and 10,000 test 32x32 colour images in 100 fine classes
    (grouped into 20 coarse ones).

    Read from cifar-100-python.tar.gz in `$KERAS_HOME/datasets` (default
    `~/.keras/datasets`; Keras' own cached copy is used too), downloaded from the CIFAR
    site (SHA-256 checked) when missing.

    Args:
      label_mode: "fine" (100 classes) or "coarse" (20 superclasses).

    Returns:
      `(x_train, y_train), (x_test, y_test)`: uint8 images (N, 32, 32, 3) (channels last
      by default, `keras.config.image_data_format()`) and int64 labels (N, 1).

    Raises:
      ValueError: an unknown `label_mode`.
    """
    if label_mode not in ["fine", "coarse"]:
        raise ValueError('`label_mode` must be one of `"fine"`, `"coarse"`. '
                         f"Received: label_mode={label_mode}.")
    members = ["train", "test"]
    batches = load_archive("CIFAR-100", "cifar-100-python.tar.gz", "cifar-100-python-target",
                           _CIFAR100_SHA256, "cifar-100-python", members)
    (x_train, y_train), (x_test, y_test) = (
        images_and_labels(batch, f"{label_mode}_labels", where) for batch, where in batches)
    # Keras reshapes the label lists as they are: NumPy's default integer (int64)
    y_train, y_test = (np.reshape(y, (len(y), 1)) for y in (y_train, y_test))
    return (to_image_format(x_train), y_train), (to_image_format(x_test), y_test)


def load_archive(dataset: str, archive: str, keras_name: str, sha256: str,
                 inner: str, members: list) -> list:
    """[(batch dict, where it was read)] for `members` (names inside `inner/`) of `archive`.

    Looked up as Keras 3 caches it (`<keras_name>_archive`, extracted into `<keras_name>/`)
    or under its original name; downloaded under the original name when missing."""
    directory = _cache.datasets_dir()
    extracted = os.path.join(directory, keras_name, inner)
    if all(os.path.isfile(os.path.join(extracted, m)) for m in members):
        paths = [os.path.join(extracted, m) for m in members]
        return [(_read_batch_file(p), p) for p in paths]
    keras_archive = os.path.join(directory, f"{keras_name}_archive")
    if os.path.isfile(keras_archive):
        path = keras_archive
    else:
        [path] = _cache.fetch(dataset, [(archive, CIFAR_HOST + archive, sha256)])
    return _read_batches_from_tar(path, inner, members)


def _read_batch_file(path: str) -> dict:
    with open(path, "rb") as f:
        return _parse_batch(f.read(), path)


def _read_batches_from_tar(path: str, inner: str, members: list) -> list:
    try:
        with tarfile.open(path, "r:*") as tar:
            batches = []
            for m in members:
                name = f"{inner}/{m}"
                try:
                    info = tar.getmember(name)
                except KeyError:
                    raise DataLossError(None, None, f"Corrupt CIFAR archive {path}: it has no "
                                                    f"member {name}") from None
                if info.size > _MAX_BATCH_BYTES:
                    raise DataLossError(None, None, f"Corrupt CIFAR archive {path}: member "
                                                    f"{name} claims {info.size} bytes (a "
                                                    "CIFAR batch holds at most ~160 MB)")
                stream = tar.extractfile(info)
                if stream is None:
                    raise DataLossError(None, None, f"Corrupt CIFAR archive {path}: member "
                                                    f"{name} is not a regular file")
                where = f"{path}:{name}"
                batches.append((_parse_batch(stream.read(), where), where))
            return batches
    except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
        raise DataLossError(None, None, f"Corrupt CIFAR archive {path}: {e}") from None


def _parse_batch(data: bytes, where: str) -> dict:
    try:
        batch = load_restricted(data)
    except pickle.UnpicklingError as e:
        raise DataLossError(None, None, f"Unsafe or corrupt CIFAR batch {where}: {e}") from None
    except Exception as e:  # any malformed pickle stream: EOFError, ValueError, struct.error...
        raise DataLossError(None, None, f"Corrupt CIFAR batch {where}: "
                                        f"{type(e).__name__}: {e}") from None
    if not isinstance(batch, dict) or not all(isinstance(k, bytes) for k in batch):
        raise DataLossError(None, None, f"Corrupt CIFAR batch {where}: expected a dict with "
                                        f"byte-string keys, got {type(batch).__name__}")
    return {k.decode("utf8", "replace"): v for k, v in batch.items()}


def images_and_labels(batch: dict, label_key: str, where: str):
    """(N, 3, 32, 32) uint8 images and (N,) labels of one batch dict, checked."""
    data, labels = batch.get("data"), batch.get(label_key)
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 \
            or data.shape[1] != 3 * 32 * 32:
        got = f"{data.dtype} {data.shape}" if isinstance(data, np.ndarray) else \
            type(data).__name__
        raise DataLossError(None, None, f"Corrupt CIFAR batch {where}: 'data' must be a "
                                        f"(N, 3072) uint8 array, got {got}")
    if not isinstance(labels, list | np.ndarray) or len(labels) != data.shape[0]:
        raise DataLossError(None, None, f"Corrupt CIFAR batch {where}: expected "
                                        f"{data.shape[0]} '{label_key}', got "
                                        f"{type(labels).__name__} {_length(labels)}")
    return data.reshape(data.shape[0], 3, 32, 32), labels


def _length(x):
    try:
        return f"of length {len(x)}"
    except TypeError:
        return ""


def to_image_format(x: np.ndarray) -> np.ndarray:
    """NCHW batches to Keras' image data format (channels_last by default)."""
    if backend_functions.image_data_format() == "channels_last":
        return x.transpose(0, 2, 3, 1)
    return x
