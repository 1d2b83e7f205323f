"""`cache`: elements kept after the first complete pass, in memory or in files.

The memory cache is filled by the first iterator that reaches the end (a partial pass
caches nothing, as TensorFlow). The file cache is TensorFlow's: a TensorBundle at the
prefix `filename` (`filename.index` + `filename.data-00000-of-00001`, the checkpoint
format) holding element i's tensor j under the key `"%7d_%d" % (i, j)`, so TensorFlow
reads ndflow's cache files and the other way round. While the first pass runs, the lock
file `filename_0.lockfile` says so (a second writer gets TF's AlreadyExistsError); the
bundle is written at the end of the pass, atomically, and an interrupted pass leaves no
cache. Later iterators — also in later runs — read the bundle instead of the input.
"""

from __future__ import annotations

import os
import threading
import time

from ndflow.checkpoint import tensor_bundle
from ndflow.core import errors as tf_errors
from ndflow.core import logging
from ndflow.core.tensor import EagerTensor
from ndflow.data.dataset import DatasetV2, register_op
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.ops.apply import numpy_to_torch

_MAX_ITEMS = 10_000_000  # TF's limit: element indices are written in 7 characters
_INCOMPLETE = ("The calling iterator did not fully read the dataset being cached. In order to "
               "avoid unexpected truncation of the dataset, the partially cached contents of "
               "the dataset  will be discarded. This can happen if you have an input pipeline "
               "similar to `dataset.cache().take(k).repeat()`. You should use "
               "`dataset.take(k).cache().repeat()` instead.")


def cache_key(item: int, tensor: int, num_tensors: int) -> str:
    """TF's key for an element's tensor: both indices right-aligned in fixed widths (spaces
    sort before digits, so the bundle's sorted keys are in element order)."""
    return f"{item:7d}_{tensor:{len(str(num_tensors - 1))}d}"


class CacheDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, filename=""):
        self._input = input_dataset
        if hasattr(filename, "numpy"):
            filename = filename.numpy()
        if isinstance(filename, bytes):
            filename = filename.decode()
        self._prefix = os.fspath(filename) if filename else None
        self._memory = None
        self._lock = threading.Lock()
        super().__init__(input_dataset.element_spec)

    def _make_unread_iterator(self):
        cached = self._memory is not None if self._prefix is None else os.path.exists(
            tensor_bundle.index_filename(self._prefix))
        if not cached:  # TF reads a complete cache without an input iterator
            self._input._make_unread_iterator()

    def _iter_flat(self):
        if self._memory is not None:
            yield from self._memory
            return
        if self._prefix is None:
            seen = []
            for flat in self._input._iter_flat():
                seen.append(flat)
                yield flat
            with self._lock:
                self._memory = seen
            return
        if os.path.exists(tensor_bundle.index_filename(self._prefix)):
            yield from self._read()
        else:
            yield from self._write_through()

    def _read(self):
        reader = tensor_bundle.BundleReader(self._prefix)
        keys, n = reader.keys(), len(self._flat_specs)
        if len(keys) % n:
            raise tf_errors.DataLossError(None, None, f"Corrupted cache {self._prefix}: "
                                          f"{len(keys)} tensors for elements of {n}")
        for item in range(len(keys) // n):
            flat = []
            for j, spec in enumerate(self._flat_specs):
                key = cache_key(item, j, n)
                if keys[item * n + j] != key:
                    raise tf_errors.DataLossError(None, None, f"Corrupted cache "
                                                  f"{self._prefix}: no tensor {key!r}")
                value = reader.read(key)
                got = tensor_bundle.dtype_name(reader.dtype_enum(key))
                if got != spec.dtype.name:
                    raise tf_errors.InvalidArgumentError(
                        None, None, f"The cache {self._prefix} holds {got} tensors where the "
                        f"dataset's component {j} is {spec.dtype.name}")
                flat.append(EagerTensor(numpy_to_torch(value, spec.dtype), spec.dtype))
            yield tuple(flat)

    def _write_through(self):
        """Passes the input's elements on while collecting them; at the end of a complete
        pass writes the bundle (TF's FileWriterIterator)."""
        shard = f"{self._prefix}_0"
        lockfile = f"{shard}.lockfile"
        if os.path.exists(tensor_bundle.index_filename(shard)):
            raise tf_errors.AlreadyExistsError(
                None, None, f"Existing cache files found: \n"
                f"{tensor_bundle.index_filename(shard)}\n"
                f"{tensor_bundle.data_filename(shard)}\nTo continue delete the above files.")
        try:
            fd = os.open(lockfile, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            with open(lockfile, "rb") as f:
                contents = f.read(150).decode("utf-8", "replace")
            raise tf_errors.AlreadyExistsError(
                None, None, "There appears to be a concurrent caching iterator running - cache "
                f"lockfile already exists ('{lockfile}'). If you are sure no other running TF "
                "computations are using this cache prefix, delete the lockfile and "
                f"re-initialize the iterator. Lockfile contents: {contents}") from None
        except OSError as e:
            raise tf_errors.UnknownError(None, None, f"{lockfile}: {e.strerror}") from None
        with os.fdopen(fd, "w") as f:
            f.write(f"Created at: {int(time.time())}")
        writer, n, item, complete = tensor_bundle.BundleWriter(self._prefix), None, 0, False
        try:
            for flat in self._input._iter_flat():
                if item >= _MAX_ITEMS:
                    raise tf_errors.InvalidArgumentError(
                        None, None, f"Upstream iterator is producing more than {_MAX_ITEMS} "
                        "items, which is more than the cache limit.")
                n = len(flat)
                for j, t in enumerate(flat):
                    writer.add(cache_key(item, j, n), t.numpy())
                item += 1
                yield flat
            complete = True
            writer.finish()
        finally:
            if not complete:
                logging.warning(_INCOMPLETE)
            try:
                os.remove(lockfile)
            except OSError:
                pass


register_op("cache")(CacheDataset)
