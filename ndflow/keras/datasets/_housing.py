"""`tf.keras.datasets.boston_housing` and `california_housing`: regression tables from
Keras' npz archives (members `x`, `y`; read with pickling off), shuffled with NumPy's
RandomState(seed) and split as Keras 3 does, so the same file and seed give Keras' arrays."""

import zipfile

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.core.errors import DataLossError
from ndflow.keras.datasets import _cache, _housing_docs

_BOSTON_SHA256 = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"
_CALIFORNIA_SHA256 = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"


@keras_export("keras.datasets.boston_housing.load_data")
def load_boston_housing(path="boston_housing.npz", test_split=0.2, seed=113):
    _check_split(test_split)
    x, y = _read_xy("Boston Housing", path, "boston_housing.npz", _BOSTON_SHA256)
    return _shuffle_split(x, y, test_split, seed)


@keras_export("keras.datasets.california_housing.load_data")
def load_california_housing(version="large", path="california_housing.npz", test_split=0.2,
                            seed=113):
    _check_split(test_split)
    x, y = _read_xy("California Housing", path, "california_housing.npz", _CALIFORNIA_SHA256)
    if version == "small":
        x, y = x[:600], y[:600]
    elif version != "large":
        raise ValueError("Argument `version` must be one of 'small', 'large'. "
                         f"Received: version={version}")
    return _shuffle_split(x, y, test_split, seed)


def _check_split(test_split) -> None:
    if not (0 <= test_split < 1):
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 "
                         "and 1 (exclusive of 1).")


def _read_xy(dataset: str, path, origin_name: str, sha256: str):
    file = _cache.fetch_fname(dataset, path, origin_name, sha256)
    try:
        with np.load(file, allow_pickle=False) as f:
            missing = [k for k in ("x", "y") if k not in f.files]
            if missing:
                raise DataLossError(None, None, f"Corrupt {dataset} archive {file}: it has "
                                                f"no {missing} (members: {f.files})")
            x, y = f["x"], f["y"]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DataLossError(None, None, f"Corrupt {dataset} archive {file}: "
                                        f"{type(e).__name__}: {e}") from None
    if len(x) != len(y):
        raise DataLossError(None, None, f"Corrupt {dataset} archive {file}: {len(x)} rows "
                                        f"in x but {len(y)} in y")
    return x, y


def _shuffle_split(x, y, test_split, seed):
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))


attach(globals(), _housing_docs.DOCS)
