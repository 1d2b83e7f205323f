"""ndflow.data.mnist: reading MNIST IDX files, validation, and downloading (on loopback)."""

from __future__ import annotations

import functools
import gzip
import http.server
import socket
import threading

import numpy as np
import pytest

from ndflow.core.errors import DataLossError, NotFoundError, UnavailableError
from ndflow.data import mnist
from tests.data.idx_writer import idx_bytes, write_idx


def _fake_mnist(directory, n_train=12, n_test=5, seed=0):
    rng = np.random.default_rng(seed)
    arrays = {
        mnist.TRAIN_IMAGES: rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        mnist.TRAIN_LABELS: rng.integers(0, 10, n_train, dtype=np.uint8),
        mnist.TEST_IMAGES: rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        mnist.TEST_LABELS: rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    directory.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        write_idx(directory / name, array)
    return arrays


def test_load_round_trip(tmp_path):
    arrays = _fake_mnist(tmp_path)
    splits = mnist.load_mnist(tmp_path, download_missing=False, validation_size=4)
    assert splits.source == "mnist"
    assert splits.train.images.shape == (8, 28, 28) and splits.train.images.dtype == np.uint8
    assert splits.train.labels.dtype == np.int64
    np.testing.assert_array_equal(splits.validation.images, arrays[mnist.TRAIN_IMAGES][:4])
    np.testing.assert_array_equal(splits.train.labels, arrays[mnist.TRAIN_LABELS][4:])
    np.testing.assert_array_equal(splits.test.images, arrays[mnist.TEST_IMAGES])
    np.testing.assert_array_equal(splits.test.labels, arrays[mnist.TEST_LABELS])
    assert len(splits.validation) == 4 and splits.test.num_examples == 5


def test_missing_files_without_download(tmp_path):
    _fake_mnist(tmp_path)
    (tmp_path / mnist.TEST_LABELS).unlink()
    with pytest.raises(NotFoundError, match=mnist.TEST_LABELS):
        mnist.load_mnist(tmp_path, download_missing=False, validation_size=2)


@pytest.mark.parametrize("name,array,message", [
    (mnist.TRAIN_IMAGES, np.zeros((12, 27, 28), np.uint8), "28x28"),
    (mnist.TRAIN_IMAGES, np.zeros(12, np.uint8), "3-d unsigned-byte"),
    (mnist.TRAIN_LABELS, np.zeros((12, 28, 28), np.uint8), "1-d unsigned-byte"),
    (mnist.TRAIN_LABELS, np.full(12, 10, np.uint8), "label 10"),
    (mnist.TRAIN_LABELS, np.zeros(11, np.uint8), "expected 12 labels"),
    (mnist.TEST_IMAGES, np.zeros((5, 28, 28), np.float32), "3-d unsigned-byte"),
])
def test_wrong_content_is_reported(tmp_path, name, array, message):
    _fake_mnist(tmp_path)
    write_idx(tmp_path / name, array)
    with pytest.raises(DataLossError, match=message) as info:
        mnist.load_mnist(tmp_path, download_missing=False, validation_size=2)
    assert name in str(info.value)


def test_truncated_file(tmp_path):
    _fake_mnist(tmp_path)
    path = tmp_path / mnist.TRAIN_IMAGES
    raw = gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(raw[:-100]))
    with pytest.raises(DataLossError, match="truncated"):
        mnist.load_mnist(tmp_path, download_missing=False, validation_size=2)


def test_bad_validation_size(tmp_path):
    _fake_mnist(tmp_path)
    with pytest.raises(ValueError, match="validation_size"):
        mnist.load_mnist(tmp_path, download_missing=False, validation_size=12)


def _closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_offline_download_fails_cleanly(tmp_path):
    mirrors = [_closed_port_url(), _closed_port_url()]
    with pytest.raises(UnavailableError, match="Could not download MNIST") as info:
        mnist.download(tmp_path, mirrors=mirrors, timeout=2)
    assert mirrors[0] in str(info.value) and str(tmp_path) in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_load_offline_raises_unavailable(tmp_path):
    with pytest.raises(UnavailableError):
        mnist.load_mnist(tmp_path / "mnist", mirrors=[_closed_port_url()], timeout=2)
    assert list((tmp_path / "mnist").iterdir()) == []


@pytest.fixture()
def http_mirror(tmp_path):
    """Serves tmp_path/'good' and tmp_path/'bad' on a loopback HTTP server."""
    handler = functools.partial(QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_download_from_mirrors(tmp_path, http_mirror, monkeypatch):
    monkeypatch.setattr(mnist, "_EXPECTED", {
        mnist.TRAIN_IMAGES: ("images", 12), mnist.TRAIN_LABELS: ("labels", 12),
        mnist.TEST_IMAGES: ("images", 5), mnist.TEST_LABELS: ("labels", 5)})
    arrays = _fake_mnist(tmp_path / "good")
    (tmp_path / "bad").mkdir()
    for name in mnist.FILES:  # a mirror serving damaged files
        (tmp_path / "bad" / name).write_bytes(gzip.compress(idx_bytes(np.zeros(3, np.uint8))))
    target = tmp_path / "cache"
    mirrors = [_closed_port_url(), http_mirror + "bad/", http_mirror + "good/"]
    assert mnist.download(target, mirrors=mirrors, timeout=5) == target
    assert sorted(p.name for p in target.iterdir()) == sorted(mnist.FILES)
    splits = mnist.load_mnist(target, download_missing=False, validation_size=2)
    np.testing.assert_array_equal(splits.test.images, arrays[mnist.TEST_IMAGES])
    # Files already present are not fetched again, even with no mirror at all.
    assert mnist.download(target, mirrors=[], timeout=1) == target


def test_download_rejects_unknown_file(tmp_path):
    with pytest.raises(ValueError, match="not an MNIST file"):
        mnist.download(tmp_path, filenames=["x.gz"], mirrors=[])
