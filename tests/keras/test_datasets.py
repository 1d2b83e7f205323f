"""tf.keras.datasets on small files in the originals' exact formats (written by
tests/fixtures/keras_datasets/generate.py into a temporary KERAS_HOME): values, dtypes and
shapes as Keras 3.15 returns them, Keras' cache layout, the restricted unpickler, downloads
from a loopback HTTP server (hash checked, nothing left behind on a mismatch) and the
offline error."""

import functools
import hashlib
import http.server
import importlib.util
import io
import os
import pickle
import shutil
import socket
import tarfile
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import DataLossError, UnavailableError
from ndflow.keras.datasets import _cache, _cifar, _mnist
from ndflow.keras.datasets._restricted_pickle import load_restricted

_GEN_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "keras_datasets" / "generate.py"
_spec = importlib.util.spec_from_file_location("keras_datasets_generate", _GEN_PATH)
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    datasets = tmp_path / "kh" / "datasets"
    datasets.mkdir(parents=True)
    return datasets


def _nhwc(x):
    return x.transpose(0, 2, 3, 1)


def test_mnist_npz(home):
    arrays = gen.write_mnist_npz(str(home / "mnist.npz"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    for got, key in ((x_train, "x_train"), (y_train, "y_train"), (x_test, "x_test"),
                     (y_test, "y_test")):
        assert got.dtype == np.uint8 and np.array_equal(got, arrays[key])
    assert x_train.shape == (6, 28, 28) and y_test.shape == (4,)


def test_mnist_other_file_name_and_no_paths(home):
    arrays = gen.write_mnist_npz(str(home / "digits.npz"))
    (x, _), _ = tf.keras.datasets.mnist.load_data(path="digits.npz")
    assert np.array_equal(x, arrays["x_train"])
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        tf.keras.datasets.mnist.load_data(path="sub/mnist.npz")


def test_mnist_npz_with_pickled_member_is_refused(home):
    np.savez(home / "mnist.npz", x_train=np.array([{"a": 1}], dtype=object),
             y_train=np.zeros(1, np.uint8), x_test=np.zeros((1, 28, 28), np.uint8),
             y_test=np.zeros(1, np.uint8))
    with pytest.raises(DataLossError, match=r"Corrupt MNIST archive .*mnist\.npz.*pickle"):
        tf.keras.datasets.mnist.load_data()


@pytest.mark.parametrize("damage", ["truncate", "missing_key", "oversized_header"])
def test_mnist_damaged_archive(home, damage):
    if damage == "oversized_header":   # refused before NumPy allocates the claimed 7.8 PB
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "|u1", "fortran_order": False, "shape": (10**13, 28, 28)})
        with zipfile.ZipFile(home / "mnist.npz", "w") as zf:
            for key in ("x_train", "y_train", "x_test", "y_test"):
                zf.writestr(f"{key}.npy", header.getvalue() + bytes(64))
        match = r"member x_train\.npy claims shape \(10000000000000, 28, 28\)"
    elif damage == "truncate":
        gen.write_mnist_npz(str(home / "mnist.npz"))
        data = (home / "mnist.npz").read_bytes()
        (home / "mnist.npz").write_bytes(data[: len(data) // 2])
        match = "Corrupt MNIST archive"
    else:
        np.savez(home / "mnist.npz", x_train=np.zeros((1, 28, 28), np.uint8))
        match = r"has no \['y_train', 'x_test', 'y_test'\]"
    with pytest.raises(DataLossError, match=match):
        tf.keras.datasets.mnist.load_data()


def test_fashion_mnist_idx(home):
    arrays = gen.write_fashion_mnist(str(home / "fashion-mnist"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
    assert np.array_equal(y_train, arrays["train-labels-idx1-ubyte.gz"])
    assert np.array_equal(x_train, arrays["train-images-idx3-ubyte.gz"])
    assert np.array_equal(y_test, arrays["t10k-labels-idx1-ubyte.gz"])
    assert np.array_equal(x_test, arrays["t10k-images-idx3-ubyte.gz"])
    assert x_train.dtype == y_train.dtype == np.uint8 and x_test.shape == (3, 28, 28)


def test_fashion_mnist_mismatched_counts(home):
    gen.write_fashion_mnist(str(home / "fashion-mnist"))
    shutil.copy(home / "fashion-mnist" / "t10k-labels-idx1-ubyte.gz",
                home / "fashion-mnist" / "train-labels-idx1-ubyte.gz")
    with pytest.raises(DataLossError, match="5 images but 3 labels"):
        tf.keras.datasets.fashion_mnist.load_data()


def _check_cifar10(batches, x_train, y_train, x_test, y_test):
    train = list(batches.values())[:5]
    assert np.array_equal(x_train, np.concatenate([_nhwc(x) for x, _ in train]))
    assert np.array_equal(y_train[:, 0], np.concatenate([y for _, y in train]))
    assert np.array_equal(x_test, _nhwc(batches["test_batch"][0]))
    assert np.array_equal(y_test[:, 0], batches["test_batch"][1])
    assert x_train.dtype == y_train.dtype == x_test.dtype == y_test.dtype == np.uint8
    assert x_train.shape == (15, 32, 32, 3) and y_train.shape == (15, 1)
    assert x_test.shape == (3, 32, 32, 3) and y_test.shape == (3, 1)


def test_cifar10_from_the_original_archive(home):
    batches = gen.write_cifar10(str(home / "cifar-10-python.tar.gz"))
    _check_cifar10(batches, *tf.keras.datasets.cifar10.load_data()[0],
                   *tf.keras.datasets.cifar10.load_data()[1])


@pytest.mark.parametrize("layout", ["keras_archive", "keras_extracted"])
def test_cifar10_from_keras_cache_layout(home, layout):
    archive = home / "cifar-10-batches-py-target_archive"
    batches = gen.write_cifar10(str(archive))
    if layout == "keras_extracted":
        with tarfile.open(archive) as tar:
            tar.extractall(home / "cifar-10-batches-py-target", filter="data")
        archive.unlink()
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    _check_cifar10(batches, x_train, y_train, x_test, y_test)


@pytest.mark.parametrize("label_mode", ["fine", "coarse"])
def test_cifar100(home, label_mode):
    batches = gen.write_cifar100(str(home / "cifar-100-python.tar.gz"))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar100.load_data(label_mode)
    which = 1 if label_mode == "fine" else 2
    assert np.array_equal(x_train, _nhwc(batches["train"][0]))
    assert np.array_equal(x_test, _nhwc(batches["test"][0]))
    assert np.array_equal(y_train[:, 0], batches["train"][which])
    assert np.array_equal(y_test[:, 0], batches["test"][which])
    assert y_train.dtype == np.int64 and y_train.shape == (4, 1) and x_train.dtype == np.uint8


def test_cifar100_label_mode_is_checked(home):
    with pytest.raises(ValueError, match='`label_mode` must be one of `"fine"`, `"coarse"`'):
        tf.keras.datasets.cifar100.load_data("medium")


def test_python2_batches_read_as_keras_does():
    """The generator's stream is a Python 2 pickle: str as SHORT_BINSTRING (bytes keys)."""
    stream = gen.py2_pickle({b"data": np.arange(6, dtype=np.uint8).reshape(2, 3),
                             b"labels": list(range(1200))})
    assert stream.startswith(b"\x80\x02}q\x01(U\x04dataq\x02cnumpy.core.multiarray\n")
    batch = load_restricted(stream)
    assert np.array_equal(batch[b"data"], np.arange(6).reshape(2, 3))
    assert batch[b"labels"] == list(range(1200))


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_restricted_unpickler_refuses_code(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    evil = pickle.dumps({"data": _Exploit()}, protocol=2)  # str key: no _codecs call
    with pytest.raises(pickle.UnpicklingError, match=r"Refusing to load `posix\.system`"):
        load_restricted(evil)
    # the same inside a CIFAR archive: a DataLossError naming the member, nothing run
    gen._tar_gz(str(home / "cifar-100-python.tar.gz"), "cifar-100-python",
                {"train": evil, "test": evil})
    with pytest.raises(DataLossError, match=r"cifar-100-python/train: Refusing to load "
                                            r"`posix\.system`"):
        tf.keras.datasets.cifar100.load_data()
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("payload", [b"\x80\x02cbuiltins\neval\nq\x00.",
                                     b"\x80\x02cnumpy\nload\nq\x00."])
def test_restricted_unpickler_refuses_other_globals(payload):
    with pytest.raises(pickle.UnpicklingError, match="Refusing to load"):
        load_restricted(payload)


@pytest.mark.parametrize("damage", ["missing_member", "truncated", "not_a_dict", "bad_data"])
def test_cifar_damaged_archive(home, damage):
    path = home / "cifar-100-python.tar.gz"
    if damage == "missing_member":
        gen._tar_gz(str(path), "cifar-100-python", {"train": gen.py2_pickle({b"a": 1})})
        match = "has no member cifar-100-python/test"
    elif damage == "truncated":
        gen.write_cifar100(str(path))
        path.write_bytes(path.read_bytes()[:300])
        match = "Corrupt CIFAR archive"
    elif damage == "not_a_dict":
        gen._tar_gz(str(path), "cifar-100-python", {"train": gen.py2_pickle([1]),
                                                    "test": gen.py2_pickle([1])})
        match = "expected a dict with byte-string keys, got list"
    else:
        batch = gen.py2_pickle({b"data": np.zeros((2, 5), np.uint8), b"fine_labels": [1, 2]})
        gen._tar_gz(str(path), "cifar-100-python", {"train": batch, "test": batch})
        match = r"'data' must be a \(N, 3072\) uint8 array, got uint8 \(2, 5\)"
    with pytest.raises(DataLossError, match=match):
        tf.keras.datasets.cifar100.load_data()


# Downloads, against a loopback HTTP server.

@pytest.fixture
def server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_download_with_good_hash(home, server, monkeypatch, capsys):
    root, url = server
    arrays = gen.write_mnist_npz(str(root / "mnist.npz"))
    monkeypatch.setattr(_cache, "ORIGIN", url)
    monkeypatch.setattr(_mnist, "_MNIST_SHA256", _sha256(root / "mnist.npz"))
    (x, _), _ = tf.keras.datasets.mnist.load_data()
    assert np.array_equal(x, arrays["x_train"])
    assert f"Downloading data from {url}mnist.npz" in capsys.readouterr().out
    assert sorted(os.listdir(home)) == ["mnist.npz"]


def test_download_with_bad_hash_leaves_nothing(home, server, monkeypatch):
    root, url = server
    gen.write_mnist_npz(str(root / "mnist.npz"))
    monkeypatch.setattr(_cache, "ORIGIN", url)
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected downloading "
                                         f"{url}mnist.npz: its sha256"):
        tf.keras.datasets.mnist.load_data()
    assert os.listdir(home) == []


def test_download_of_fashion_files_and_cifar_archive(home, server, monkeypatch):
    root, url = server
    arrays = gen.write_fashion_mnist(str(root))
    batches = gen.write_cifar100(str(root / "cifar-100-python.tar.gz"))
    monkeypatch.setattr(_cache, "ORIGIN", url)
    monkeypatch.setattr(_cifar, "CIFAR_HOST", url)
    monkeypatch.setattr(_cifar, "_CIFAR100_SHA256", _sha256(root / "cifar-100-python.tar.gz"))
    (x, _), _ = tf.keras.datasets.fashion_mnist.load_data()
    assert np.array_equal(x, arrays["train-images-idx3-ubyte.gz"])
    assert sorted(os.listdir(home / "fashion-mnist")) == sorted(arrays)
    (x, _), _ = tf.keras.datasets.cifar100.load_data()
    assert np.array_equal(x, _nhwc(batches["train"][0]))


def test_missing_server_file_is_an_unavailable_error(home, server, monkeypatch):
    _, url = server
    monkeypatch.setattr(_cache, "ORIGIN", url)
    with pytest.raises(UnavailableError, match="HTTP Error 404"):
        tf.keras.datasets.mnist.load_data()
    assert os.listdir(home) == []


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_error_names_the_files_and_the_directory(home, monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}/"
    monkeypatch.setattr(_cache, "ORIGIN", url)
    with pytest.raises(UnavailableError) as info:
        tf.keras.datasets.fashion_mnist.load_data()
    message = str(info.value)
    assert "The Fashion-MNIST dataset is not in the Keras cache" in message
    assert "Connection refused" in message
    for name in ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"):
        assert f"  {name}  (from {url}{name})" in message
    assert f"put them in the directory {home / 'fashion-mnist'}" in message
    assert os.listdir(home / "fashion-mnist") == []


def test_offline_cifar_names_the_original_archive(home, monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}/"
    monkeypatch.setattr(_cifar, "CIFAR_HOST", url)
    with pytest.raises(UnavailableError, match=r"cifar-10-python\.tar\.gz  \(from "
                                               rf"{url}cifar-10-python\.tar\.gz\)\nand put "
                                               rf"them in the directory {home}"):
        tf.keras.datasets.cifar10.load_data()
