"""Keras 3's `.weights.h5` format: one HDF5 group per saved object at its path in the object
tree (object_tree.py), `<path>/vars` holding datasets "0".."n-1" and the object's name as the
attribute `name`. A layer's variables are its trainable then non-trainable weights in
creation order; an optimizer's are `iterations`, `learning_rate` (unless scheduled) and its
slots. bfloat16 values are stored as 2-byte opaque data with the attribute dtype="bfloat16".

Files are read defensively as Keras reads them: no soft or external links, no external or
virtual datasets, no dataset declaring far more data than it stores. Loading collects the
objects that fail (wrong count or shapes of variables) and raises Keras' error listing them
(a warning with `skip_mismatch=True`)."""

from __future__ import annotations

import math
import os
import warnings

import h5py
import ml_dtypes
import numpy as np

from ndflow.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer
from ndflow.keras.optimizers.base_optimizer import Optimizer
from ndflow.keras.saving import object_tree

# A dataset declaring more than 4 GiB and over 1000x what it stores is refused (as Keras).
_BOMB_FLOOR_BYTES = 1 << 32
_BOMB_MAX_EXPANSION = 1000


# -- reading groups and datasets safely ------------------------------------------------------
def open_h5(filepath: str) -> h5py.File:
    """The HDF5 file at `filepath` for reading, with errors naming it."""
    if not os.path.exists(filepath):
        raise FileNotFoundError(2, "No such file or directory", filepath)
    try:
        return h5py.File(filepath, "r")
    except OSError as e:
        raise OSError(f"Unable to read the weights file {filepath}: {e} (the file may be "
                      "truncated or corrupted, or not an HDF5 file)") from e


def _check_link(parent, name: str) -> None:
    kind = parent.get(name, default=None, getclass=True, getlink=True)
    if kind in (h5py.ExternalLink, h5py.SoftLink):
        raise ValueError(f"Not allowed: H5 file with {kind.__name__}")


def _member(parent, name: str, path: str):
    """parent[name], not through a link (KeyError(path) where there is none)."""
    if name not in parent:
        raise KeyError(path)
    _check_link(parent, name)
    return parent[name]


def _group(parent, path: str):
    current = parent
    for part in path.split("/"):
        if not part:
            raise ValueError(f"Invalid path in H5 file: {path}")
        current = _member(current, part, path)
        if not isinstance(current, h5py.Group):
            raise ValueError(f"Invalid H5 file, expected Group but received {type(current)}")
    return current


def _dataset(group, name: str):
    ds = _member(group, name, name)
    if not isinstance(ds, h5py.Dataset):
        raise ValueError(f"Invalid H5 file, expected Dataset, received {type(ds)}")
    if ds.external:
        raise ValueError(f"Not allowed: H5 file with external Dataset: {ds.external}")
    if ds.is_virtual:
        raise ValueError("Not allowed: H5 file with virtual Dataset")
    declared = math.prod(ds.shape or ()) * ds.dtype.itemsize
    stored = ds.id.get_storage_size()
    if declared > _BOMB_FLOOR_BYTES and declared > _BOMB_MAX_EXPANSION * stored:
        raise ValueError(f"Not allowed: H5 dataset '{name}' declares {declared} bytes but only "
                         f"{stored} are stored on disk; refusing to load a potential "
                         "decompression/shape bomb.")
    return ds


class VarsStore:
    """The variables of one object: `store["0"]`, `len(store)`, `store.keys()`; writable
    (`store["0"] = value`) when saving. The argument of a layer's `save_own_variables` /
    `load_own_variables`."""

    def __init__(self, group=None, writable: bool = False):
        self._group = group
        self._writable = writable

    def keys(self):
        return list(self._group.keys()) if self._group is not None else []

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, key) -> bool:
        return self._group is not None and key in self._group

    def __getitem__(self, key: str) -> np.ndarray:
        if self._group is None:
            raise KeyError(key)
        ds = _dataset(self._group, key)
        value = ds[()]
        if ds.attrs.get("dtype") == "bfloat16":
            return np.asarray(value).view(ml_dtypes.bfloat16)
        return np.asarray(value)

    def __setitem__(self, key: str, value) -> None:
        if not self._writable:
            raise ValueError("Setting a value is only allowed in write mode.")
        dtype = getattr(value, "dtype", None)
        value = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        if getattr(dtype, "name", None) == "bfloat16":   # a variable's numpy() may widen it
            value = value.astype(ml_dtypes.bfloat16)
        if value.dtype == ml_dtypes.bfloat16:
            ds = self._group.create_dataset(key, data=value.view(np.dtype("V2")))
            ds.attrs["dtype"] = "bfloat16"
        else:
            self._group.create_dataset(key, data=value)


def _entry_group(h5_file, path: str):
    """The `vars` group of the object at `path` (None when the file has none)."""
    if not path:
        return _group(h5_file, "vars") if "vars" in h5_file else None
    for candidate in (path, path.replace("layers", "_layer_checkpoint_dependencies")):
        if candidate in h5_file:
            group = _group(h5_file, candidate)
            if "vars" in group:
                return _group(group, "vars")
    return None


# -- the variables of an object --------------------------------------------------------------
class _Placeholder:
    """A value Keras saves that ndflow keeps no variable for (written as is, ignored when
    read)."""

    def __init__(self, value, dtype):
        self.value = np.asarray(value, dtype=dtype)
        self.shape = self.value.shape

    def numpy(self):
        return self.value


def layer_variables(layer) -> list:
    return list(layer._trainable_variables) + list(layer._non_trainable_variables)


