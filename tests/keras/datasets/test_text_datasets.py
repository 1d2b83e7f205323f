"""tf.keras.datasets imdb, reuters, boston_housing, california_housing: small archives in the
original layouts (tests/fixtures/keras_datasets_text/generate.py) give exactly the arrays
Keras 3.15 returns for the same files and arguments (keras_outputs.json); pickled members
run no code; offline the error names the missing files and the directory."""

import json
import os
import shutil
import zipfile

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from ndflow.keras.datasets import _cache

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures",
                        "keras_datasets_text")
with open(os.path.join(FIXTURES, "keras_outputs.json")) as _f:
    KERAS = json.load(_f)
FILES = ("imdb.npz", "reuters.npz", "boston_housing.npz", "california_housing.npz",
         "imdb_word_index.json", "reuters_word_index.json")


@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    os.makedirs(tmp_path / "datasets")
    for name in FILES:
        shutil.copy(os.path.join(FIXTURES, name), tmp_path / "datasets" / name)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    return tmp_path


def _check(result, expected):
    if isinstance(expected, list):
        assert len(result) == len(expected)
        for r, e in zip(result, expected):
            _check(r, e)
    elif "ragged" in expected:
        assert result.dtype == object and result.ndim == 1
        assert [list(map(int, v)) for v in result] == expected["ragged"]
        assert all(isinstance(v, list) for v in result)
    else:
        assert result.dtype.name == expected["dtype"]
        assert list(result.shape) == expected["shape"]
        np.testing.assert_array_equal(result.ravel(), np.array(expected["values"],
                                                                dtype=result.dtype))


@pytest.mark.parametrize("dataset", ["imdb", "reuters", "boston_housing",
                                     "california_housing"])
def test_same_arrays_as_keras(keras_home, dataset):
    module = getattr(tf.keras.datasets, dataset)
    for case in KERAS[dataset]:
        _check(module.load_data(**case["kwargs"]), case["result"])


def test_word_index_and_label_names(keras_home):
    assert tf.keras.datasets.imdb.get_word_index() == KERAS["imdb_word_index"]
    assert tf.keras.datasets.reuters.get_word_index() == KERAS["imdb_word_index"]
    assert list(tf.keras.datasets.reuters.get_label_names()) == KERAS["reuters_label_names"]


def test_argument_errors_as_keras(keras_home):
    with pytest.raises(ValueError, match="Invalid `test_split` argument: 1"):
        tf.keras.datasets.boston_housing.load_data(test_split=1)
    with pytest.raises(ValueError, match="must be one of 'small', 'large'"):
        tf.keras.datasets.california_housing.load_data(version="tiny")
    with pytest.raises(ValueError, match="no sequence was kept. Increase maxlen"):
        tf.keras.datasets.imdb.load_data(maxlen=2)


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_pickled_code_is_refused(keras_home):
    evil = np.empty(2, dtype=object)
    evil[:] = [[1, 2], _Boom()]
    np.savez(keras_home / "datasets" / "imdb.npz", x_train=evil, y_train=np.zeros(2),
             x_test=evil, y_test=np.zeros(2))
    with pytest.raises(errors.DataLossError, match="Refusing to load `posix.system`|"
                                                   "Refusing to load"):
        tf.keras.datasets.imdb.load_data()


def test_corrupt_and_missing_files(keras_home, monkeypatch):
    path = keras_home / "datasets" / "reuters.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x.npy", b"not an npy file")
    with pytest.raises(errors.DataLossError, match="Corrupt Reuters archive"):
        tf.keras.datasets.reuters.load_data()
    monkeypatch.setenv("KERAS_HOME", str(keras_home / "empty"))
    monkeypatch.setattr(_cache.file_downloads, "download",
                        lambda *a, **k: (_ for _ in ()).throw(OSError("offline")))
    with pytest.raises(errors.UnavailableError, match="california_housing.npz") as info:
        tf.keras.datasets.california_housing.load_data()
    assert str(keras_home / "empty" / "datasets") in str(info.value)
