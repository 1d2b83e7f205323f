"""`tf.saved_model.Asset`: a file a SavedModel carries in its `assets/` directory (a
vocabulary, a config). Functions use `asset.asset_path` (a string tensor); saving copies
the file into `assets/` and binds the functions' captured path to the asset, so after
loading they read the copy beside the SavedModel."""

from __future__ import annotations

import os

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor


@tf_export("saved_model.Asset")
class Asset:
    """`tf.saved_model.Asset(path)`: `asset_path` is the file's path as a string tensor."""

    def __init__(self, path):
        if isinstance(path, Asset):
            path = path.asset_path
        if isinstance(path, Tensor):
            if path.dtype is not dtypes.string:
                raise ValueError(f"Asset path must be a string tensor, got {path.dtype.name}")
            self._path = path
        else:
            self._path = convert_to_tensor(os.fspath(path), dtypes.string)

    @property
    def asset_path(self):
        return self._path

    def _file(self) -> str:
        value = self._path.numpy()
        return value.decode() if isinstance(value, bytes) else str(value)

    def __repr__(self):
        return f"<tf.saved_model.Asset {self._file()!r}>"


def asset_file_names(assets: list) -> list:
    """(source path, file name in assets/) per asset: basenames, made unique as TF does."""
    out, taken = [], set()
    for asset in assets:
        source = asset._file()
        if not os.path.isfile(source):
            raise ValueError(f"Asset file {source} does not exist or is not a file")
        base = os.path.basename(source)
        name, k = base, 0
        while name in taken:
            k += 1
            stem, ext = os.path.splitext(base)
            name = f"{stem}_{k}{ext}"
        taken.add(name)
        out.append((source, name))
    return out
