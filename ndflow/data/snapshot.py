"""`Dataset.snapshot` / `tf.data.experimental.snapshot` (a dataset persisted on disk: the first
complete pass writes it, later passes and later programs read it) and
`tf.data.experimental.TFRecordWriter` (a dataset of strings written to one TFRecord file).

A snapshot lives in `path/<fingerprint>/`, the fingerprint a hash of the pipeline's structure
(its transformations and element_spec), so that a changed pipeline writes a new snapshot
beside the old one, as TensorFlow's. Inside, the layout is `Dataset.save`'s (TFRecord files of
TensorProtos, a `snapshot.metadata` written last and atomically): a pass that stops early or
fails leaves no snapshot, and the next pass writes again. TensorFlow's own `snapshot()` file
format (its snappy-framed version 1 files) is not reproduced: TensorFlow cannot read an
ndflow snapshot with `snapshot()`, but `tf.data.Dataset.load(path/<fingerprint>)` can.
Compression: "AUTO" and None write uncompressed, "GZIP" (and "ZLIB") compress; "SNAPPY" is
refused (no snappy codec here).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import time

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.atomic_file import atomic_write
from ndflow.core.nest import flatten
from ndflow.core.protos.snapshot_pb import SnapshotMetadataRecord
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import save_load
from ndflow.data.dataset import AUTOTUNE, DatasetV2, register_op
from ndflow.data.tfrecord_io import TFRecordWriter as _RecordFileWriter
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.saved_model import nested_structure_coder

_SNAPSHOT_COMPRESSIONS = {None: "", "": "", "AUTO": "", "NONE": "", "GZIP": "GZIP",
                          "ZLIB": "ZLIB"}


def _path(value) -> str:
    value = os.fspath(value.numpy() if hasattr(value, "numpy") else value)
    return value.decode() if isinstance(value, bytes) else value


def _describe(dataset: DatasetV2) -> str:
    """The pipeline's structure: transformation types, their functions' names and plain
    parameters, down to the sources (what the fingerprint hashes)."""
    parts = [type(dataset).__name__, repr(dataset.element_spec)]
    for key, value in sorted(vars(dataset).items()):
        if isinstance(value, (int, float, str, bytes, bool)) and not key.startswith("__"):
            parts.append(f"{key}={value!r}")
        fn = getattr(value, "_func", None)
        if fn is not None:
            parts.append(f"{key}:{getattr(fn, '__qualname__', type(fn).__name__)}")
    parts += [f"({_describe(d)})" for d in dataset._inputs()]
    return " ".join(parts)


def fingerprint(dataset: DatasetV2) -> str:
    return hashlib.sha256(_describe(dataset).encode()).hexdigest()[:16]


class SnapshotDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, path, compression="AUTO", reader_func=None,
                 shard_func=None):
        kind = compression.upper() if isinstance(compression, str) else compression
        if kind == "SNAPPY":
            raise tf_errors.UnimplementedError(
                None, None, "snapshot: SNAPPY compression is not available in ndflow; use "
                "'GZIP' or None.")
        if kind not in _SNAPSHOT_COMPRESSIONS:
            raise ValueError(f"Invalid `compression`: {compression!r}. Supported values are "
                             "'AUTO', 'GZIP', 'SNAPPY' or None.")
        self._input, self._kind = input_dataset, _SNAPSHOT_COMPRESSIONS[kind]
        self._reader = reader_func
        self._shard_fn = save_load._shard_function(shard_func, input_dataset.element_spec)
        self._dir = os.path.join(_path(path), fingerprint(input_dataset))
        super().__init__(input_dataset.element_spec)

    def _finished(self) -> bool:
        return os.path.exists(os.path.join(self._dir, save_load.METADATA_FILENAME))

    def _iter_flat(self):
        if self._finished():
            reader = self._reader or (lambda d: d.interleave(
                lambda shard: shard, num_parallel_calls=AUTOTUNE))
            yield from save_load.LoadDataset(self._dir, self.element_spec, self._kind,
                                             reader)._iter_flat()
            return
        yield from self._write_through()

    def _write_through(self):
        """Elements of the input, each also written; the snapshot is finalized (metadata
        written) only when the input ends."""
        os.makedirs(self._dir, exist_ok=True)
        run_id = str(random.getrandbits(64))
        run_dir = os.path.join(self._dir, run_id)
        os.makedirs(run_dir)
        writers: dict = {}
        count, complete = 0, False
        try:
            for count, flat in enumerate(self._input._iter_flat(), 1):  # noqa: B007
                shard = self._shard(flat, count - 1)
                writer = writers.get(shard)
                if writer is None:
                    shard_dir = os.path.join(run_dir, f"{shard:08d}.shard")
                    os.makedirs(shard_dir)
                    writer = writers[shard] = _RecordFileWriter(
                        os.path.join(shard_dir, "00000000.snapshot"), self._kind)
                for t in flat:
                    writer.write(save_load.tensor_record(t))
                yield flat
            complete = True
        finally:
            for writer in writers.values():
                writer.close()
            if complete and not self._finished():
                self._finalize(run_id, count)
            else:  # stopped early or failed: no snapshot (the next pass writes again)
                shutil.rmtree(run_dir, ignore_errors=True)

    def _shard(self, flat, index: int) -> int:
        if self._shard_fn is None:
            return 0
        try:
            shard = int(self._shard_fn(flat)[0]._value)
        except Exception as e:  # noqa: BLE001 - re-raised as TF's error
            raise self._shard_fn.error(e, index) from e
        if shard < 0:
            raise tf_errors.InvalidArgumentError(
                None, None, f"`shard_func` returned the negative shard index {shard}.")
        return shard

    def _finalize(self, run_id: str, count: int):
        spec = nested_structure_coder.encode(self.element_spec)
        atomic_write(os.path.join(self._dir, save_load.DATASET_SPEC_FILENAME),
                     spec.SerializeToString(deterministic=True))
        metadata = SnapshotMetadataRecord(
            run_id=run_id, creation_timestamp=int(time.time() * 1e6), version=2,
            dtype=[s.dtype.enum for s in flatten(self.element_spec)], num_elements=count,
            finalized=True)
        atomic_write(os.path.join(self._dir, save_load.METADATA_FILENAME),
                     metadata.SerializeToString())


register_op("snapshot")(SnapshotDataset)


@tf_export("data.experimental.snapshot")
def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """A transformation persisting the dataset under `path` (see the module docstring)."""
    return lambda dataset: SnapshotDataset(dataset, path, compression, reader_func,
                                           shard_func)


@tf_export("data.experimental.TFRecordWriter")
class TFRecordWriter:
    """Writes a dataset of scalar strings to one TFRecord file ("", "GZIP" or "ZLIB")."""

    def __init__(self, filename, compression_type=None):
        self._filename = _path(filename)
        self._compression = compression_type if compression_type is not None else ""

    def write(self, dataset):
        """Writes every element of `dataset` (replacing the file; atomically)."""
        if not isinstance(dataset, DatasetV2):
            raise TypeError("Invalid `dataset.` Expected a `tf.data.Dataset` object but got "
                            f"{type(dataset)}.")
        spec = dataset.element_spec
        if not (isinstance(spec, TensorSpec)
                and spec.is_compatible_with(TensorSpec([], dtypes.string))):
            shapes = [s.shape for s in flatten(spec)] if not isinstance(spec, TensorSpec) \
                else spec.shape
            types = [s.dtype for s in flatten(spec)] if not isinstance(spec, TensorSpec) \
                else spec.dtype
            raise TypeError("Invalid `dataset`. Expected a`dataset` that produces scalar "
                            "`tf.string` elements, but got a dataset which produces elements "
                            f"with shapes {shapes} and types {types}.")
        directory = os.path.dirname(os.path.abspath(self._filename))
        temp = os.path.join(directory, f".{os.path.basename(self._filename)}.tmp"
                                       f"{random.getrandbits(32):08x}")
        try:
            with _RecordFileWriter(temp, self._compression) as writer:
                for (t,) in dataset._iter_flat():
                    writer.write(bytes(t.numpy()))
            os.replace(temp, self._filename)
        except BaseException:
            if os.path.exists(temp):
                os.remove(temp)
            raise
