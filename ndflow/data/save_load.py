"""`Dataset.save` / `Dataset.load` (and `tf.data.experimental.save` / `load`) in TensorFlow's
snapshot layout, so that TensorFlow loads what ndflow saved and the other way round:

    path/dataset_spec.pb                      the element_spec (a StructuredValue proto)
    path/snapshot.metadata                    SnapshotMetadataRecord: run id, dtypes,
                                              element count, version 2, finalized
    path/<run id>/<shard:08d>.shard/00000000.snapshot
                                              a TFRecord file ("", GZIP or ZLIB): each
                                              element is one record per flat component,
                                              each record a TensorProto (tensor_content)

Elements go to shard 0 unless `shard_func(element)` (an int64 scalar) says otherwise; `load`
hands the dataset of shard datasets to `reader_func` (by default an interleave over as many
shards as CPUs, as TensorFlow). The run directory is written first and `snapshot.metadata`
last, atomically: an interrupted save leaves the previous snapshot loadable.
"""

from __future__ import annotations

import os
import random
import shutil
import time

import numpy as np
from tensorboard.compat.proto import struct_pb2, tensor_pb2

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.atomic_file import atomic_write
from ndflow.core.graph_def import (
    decode_string_content,
    dtype_from_enum,
    shape_from_proto,
    tensor_proto_to_ndarray,
)
from ndflow.core.nest import flatten
from ndflow.core.protos.snapshot_pb import SnapshotMetadataRecord
from ndflow.core.tensor import EagerTensor
from ndflow.data import structure, tfrecord_format
from ndflow.data.dataset import AUTOTUNE, DatasetV2, register_op
from ndflow.data.dataset_spec import DatasetSpec
from ndflow.data.tfrecord_io import TFRecordWriter
from ndflow.data.traced_function import TracedFunction
from ndflow.kernels.io_serialization import tensor_content_proto
from ndflow.saved_model import nested_structure_coder

