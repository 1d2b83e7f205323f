"""MNIST in its original format: four gzip-compressed IDX files in a directory.

    splits = load_mnist("~/.ndflow/datasets/mnist")   # downloads missing files when online
    splits.train.images   # (55000, 28, 28) uint8, 0 = background, 255 = ink
    splits.train.labels   # (55000,) int64 in 0..9

The validation split is the first `validation_size` (default 5000) training images, as in
TensorFlow's MNIST examples; the test split is the 10,000 t10k images.

Errors are TensorFlow's: `NotFoundError` when a file is missing and downloading is off,
`UnavailableError` when no mirror can be reached (offline fails after one quick attempt per
mirror), `DataLossError` for a corrupt or truncated file. A download is validated before it
replaces anything, so a failed or interrupted download never leaves a broken file behind.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import tempfile
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ndflow.core.errors import DataLossError, NotFoundError, UnavailableError
from ndflow.data.idx import read_idx
from ndflow.data.splits import DatasetSplits, LabeledImages

IMAGE_SIZE = 28
NUM_CLASSES = 10
TRAIN_SIZE = 60000
TEST_SIZE = 10000
VALIDATION_SIZE = 5000

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
FILES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)
_EXPECTED = {TRAIN_IMAGES: ("images", TRAIN_SIZE), TRAIN_LABELS: ("labels", TRAIN_SIZE),
             TEST_IMAGES: ("images", TEST_SIZE), TEST_LABELS: ("labels", TEST_SIZE)}

MIRRORS = (
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)
DEFAULT_TIMEOUT = 5.0  # seconds per connection attempt / read
MAX_DOWNLOAD_BYTES = 64 << 20  # the largest MNIST file is under 10 MB


def default_directory() -> Path:
    return Path("~/.ndflow/datasets/mnist").expanduser()


def _check(path: str, ok: bool, why: str) -> None:
    if not ok:
        raise DataLossError(None, None, f"Not an MNIST file {path}: {why}")


def _read_bytes(path, ndim: int, magic: str):
    """(name, the unsigned-byte array of rank `ndim`) of the IDX file at `path`."""
    name = os.fspath(path)
    array = read_idx(name)
    _check(name, array.dtype == np.uint8 and array.ndim == ndim,
           f"expected a {ndim}-d unsigned-byte array (magic {magic}), got {array.ndim}-d "
           f"{array.dtype}")
    return name, array


def _check_count(name: str, array: np.ndarray, count: int | None, what: str) -> None:
    _check(name, count is None or array.shape[0] == count,
           f"expected {count} {what}, found {array.shape[0]}")


def read_images(path: str | os.PathLike, count: int | None = None) -> np.ndarray:
    """Images (N, 28, 28) uint8 from an MNIST IDX image file (magic 0x00000803)."""
    name, images = _read_bytes(path, 3, "0x00000803")
    _check(name, images.shape[1:] == (IMAGE_SIZE, IMAGE_SIZE),
           f"expected {IMAGE_SIZE}x{IMAGE_SIZE} images, got {images.shape[1]}x{images.shape[2]}")
    _check_count(name, images, count, "images")
    return images


def read_labels(path: str | os.PathLike, count: int | None = None) -> np.ndarray:
    """Labels (N,) int64 in 0..9 from an MNIST IDX label file (magic 0x00000801)."""
    name, labels = _read_bytes(path, 1, "0x00000801")
    _check_count(name, labels, count, "labels")
    if labels.size and labels.max() >= NUM_CLASSES:
        bad = int(np.argmax(labels >= NUM_CLASSES))
        _check(name, False, f"label {labels[bad]} at index {bad} is not a digit 0..9")
    return labels.astype(np.int64)


def _validate_download(path: Path, filename: str) -> None:
    kind, count = _EXPECTED[filename]
    reader = read_images if kind == "images" else read_labels
    reader(path, count)


def _fetch(url: str, dest: Path, timeout: float) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "ndflow"})
    with urllib.request.urlopen(request, timeout=timeout) as response, open(dest, "wb") as out:
        total = 0
        while chunk := response.read(1 << 16):
            total += len(chunk)
            if total > MAX_DOWNLOAD_BYTES:
                raise OSError(f"{url} is larger than {MAX_DOWNLOAD_BYTES} bytes")
            out.write(chunk)


def download(directory: str | os.PathLike | None = None, *,
             filenames: Sequence[str] = FILES, mirrors: Sequence[str] = MIRRORS,
             timeout: float = DEFAULT_TIMEOUT) -> Path:
    """Downloads the MNIST files in `filenames` that `directory` lacks; returns the directory.

    Mirrors are tried in order; one that fails (unreachable, timed out, bad file) is not tried
    again for the later files, so without a network this fails after one quick attempt per
    mirror with `UnavailableError`. Each file is checked before it is moved into place.
    """
    target = Path(directory).expanduser() if directory is not None else default_directory()
    target.mkdir(parents=True, exist_ok=True)
    live = list(mirrors)
    failures: list[str] = []
    for filename in filenames:
        if filename not in _EXPECTED:
            raise ValueError(f"{filename!r} is not an MNIST file; expected one of {FILES}")
        final = target / filename
        if final.exists():
            continue
        for mirror in list(live):
            url = mirror + filename
            fd, tmp_name = tempfile.mkstemp(prefix=f".{filename}.", suffix=".part", dir=target)
            os.close(fd)
            tmp = Path(tmp_name)
            try:
                _fetch(url, tmp, timeout)
                _validate_download(tmp, filename)
                os.replace(tmp, final)
                break
            except (OSError, http.client.HTTPException, DataLossError, ValueError) as e:
                failures.append(f"{url}: {e}")
                live.remove(mirror)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
        else:
            raise UnavailableError(
                None, None,
                f"Could not download MNIST file {filename}; tried:\n  " + "\n  ".join(failures)
                + f"\nPut the four files {', '.join(FILES)} into {target} "
                "(or use ndflow.data.digits for an offline dataset).")
    return target


def load_mnist(directory: str | os.PathLike | None = None, *, download_missing: bool = True,
               validation_size: int = VALIDATION_SIZE, mirrors: Sequence[str] = MIRRORS,
               timeout: float = DEFAULT_TIMEOUT) -> DatasetSplits:
    """MNIST from `directory` (default ~/.ndflow/datasets/mnist), downloading missing files
    when `download_missing`. The first `validation_size` training images form the validation
    split. Files may hold fewer examples than the real MNIST (a subset in the same format)."""
    target = Path(directory).expanduser() if directory is not None else default_directory()
    missing = [f for f in FILES if not (target / f).is_file()]
    if missing:
        if not download_missing:
            raise NotFoundError(None, None, f"MNIST files missing from {target}: "
                                            f"{', '.join(missing)}")
        download(target, filenames=missing, mirrors=mirrors, timeout=timeout)
    train_images = read_images(target / TRAIN_IMAGES)
    train_labels = read_labels(target / TRAIN_LABELS, train_images.shape[0])
    test_images = read_images(target / TEST_IMAGES)
    test_labels = read_labels(target / TEST_LABELS, test_images.shape[0])
    if not 0 <= validation_size < train_images.shape[0]:
        raise ValueError(f"validation_size must be in [0, {train_images.shape[0]}), "
                         f"got {validation_size}")
    return DatasetSplits(
        train=LabeledImages(train_images[validation_size:], train_labels[validation_size:]),
        validation=LabeledImages(train_images[:validation_size], train_labels[:validation_size]),
        test=LabeledImages(test_images, test_labels),
        source="mnist",
    )
