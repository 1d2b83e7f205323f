"""The `assets/` part of a `.keras` archive or model directory (Keras 3's DiskIOStore): each
object of the saving tree with `save_assets(dir)`/`load_assets(dir)` (the lookup layers'
vocabulary.txt) gets the directory `assets/<its path in the tree>`."""

from __future__ import annotations

import os
import tempfile
import zipfile

from ndflow.keras.saving import object_tree


def save_to_dir(model, assets_dir: str) -> list:
    """Writes every object's assets under `assets_dir`; returns their paths relative to it."""
    written = []
    for path, obj in object_tree.walk(model):
        save = getattr(obj, "save_assets", None)
        if not callable(save):
            continue
        folder = os.path.join(assets_dir, path) if path else assets_dir
        os.makedirs(folder, exist_ok=True)
        save(folder)
        written += ["/".join(p for p in (path, name) if p) for name in sorted(os.listdir(folder))
                    if os.path.isfile(os.path.join(folder, name))]
    return written


def load_from_dir(model, assets_dir: str) -> None:
    """Gives each object with `load_assets` its folder under `assets_dir`, when it has one."""
    for path, obj in object_tree.walk(model):
        load = getattr(obj, "load_assets", None)
        folder = os.path.join(assets_dir, path) if path else assets_dir
        if callable(load) and os.path.isdir(folder) and os.listdir(folder):
            load(folder)


def write_assets(model, zf: zipfile.ZipFile) -> None:
    """Adds every object's saved assets to the open archive `zf` under assets/<path>/."""
    with tempfile.TemporaryDirectory() as tmp:
        for rel in save_to_dir(model, tmp):
            zf.write(os.path.join(tmp, *rel.split("/")), f"assets/{rel}")


def read_assets(model, zf: zipfile.ZipFile) -> None:
    """Gives each object with `load_assets` its assets/<path>/ files from the archive."""
    members = [n for n in zf.namelist() if n.startswith("assets/") and not n.endswith("/")]
    if not members:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        for name in members:
            target = os.path.realpath(os.path.join(tmp, name))
            if not target.startswith(root + os.sep):
                raise ValueError(f"Invalid `.keras` file: asset member {name!r} escapes the "
                                 "archive's assets/ folder.")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(zf.read(name))
        load_from_dir(model, os.path.join(tmp, "assets"))
