"""Keras 3's sharded weights: `save_weights("m.weights.json", max_shard_size=GB)`.

`m.weights.json` maps each `<object path>/vars` group to the shard files holding its datasets
(`{"metadata": {"total_size": bytes}, "weight_map": {"/layers/dense/vars": [...]}}`); the
shards `m_00000.weights.h5`, `m_00001.weights.h5`, ... are ordinary weights_h5 files with a
part of the groups. Variables are written in Keras' order (object tree, then "0".."n-1") and a
new shard starts when the current one would exceed `max_shard_size`, as Keras does.

Loading merges the shards the map names into one in-memory file (datasets copied through
weights_h5's checks: no links, external or virtual datasets) and loads it as a single file.
Writing is atomic per file; the map is renamed into place last, so it never names a shard
that is not complete.
"""

from __future__ import annotations

import io
import json
import os
import warnings

import h5py

from ndflow.keras.saving import file_io, object_tree, weights_h5


def sharded_path(filepath: str, mode: str) -> str:
    """Keras renames a sharded `*.weights.h5` to `*.weights.json`, with a warning."""
    if filepath.endswith(".json"):
        return filepath
    new = os.path.splitext(filepath)[0] + ".json"
    method = "Saving" if mode == "w" else "Loading"
    warnings.warn(f"{method} sharded weights requires `*.json` as the extension. The original "
                  f"path: {filepath} will be renamed to {new}.", stacklevel=4)
    return new


def save(model, filepath: str, max_shard_size) -> None:
    filepath = sharded_path(filepath, "w")
    limit = float(max_shard_size) * 1024 ** 3
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as whole:
        weights_h5.save_state(model, whole)
        shards, weight_map, total = _split(model, whole, limit)
    directory = os.path.dirname(os.path.abspath(filepath))
    base = os.path.basename(filepath)[:-len(".json")].replace(".weights", "")
    names = [f"{base}_{i:05}.weights.h5" for i in range(len(shards))]
    for name, items in zip(names, shards, strict=True):
        with file_io.atomic_path(os.path.join(directory, name)) as tmp, \
                h5py.File(tmp, "w") as f:
            for group_path, attrs, datasets in items:
                group = f.require_group(group_path)
                group.attrs.update(attrs)
                for key, value, ds_attrs in datasets:
                    group.create_dataset(key, data=value).attrs.update(ds_attrs)
    config = {"metadata": {"total_size": total},
              "weight_map": {path: [names[i] for i in indices]
                             for path, indices in weight_map.items()}}
    with file_io.atomic_path(filepath) as tmp, open(tmp, "w") as f:
        f.write(json.dumps(config, indent=4))


def _split(model, whole: h5py.File, limit: float):
    """[[(group path, attrs, [(key, value, attrs)])] per shard], {"/path/vars": [shard
    indices]}, total bytes — Keras' ShardedH5IOStore rule, variable by variable."""
    shards, weight_map = [[]], {}
    current = total = 0.0
    for path, _ in object_tree.walk(model):
        group_path = f"{path}/vars" if path else "vars"
        group = whole[group_path]
        entry = (group_path, dict(group.attrs), [])
        shards[-1].append(entry)
        for key in sorted(group.keys(), key=int):
            value, attrs = group[key][()], dict(group[key].attrs)
            size = float(value.nbytes)
            total += size
            if size > limit:
                raise ValueError(f"The size of {key} is {_readable(size)} which exceeds the "
                                 f"maximum shard size {_readable(limit)}. You can increase "
                                 "the `max_shard_size` parameter to accommodate the size.")
            current += size
            if current > limit:
                entry = (group_path, dict(group.attrs), [])
                shards.append([entry])
                current = size
            entry[2].append((key, value, attrs))
            indices = weight_map.setdefault(f"/{group_path}", [])
            if len(shards) - 1 not in indices:
                indices.append(len(shards) - 1)
    return shards, weight_map, total


def _readable(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.2f}{unit}"
        size /= 1024


def load(model, filepath: str, skip_mismatch: bool = False) -> None:
    filepath = sharded_path(filepath, "r")
    try:
        with open(filepath) as f:
            config = json.load(f)
        weight_map = config["weight_map"]
        files = list(dict.fromkeys(name for names in weight_map.values()
                                   for name in ([names] if isinstance(names, str) else names)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ValueError(f"Invalid sharded weights map {filepath}: {e}") from e
    directory = os.path.dirname(os.path.abspath(filepath))
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as merged:
        for name in files:
            if os.path.basename(name) != name:
                raise ValueError(f"Invalid sharded weights map {filepath}: shard file {name!r} "
                                 "is not in the map's directory")
            shard = os.path.join(directory, name)
            if not os.path.exists(shard):
                raise FileNotFoundError(2, f"Shard {name} named by {filepath} is missing",
                                        shard)
            try:
                with h5py.File(shard, "r") as f:
                    _merge(f, merged)
            except OSError as e:
                raise OSError(f"Unable to read the weights shard {shard}: {e} (the file may be "
                              "truncated or corrupted, or not an HDF5 file)") from e
        weights_h5.load_state(model, merged, skip_mismatch=skip_mismatch)


def _merge(source: h5py.Group, target: h5py.Group) -> None:
    """Copies `source`'s groups and datasets into `target` through weights_h5's checks."""
    target.attrs.update(dict(source.attrs))
    for name in source.keys():
        weights_h5._check_link(source, name)
        item = source[name]
        if isinstance(item, h5py.Group):
            _merge(item, target.require_group(name))
        else:
            ds = weights_h5._dataset(source, name)
            if name not in target:
                target.create_dataset(name, data=ds[()]).attrs.update(dict(ds.attrs))
