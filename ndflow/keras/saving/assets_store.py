"""The `assets/` part of a `.keras` archive (Keras 3's DiskIOStore): each object of the saving
tree with `save_assets(dir)`/`load_assets(dir)` (the lookup layers' vocabulary.txt) gets the
directory `assets/<its path in the tree>`."""

from __future__ import annotations

import os
import tempfile
import zipfile

from ndflow.keras.saving import object_tree


def write_assets(model, zf: zipfile.ZipFile) -> None:
    """Adds every object's saved assets to the open archive `zf` under assets/<path>/."""
    with tempfile.TemporaryDirectory() as tmp:
        for path, obj in object_tree.walk(model):
            save = getattr(obj, "save_assets", None)
            if not callable(save):
                continue
            folder = os.path.join(tmp, path) if path else tmp
            os.makedirs(folder, exist_ok=True)
            save(folder)
            for name in sorted(os.listdir(folder)):
                full = os.path.join(folder, name)
                if os.path.isfile(full):
                    zf.write(full, "/".join(p for p in ("assets", path, name) if p))


def read_assets(model, zf: zipfile.ZipFile) -> None:
    """Gives each object with `load_assets` its assets/<path>/ files from the archive."""
    members = [n for n in zf.namelist() if n.startswith("assets/") and not n.endswith("/")]
    if not members:
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name in members:
            target = os.path.realpath(os.path.join(tmp, name))
            if not target.startswith(os.path.realpath(tmp) + os.sep):
                raise ValueError(f"Invalid `.keras` file: asset member {name!r} escapes the "
                                 "archive's assets/ folder.")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(zf.read(name))
        for path, obj in object_tree.walk(model):
            load = getattr(obj, "load_assets", None)
            folder = os.path.join(tmp, "assets", path) if path else os.path.join(tmp, "assets")
            if callable(load) and os.path.isdir(folder) and os.listdir(folder):
                load(folder)
