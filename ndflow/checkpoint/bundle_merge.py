"""Merging TensorBundles into one (tensor_bundle.cc `MergeBundles`, the MergeV2Checkpoints
op): how a sharded save turns its parts into one checkpoint.

Each part (`<prefix>_temp/part-0000i-of-0000N`) is a complete bundle. Their index entries
are merged into one index under the destination prefix, every data file is renamed to
`<dest>.data-0000k-of-0000K` (k in the order the files are first referenced, parts in the
order given and keys sorted within each), and each entry's shard id becomes its file's new
number. A tensor saved in slices over several parts has one metadata entry per part: those
are combined (their slice lists concatenated; dtype and shape must agree), and a key saved
whole in two parts is an error. The parts' index files are deleted afterwards.
"""

from __future__ import annotations

import os

from ndflow.checkpoint import sstable, tensor_bundle
from ndflow.core import errors
from ndflow.core.file_io import _os_error
from ndflow.core.protos.tensor_bundle_pb import BundleEntryProto, BundleHeaderProto


def _read_index(prefix: str):
    path = tensor_bundle.index_filename(prefix)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _os_error(path, e) from None
    items = sstable.read_table(data, path)
    if not items or items[0][0] != tensor_bundle.HEADER_KEY:
        raise errors.DataLossError(None, None, f"Bundle header missing in {path}")
    return BundleHeaderProto.FromString(items[0][1]), items[1:]


def _merge_one(prefix: str, entries: dict, files: dict) -> None:
    header, items = _read_index(prefix)
    num_shards = max(1, header.num_shards)
    for key, raw in items:
        entry = BundleEntryProto.FromString(raw)
        existing = entries.get(key)
        if existing is not None:
            if not len(existing.slices):
                raise errors.InvalidArgumentError(
                    None, None, f"Duplicate tensor keyed by {key.decode(errors='replace')} "
                    f"encountered, when merging prefix: {prefix}")
            if not len(entry.slices) or existing.dtype != entry.dtype or \
                    existing.shape != entry.shape:
                raise errors.InvalidArgumentError(
                    None, None, f"Conflicting entries of sliced tensor "
                    f"{key.decode(errors='replace')} when merging prefix: {prefix}")
            existing.slices.extend(entry.slices)
            continue
        data_file = tensor_bundle.data_filename(prefix, entry.shard_id, num_shards)
        if data_file not in files:
            files[data_file] = len(files)
        entry.shard_id = files[data_file]
        entries[key] = entry


def merge_bundles(prefixes, merged_prefix: str, delete_old_dirs: bool = True) -> None:
    """Merges the bundles at `prefixes` into one at `merged_prefix` (their data files are
    moved, not copied)."""
    merged_prefix = os.fspath(merged_prefix)
    entries: dict[bytes, BundleEntryProto] = {}
    files: dict[str, int] = {}
    for prefix in prefixes:
        _merge_one(os.fspath(prefix), entries, files)
    directory = os.path.dirname(merged_prefix)
    try:
        if directory:
            os.makedirs(directory, exist_ok=True)
        for path, shard in files.items():
            os.replace(path, tensor_bundle.data_filename(merged_prefix, shard, len(files)))
    except OSError as e:
        raise _os_error(merged_prefix, e) from None
    header = BundleHeaderProto(num_shards=max(1, len(files)),
                               endianness=BundleHeaderProto.LITTLE)
    header.version.producer = tensor_bundle.TENSOR_BUNDLE_VERSION
    table = [(tensor_bundle.HEADER_KEY, header.SerializeToString())]
    table += [(k, entries[k].SerializeToString()) for k in sorted(entries)]
    index_path = tensor_bundle.index_filename(merged_prefix)
    temp = tensor_bundle._write_temp(index_path, [sstable.build_table(table)])
    try:
        os.replace(temp, index_path)
    except OSError as e:
        tensor_bundle._remove_quietly(temp)
        raise _os_error(index_path, e) from None
    for prefix in prefixes:  # best effort, as TF's cleanup
        tensor_bundle._remove_quietly(tensor_bundle.index_filename(os.fspath(prefix)))
        parent = os.path.dirname(os.fspath(prefix))
        if delete_old_dirs and parent != directory:
            try:
                os.rmdir(parent)
            except OSError:
                pass