DATASET_SPEC_FILENAME = "dataset_spec.pb"
METADATA_FILENAME = "snapshot.metadata"
_FILE_FORMAT_VERSION = 2  # TensorFlow's: TFRecord files of TensorProtos
_COMPRESSIONS = {None: "", "": "", "NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def _compression(value) -> str:
    if value not in _COMPRESSIONS:
        raise tf_errors.UnimplementedError(
            None, None, f"Compression {value!r} is not supported by ndflow's Dataset.save/load"
            ": use None, 'GZIP' or 'ZLIB'.")
    return _COMPRESSIONS[value]


# -- tensors as records ---------------------------------------------------------------------

def _decode_strings(content: bytes, n: int, path: str) -> list:
    try:
        return decode_string_content(content, n)
    except ValueError as e:
        raise tf_errors.DataLossError(None, None, f"{str(e).capitalize()} in the snapshot "
                                      f"file {path}.") from None


def tensor_record(t: EagerTensor) -> bytes:
    """One component of an element as TensorFlow writes it (Tensor::AsProtoTensorContent)."""
    arr = t.numpy()
    if t.dtype is dtypes.string:
        arr = np.asarray(arr, dtype=object)
    return tensor_content_proto(arr, t.dtype)


def tensor_from_record(record: bytes, path: str) -> EagerTensor:
    p = tensor_pb2.TensorProto()
    try:
        p.ParseFromString(record)
        dt = dtype_from_enum(p.dtype)
    except Exception:  # noqa: BLE001 - any parse failure is a corrupted snapshot
        raise tf_errors.DataLossError(None, None, f"Unable to parse a tensor of the snapshot "
                                      f"file {path}.") from None
    if dt is dtypes.string:
        dims = shape_from_proto(p.tensor_shape).as_list()
        n = int(np.prod(dims, dtype=np.int64))
        values = _decode_strings(p.tensor_content, n, path) if p.tensor_content else \
            list(p.string_val) + [b""] * (n - len(p.string_val))
        arr = np.empty(n, dtype=object)
        arr[:] = values
        return EagerTensor(arr.reshape(dims), dt)
    arr, dt = tensor_proto_to_ndarray(p)
    return structure.to_eager(arr, dt)


# -- save -------------------------------------------------------------------------------------

def _shard_function(shard_func, element_spec):
    if shard_func is None:
        return None
    fn = TracedFunction(shard_func, element_spec, "SaveDataset")
    out = fn.output_spec
    if not (hasattr(out, "dtype") and out.dtype is dtypes.int64 and out.shape.rank == 0):
        raise tf_errors.InvalidArgumentError(None, None, "`shard_func` must return a scalar "
                                             "int64. [Op:SaveDataset]")
    return fn


@register_op("save")
def save(dataset: DatasetV2, path, compression=None, shard_func=None, checkpoint_args=None):
    """Writes `dataset` under `path` in TensorFlow's snapshot format (see the module doc)."""
    if checkpoint_args:
        if "checkpoint" in checkpoint_args:
            raise ValueError("'Invalid `checkpoint_args`. `checkpoint_args` are not allowed "
                             "to include 'checkpoint'.")
        raise tf_errors.UnimplementedError(
            None, None, "Dataset.save with `checkpoint_args` (resumable saving) is not "
            "supported by ndflow: save without it.")
    kind = _compression(compression)
    specs = flatten(dataset.element_spec)
    if any(isinstance(s, DatasetSpec) for s in specs):
        raise TypeError("Dataset.save cannot write elements that are datasets (windows): "
                        "turn them into tensors first (e.g. `flat_map(lambda w: w.batch(n))`).")
    shard_fn = _shard_function(shard_func, dataset.element_spec)
    path = os.fspath(path.numpy() if hasattr(path, "numpy") else path)
    path = path.decode() if isinstance(path, bytes) else path
    os.makedirs(path, exist_ok=True)
    encoded = nested_structure_coder.encode(dataset.element_spec)
    atomic_write(os.path.join(path, DATASET_SPEC_FILENAME),
                      encoded.SerializeToString(deterministic=True))
    run_id = str(random.getrandbits(64))
    run_dir = os.path.join(path, run_id)
    os.makedirs(run_dir)
    writers: dict = {}
    count = 0
    try:
        for count, flat in enumerate(dataset._iter_flat(), 1):  # noqa: B007 - the count
            shard = 0
            if shard_fn is not None:
                try:
                    shard = int(shard_fn(flat)[0]._value)
                except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                    raise shard_fn.error(e, count - 1) from e
                if shard < 0:
                    raise tf_errors.InvalidArgumentError(
                        None, None, f"`shard_func` returned the negative shard index {shard}.")
            writer = writers.get(shard)
            if writer is None:
                shard_dir = os.path.join(run_dir, f"{shard:08d}.shard")
                os.makedirs(shard_dir)
                writer = writers[shard] = TFRecordWriter(
                    os.path.join(shard_dir, "00000000.snapshot"), kind)
            for t in flat:
                writer.write(tensor_record(t))
        for writer in writers.values():
            writer.close()
    except BaseException:
        for writer in writers.values():
            writer.close()
        shutil.rmtree(run_dir, ignore_errors=True)  # the previous snapshot stays loadable
        raise
    metadata = SnapshotMetadataRecord(run_id=run_id, creation_timestamp=int(time.time() * 1e6),
                                      version=_FILE_FORMAT_VERSION,
                                      dtype=[s.dtype.enum for s in specs],
                                      num_elements=count, finalized=True)
    atomic_write(os.path.join(path, METADATA_FILENAME), metadata.SerializeToString())


@tf_export("data.experimental.save", v1=[])
def experimental_save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """Writes `dataset` to `path` in TensorFlow's snapshot format (`Dataset.save`).

    Args:
      dataset: the `tf.data.Dataset` to write; its elements must not be datasets.
      path: the directory to write to.
      compression: None, "GZIP" or "SNAPPY".
      shard_func: optional function from an element to an int64 shard index.
      checkpoint_args: unsupported (resumable saving); must be None.

    Raises:
      TypeError: if the elements are datasets.
      UnimplementedError: if `checkpoint_args` is given.

    Example:
      >>> import tempfile
      >>> path = tempfile.mkdtemp()
      >>> tf.data.experimental.save(tf.data.Dataset.range(3), path)
      >>> [int(x) for x in tf.data.experimental.load(path)]
      [0, 1, 2]
    """
    return save(dataset, path, compression, shard_func, checkpoint_args)


# -- load -------------------------------------------------------------------------------------

def _read_element_spec(path: str):
    name = os.path.join(path, DATASET_SPEC_FILENAME)
    if not os.path.exists(name):
        raise tf_errors.NotFoundError(None, None, "tf.data snapshot element_spec file not "
                                      f"found: {name}.")
    p = struct_pb2.StructuredValue()
    try:
        with open(name, "rb") as f:
            p.ParseFromString(f.read())
        spec = nested_structure_coder.decode(p)
        structure.check_spec(spec, "element_spec")
    except Exception:  # noqa: BLE001 - TF's error for an unreadable spec file
        raise tf_errors.NotFoundError(None, None, "tf.data snapshot element_spec file not "
                                      f"found or invalid: {name}.") from None
    return spec


def _read_metadata(path: str):
    name = os.path.join(path, METADATA_FILENAME)
    if not os.path.exists(name):
        raise tf_errors.NotFoundError(None, None, f"Could not find metadata file [{path}] "
                                      "[Op:LoadDataset]")
    metadata = SnapshotMetadataRecord()
    try:
        with open(name, "rb") as f:
            metadata.ParseFromString(f.read())
    except Exception:  # noqa: BLE001 - TF's error type for a corrupted file
        raise tf_errors.DataLossError(None, None, f"Unable to parse the snapshot metadata "
                                      f"file {name}.") from None
    if metadata.version != _FILE_FORMAT_VERSION:
        raise tf_errors.UnimplementedError(
            None, None, f"The snapshot at {path} has file format version {metadata.version}; "
            f"ndflow reads version {_FILE_FORMAT_VERSION} (what Dataset.save writes).")
    return metadata


class ShardDataset(DatasetV2):
    """The elements of one shard directory (its files in name order)."""

    def __init__(self, shard_dir: str, element_spec, compression: str):
        self._dir, self._kind = shard_dir, compression
        super().__init__(element_spec)

    def _iter_flat(self):
        specs, n = self._flat_specs, len(self._flat_specs)
        for name in sorted(os.listdir(self._dir)):
            path = os.path.join(self._dir, name)
            parts = []
            for record in tfrecord_format.iter_records(path, self._kind):
                t = tensor_from_record(record, path)
                i, spec = len(parts), specs[len(parts)]
                if t.dtype is not spec.dtype:
                    raise tf_errors.InvalidArgumentError(
                        None, None, f"Data type mismatch at component {i}: expected "
                        f"{spec.dtype.name} but got {t.dtype.name}.")
                if not spec.shape.is_compatible_with(t.shape):
                    raise tf_errors.InvalidArgumentError(
                        None, None, f"Shape mismatch at component {i}: expected "
                        f"{spec.shape} but got {t.shape} (file {path}).")
                parts.append(t)
                if len(parts) == n:
                    yield tuple(parts)
                    parts = []
            if parts:
                raise tf_errors.DataLossError(None, None, f"The snapshot file {path} ends "
                                              "in the middle of an element.")


class _ShardsDataset(DatasetV2):
    """The shards of a snapshot run, each a dataset (what `reader_func` receives)."""

    def __init__(self, run_dir: str, element_spec, compression: str):
        self._dir, self._spec, self._kind = run_dir, element_spec, compression
        super().__init__(DatasetSpec(element_spec))

    def _shards(self) -> list:
        if not os.path.isdir(self._dir):
            raise tf_errors.NotFoundError(None, None, f"The snapshot run directory {self._dir}"
                                          " does not exist.")
        return sorted(d for d in os.listdir(self._dir) if d.endswith(".shard"))

    def _cardinality(self):
        return len(self._shards())

    def _iter_flat(self):
        for d in self._shards():
            yield (ShardDataset(os.path.join(self._dir, d), self._spec, self._kind),)


def _default_reader(datasets: DatasetV2) -> DatasetV2:
    return datasets.interleave(lambda shard: shard, cycle_length=os.cpu_count() or 1,
                               num_parallel_calls=AUTOTUNE)


class LoadDataset(DatasetV2):
    def __init__(self, path, element_spec=None, compression=None, reader_func=None):
        path = os.fspath(path.numpy() if hasattr(path, "numpy") else path)
        self._path = path.decode() if isinstance(path, bytes) else path
        kind = _compression(compression)
        spec = _read_element_spec(self._path) if element_spec is None else element_spec
        metadata = _read_metadata(self._path)
        self._count = metadata.num_elements
        shards = _ShardsDataset(os.path.join(self._path, metadata.run_id), spec, kind)
        out = (reader_func or _default_reader)(shards)
        if not isinstance(out, DatasetV2):
            raise TypeError("`reader_func` must return a `tf.data.Dataset`, got "
                            f"{type(out).__name__}.")
        self._out = out
        super().__init__(spec)

    def _inputs(self):
        return [self._out]

    def _cardinality(self):
        return self._count

    def _iter_flat(self):
        return self._out._iter_flat()


_RETRY_INTERVAL_SEC = 5  # TensorFlow's, for load(wait=True)


@register_op("load")
def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
    """`Dataset.load`; with `wait`, retries until the snapshot exists (as TensorFlow)."""
    while True:
        try:
            return LoadDataset(path, element_spec, compression, reader_func)
        except tf_errors.NotFoundError:
            if not wait:
                raise
            time.sleep(_RETRY_INTERVAL_SEC)


@tf_export("data.experimental.load", v1=[])
def experimental_load(path, element_spec=None, compression=None, reader_func=None):
    """Reads a dataset that `tf.data.experimental.save` wrote (`Dataset.load`).

    Args:
      path: the directory the dataset was saved to.
      element_spec: optional element spec; None reads the one saved with the data.
      compression: the compression it was saved with (None, "GZIP" or "SNAPPY").
      reader_func: optional function from a dataset of shard datasets to the output
        dataset (by default the shards are interleaved).

    Returns:
      A `tf.data.Dataset` with the saved elements.

    Raises:
      NotFoundError: if `path` holds no saved dataset.
    """
    return LoadDataset(path, element_spec, compression, reader_func)