def optimizer_variables(opt) -> list:
    """An optimizer's variables in Keras 3's order. A LossScaleOptimizer is Keras 3's: its own
    iterations and learning rate (always 0), then once built its step counter and dynamic
    scale, then the inner optimizer's variables."""
    if not isinstance(opt, LossScaleOptimizer):
        return list(opt.variables)
    own = [_Placeholder(0, np.int64), _Placeholder(0.0, np.float32)]
    if opt.built:
        if opt.dynamic:
            scale = opt._loss_scale
            own += [scale._num_good_steps, scale._current_loss_scale]
        else:
            own += [_Placeholder(0, np.int64), _Placeholder(opt.initial_scale, np.float32)]
    return own + list(opt.inner_optimizer.variables)


def _shape(var) -> tuple:
    shape = var.shape
    return tuple(shape) if isinstance(shape, tuple) else tuple(shape.as_list())


def check_shape(var, value) -> None:
    """Keras 3's error for assigning a value of another shape."""
    if isinstance(var, _Placeholder) or _shape(var) == np.shape(value):
        return
    raise ValueError("The shape of the target variable and the shape of the target value in "
                     "`variable.assign(value)` must match. "
                     f"variable.shape={_shape(var)}, Received: value.shape={np.shape(value)}. "
                     f"Target variable: {var!r}")


def assign_all(variables: list, values: list) -> None:
    """Assigns each value once every shape has been checked (an object loads whole or not)."""
    for var, value in zip(variables, values):
        check_shape(var, value)
    for var, value in zip(variables, values):
        if not isinstance(var, _Placeholder):
            var.assign(np.asarray(value).astype(var.dtype.np_dtype, copy=False))


def _save_own(obj, store: VarsStore) -> None:
    if isinstance(obj, Optimizer):
        for i, var in enumerate(optimizer_variables(obj)):
            store[str(i)] = var
        return
    hook = getattr(obj, "save_own_variables", None)
    if hook is not None:
        hook(store)
        return
    for i, var in enumerate(layer_variables(obj)):
        store[str(i)] = var


def _check_layer_count(layer, store: VarsStore, own: list) -> None:
    if len(store.keys()) == len(own):
        return
    if not own and not layer.built:
        raise ValueError(
            f"Layer '{layer.name}' was never built and thus it doesn't have any variables. "
            f"However the weights file lists {len(store.keys())} variables for this layer.\n"
            "In most cases, this error indicates that either:\n\n"
            "1. The layer is owned by a parent layer that implements a `build()` method, but "
            "calling the parent's `build()` method did NOT create the state of the child "
            f"layer '{layer.name}'. A `build()` method must create ALL state for the layer, "
            "including the state of any children layers.\n\n"
            "2. You need to implement the `def build_from_config(self, config)` method on "
            f"layer '{layer.name}', to specify how to rebuild it during loading. In this case, "
            "you might also want to implement the method that generates the build config at "
            "saving time, `def get_build_config(self)`. The method `build_from_config()` is "
            "meant to create the state of the layer (i.e. its variables) upon "
            "deserialization.")
    raise ValueError(f"Layer '{layer.name}' expected {len(own)} variables, but received "
                     f"{len(store.keys())} variables during loading. "
                     f"Expected: {[v.name for v in own]}")


def _load_own(obj, store: VarsStore) -> None:
    if isinstance(obj, Optimizer):
        own = optimizer_variables(obj)
        if len(store.keys()) != len(own):
            msg = (f"Skipping variable loading for optimizer '{obj.name}', because it has "
                   f"{len(own)} variables whereas the saved optimizer has "
                   f"{len(store.keys())} variables. ")
            if not own:
                msg += "This is likely because the optimizer has not been called/built yet."
            warnings.warn(msg, stacklevel=4)
            return
        assign_all(own, [store[str(i)] for i in range(len(own))])
        return
    hook = getattr(obj, "load_own_variables", None)
    if hook is not None:
        hook(store)
        return
    own = layer_variables(obj)
    _check_layer_count(obj, store, own)
    assign_all(own, [store[str(i)] for i in range(len(own))])


# -- whole models ----------------------------------------------------------------------------
def save_state(model, h5_file) -> None:
    """Writes every saveable object of `model` into the open (writable) `h5_file`."""
    for path, obj in object_tree.walk(model):
        vars_group = h5_file.create_group(f"{path}/vars" if path else "vars")
        vars_group.attrs["name"] = obj.name
        _save_own(obj, VarsStore(vars_group, writable=True))


def load_state(model, h5_file, skip_mismatch: bool = False) -> None:
    """Assigns `model`'s variables from the open `h5_file`; the objects that fail are listed
    in Keras' ValueError (a warning with `skip_mismatch`)."""
    errors: dict = {}
    for path, obj in object_tree.walk(model):
        try:
            _load_own(obj, VarsStore(_entry_group(h5_file, path)))
        except Exception as e:  # noqa: BLE001 - collected and reported together, as Keras
            errors[id(obj)] = (obj, e)
    if errors:
        raise_loading_failure(errors, warn_only=skip_mismatch)


def raise_loading_failure(errors: dict, warn_only: bool = False) -> None:
    obj, error = next(iter(errors.values()))
    msg = (f"A total of {len(errors)} objects could not be loaded. Example error message for "
           f"object {obj}:\n\n{error}\n\nList of objects that could not be loaded:\n"
           f"{[o for o, _ in errors.values()]}")
    if warn_only:
        warnings.warn(msg, stacklevel=3)
    else:
        raise ValueError(msg)

