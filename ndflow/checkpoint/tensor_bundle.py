"""TensorFlow's TensorBundle checkpoint format (tensorflow/core/util/tensor_bundle).

A bundle under `prefix` is two files:
- `prefix.index`: a LevelDB table (sstable.py) whose "" key holds a `BundleHeaderProto` and
  every other key a `BundleEntryProto` (dtype, shape, shard, offset, size, masked CRC-32C);
- `prefix.data-00000-of-00001`: the tensors' bytes back to back, little-endian. A string
  tensor is the varint64 length of every element, the masked CRC-32C of those lengths (as
  uint32s), then the elements' bytes.

`BundleWriter.finish` writes both files under temporary names and then renames them into
place, data file first: a writer killed before the renames leaves an older bundle under the
same prefix intact, and one killed between them leaves a bundle whose CRCs fail to match
(DataLossError), never silently wrong values.
"""

from __future__ import annotations

import os
import struct
import uuid
import weakref

import google_crc32c
import ml_dtypes
import numpy as np
import torch

from ndflow.checkpoint import sstable, tensor_slices
from ndflow.checkpoint.bundle_reading import buffer_at, crc32c_at, read_into
from ndflow.core import dtypes, errors
from ndflow.core.file_io import _os_error
from ndflow.core.protos.tensor_bundle_pb import BundleEntryProto, BundleHeaderProto
from ndflow.kernels import raw_memory

HEADER_KEY = b""
TENSOR_BUNDLE_VERSION = 1
DT_STRING = 7
# DataType enum (types.proto) -> NumPy dtype of the stored elements
_NUMPY_OF_ENUM = {
    1: np.dtype(np.float32), 2: np.dtype(np.float64), 3: np.dtype(np.int32),
    4: np.dtype(np.uint8), 5: np.dtype(np.int16), 6: np.dtype(np.int8),
    8: np.dtype(np.complex64), 9: np.dtype(np.int64), 10: np.dtype(np.bool_),
    14: np.dtype(ml_dtypes.bfloat16), 17: np.dtype(np.uint16),
    18: np.dtype(np.complex128), 19: np.dtype(np.float16), 22: np.dtype(np.uint32),
    23: np.dtype(np.uint64),
}
# The quantized types as TF's structured NumPy dtypes (np.dtype([("qint8", "i1")])), the narrow
# ones as ml_dtypes' (one byte per element in the bundle, as TF stores them)
_NUMPY_OF_ENUM.update({d.enum: np.dtype(d.as_numpy_dtype)
                       for d in dtypes.QUANTIZED + tuple(dtypes.NARROW)})
_ENUM_OF_NUMPY = {v: k for k, v in _NUMPY_OF_ENUM.items()}
_TORCH_OF_ENUM = {
    1: torch.float32, 2: torch.float64, 3: torch.int32, 4: torch.uint8, 5: torch.int16,
    6: torch.int8, 8: torch.complex64, 9: torch.int64, 10: torch.bool, 14: torch.bfloat16,
    18: torch.complex128, 19: torch.float16,
}
_DTYPE_NAMES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
                7: "string", 8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16",
                17: "uint16", 18: "complex128", 19: "float16", 20: "resource", 21: "variant",
                22: "uint32", 23: "uint64",
                **{d.enum: d.name for d in dtypes.QUANTIZED + tuple(dtypes.NARROW)}}


def index_filename(prefix: str) -> str:
    return f"{prefix}.index"


def data_filename(prefix: str, shard: int = 0, num_shards: int = 1) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def numpy_dtype_of(enum: int) -> np.dtype:
    """The NumPy dtype of a DataType enum's elements (object for strings)."""
    return np.dtype(object) if enum == DT_STRING else _NUMPY_OF_ENUM[enum]


def dtype_name(enum: int) -> str:
    """TensorFlow's name of a DataType enum ("float32"), or "DataType(<n>)"."""
    return _DTYPE_NAMES.get(enum, f"DataType({enum})")


def _as_key(key) -> bytes:
    return key.encode() if isinstance(key, str) else bytes(key)


def _string_bytes(value: np.ndarray) -> tuple[bytes, int]:
    """A string tensor's data-file bytes and their (unmasked) CRC-32C, as WriteStringTensor."""
    elements = [e.encode() if isinstance(e, str) else bytes(e) for e in value.reshape(-1)]
    lengths = b"".join(sstable.put_varint(len(e)) for e in elements)
    crc = 0
    for e in elements:
        size = len(e)
        crc = google_crc32c.extend(crc, struct.pack("<I" if size <= 0xFFFFFFFF else "<Q",
                                                    size))
    length_checksum = struct.pack("<I", sstable.mask_crc(crc))
    crc = google_crc32c.extend(crc, length_checksum)
    body = b"".join(elements)
    crc = google_crc32c.extend(crc, body)
    return lengths + length_checksum + body, crc


def _is_string_array(value: np.ndarray) -> bool:
    return value.dtype.kind in ("O", "U", "S")


class BundleWriter:
    """Collects tensors under string keys; `finish()` writes `prefix.index` and
    `prefix.data-00000-of-00001` atomically (temporary files renamed into place)."""

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        self._entries: dict[bytes, BundleEntryProto] = {}
        self._chunks: list[bytes] = []
        self._size = 0
        self._finished = False

    def add(self, key, value) -> None:
        """Adds one tensor (a NumPy array or anything np.asarray takes; bfloat16 as
        ml_dtypes.bfloat16; strings as str/bytes/object arrays)."""
        key = _as_key(key)
        if key == HEADER_KEY:
            raise errors.InvalidArgumentError(None, None, "The empty key is reserved for the "
                                                          "bundle header")
        if key in self._entries:
            raise errors.InvalidArgumentError(None, None,
                                              f"Adding duplicate key: {key.decode()}")
        value = np.asarray(value)
        entry = BundleEntryProto()
        if _is_string_array(value):
            data, crc = _string_bytes(value)
            entry.dtype = DT_STRING
        else:
            enum = _ENUM_OF_NUMPY.get(value.dtype)
            if enum is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Cannot save tensor {key.decode()!r} of dtype {value.dtype}")
            data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<")).tobytes()
            crc = google_crc32c.value(data)
            entry.dtype = enum
        entry.shape.SetInParent()  # a scalar's empty shape is still written, as TF does
        for dim in value.shape:
            entry.shape.dim.add().size = int(dim)
        entry.shard_id = 0
        entry.offset = self._size
        entry.size = len(data)
        entry.crc32c = sstable.mask_crc(crc)
        self._entries[key] = entry
        self._chunks.append(data)
        self._size += len(data)

    def add_slice(self, full_key: str, full_shape, extents, value) -> None:
        """Adds one slice (extents: (start, length) pairs) of the tensor `full_key` of shape
        `full_shape`, as TensorFlow's AddSlice: the data under the slice's encoded key, the
        slice recorded in the full tensor's entry (which holds no data)."""
        value = np.asarray(value)
        tensor_slices.check_slice(full_key, full_shape, extents)
        if all(s == 0 and n in (d, tensor_slices.FULL) for (s, n), d in zip(extents,
                                                                            full_shape)):
            self.add(full_key, value)  # a slice covering the tensor is saved whole, as TF's
            return
        self.add(tensor_slices.encode_tensor_name_slice(full_key, extents), value)
        key = _as_key(full_key)
        data_entry = self._entries[tensor_slices.encode_tensor_name_slice(full_key, extents)]
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = BundleEntryProto(dtype=data_entry.dtype)
            entry.shape.SetInParent()
            for dim in full_shape:
                entry.shape.dim.add().size = int(dim)
        elif not len(entry.slices) or entry.dtype != data_entry.dtype or \
                [d.size for d in entry.shape.dim] != [int(d) for d in full_shape]:
            raise errors.InvalidArgumentError(
                None, None, f"Conflicting slices of tensor {full_key!r}: dtypes or full "
                            "shapes differ, or it was also added whole")
        entry.slices.append(tensor_slices.slice_proto(extents))

    def finish(self) -> None:
        """Writes the bundle: data then index, each to a temporary file renamed into place.
        An OS error is TensorFlow's error class for it (PermissionDeniedError, ...), and
        leaves no temporary file behind."""
        if self._finished:
            raise errors.InternalError(None, None, "BundleWriter is closed")
        self._finished = True
        header = BundleHeaderProto(num_shards=1, endianness=BundleHeaderProto.LITTLE)
        header.version.producer = TENSOR_BUNDLE_VERSION
        items = [(HEADER_KEY, header.SerializeToString())]
        items += [(k, self._entries[k].SerializeToString()) for k in sorted(self._entries)]
        index = sstable.build_table(items)
        directory = os.path.dirname(self._prefix)
        try:
            if directory:
                os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise _os_error(directory, e) from None
        # Both files are complete on disk before either replaces an older bundle's, so a
        # writer killed before the renames leaves the previous bundle untouched.
        data_path, index_path = data_filename(self._prefix), index_filename(self._prefix)
        temp_data = _write_temp(data_path, self._chunks)
        try:
            temp_index = _write_temp(index_path, [index])
        except errors.OpError:
            _remove_quietly(temp_data)
            raise
        try:
            os.replace(temp_data, data_path)
            os.replace(temp_index, index_path)
        except OSError as e:
            _remove_quietly(temp_data)
            _remove_quietly(temp_index)
            raise _os_error(self._prefix, e) from None


def _write_temp(path: str, chunks) -> str:
    """Writes the chunks to `path.tempstate<random>` (fsynced); returns that name."""
    temp = f"{path}.tempstate{uuid.uuid4().int & 0xFFFFFFFFFFFFFFFF}"
    try:
        with open(temp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        _remove_quietly(temp)
        raise _os_error(temp, e) from None
    return temp


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


class BundleReader:
    """Reads a bundle: `keys()`, `dtype_and_shape(key)`, `read(key)` -> NumPy array, each
    tensor's CRC-32C checked. Missing files are NotFoundError; a corrupted or truncated file
    is DataLossError naming it."""

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        self._index_path = index_filename(self._prefix)
        try:
            with open(self._index_path, "rb") as f:
                table = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(
                None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                            f"matching files for {self._prefix}") from None
        except OSError as e:
            raise _os_error(self._index_path, e) from None
        items = sstable.read_table(table, self._index_path)
        if not items or items[0][0] != HEADER_KEY:
            raise self._corrupt("failed to seek to header entry")
        header = BundleHeaderProto()
        try:
            header.ParseFromString(items[0][1])
        except Exception:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise self._corrupt("unable to parse header") from None
        if header.endianness != BundleHeaderProto.LITTLE:
            raise errors.UnimplementedError(None, None, f"{self._index_path}: big-endian "
                                                        "checkpoints are not supported")
        self._num_shards = max(1, header.num_shards)
        self._entries: dict[str, BundleEntryProto] = {}
        self._slice_entries: dict[bytes, BundleEntryProto] = {}  # by encoded slice key
        for key, value in items[1:]:
            entry = BundleEntryProto()
            try:
                entry.ParseFromString(value)
            except Exception:  # noqa: BLE001
                raise self._corrupt(f"unable to parse the entry of key {key!r}") from None
            if key[:1] == b"\x00":  # a slice's data (tensor_slices.encode_tensor_name_slice)
                self._slice_entries[bytes(key)] = entry
            else:
                self._entries[key.decode("utf-8", "replace")] = entry
        self._files: dict[int, tuple] = {}  # shard -> (unbuffered file, its size)
        weakref.finalize(self, _close_all, self._files)

    def _corrupt(self, what: str) -> errors.DataLossError:
        return errors.DataLossError(None, None, f"{what} in file {self._index_path}: the "
                                                "checkpoint is corrupted or truncated")

    @property
    def prefix(self) -> str:
        return self._prefix

    def keys(self) -> list[str]:
        """The tensor keys, sorted (the header's empty key excluded)."""
        return list(self._entries)

    def has(self, key: str) -> bool:
        return key in self._entries

    def _entry(self, key: str) -> BundleEntryProto:
        try:
            return self._entries[key]
        except KeyError:
            raise errors.NotFoundError(None, None,
                                       f"Key {key} not found in checkpoint") from None

    def dtype_enum(self, key: str) -> int:
        return self._entry(key).dtype

    def dtype_and_shape(self, key: str) -> tuple[np.dtype, tuple[int, ...]]:
        """(NumPy dtype, shape); the dtype of a string tensor is `object`."""
        entry = self._entry(key)
        return self._numpy_dtype(key, entry), tuple(d.size for d in entry.shape.dim)

    def _numpy_dtype(self, key: str, entry) -> np.dtype:
        if entry.dtype == DT_STRING:
            return np.dtype(object)
        dtype = _NUMPY_OF_ENUM.get(entry.dtype)
        if dtype is None:
            hint = (" (TensorFlow's serialized state of an object, such as a dataset "
                    "iterator's: restore without that object, with expect_partial())"
                    if dtype_name(entry.dtype) == "variant" else "")
            raise errors.UnimplementedError(None, None, f"Reading tensor {key!r} of dtype "
                                                        f"{dtype_name(entry.dtype)} from "
                                                        f"{self._prefix} is not supported"
                                                        f"{hint}")
        return dtype

    def _file(self, shard_id: int) -> tuple:
        opened = self._files.get(shard_id)
        if opened is None:
            path = data_filename(self._prefix, shard_id, self._num_shards)
            try:
                f = open(path, "rb", buffering=0)  # noqa: SIM115 - kept open for later reads
            except OSError as e:
                raise _os_error(path, e) from None
            opened = self._files[shard_id] = (f, os.fstat(f.fileno()).st_size)
        return opened

    def is_sliced(self, key: str) -> bool:
        """Whether the tensor is saved in slices (a partitioned variable)."""
        return bool(len(self._entry(key).slices))

    def read_slice(self, key: str, extents) -> np.ndarray:
        """The region `extents` ((start, length) pairs, length -1 for a whole dimension) of
        the tensor under `key`, whether it was saved whole or in slices."""
        entry = self._entry(key)
        full_shape = [d.size for d in entry.shape.dim]
        tensor_slices.check_slice(key, full_shape, extents)
        if not len(entry.slices):
            whole = self.read(key)
            return whole[tuple(slice(s, None if n == tensor_slices.FULL else s + n)
                               for s, n in extents)]
        stored = [tensor_slices.extents_of(p, full_shape) for p in entry.slices]
        for saved in stored:
            try:
                tensor_slices.check_slice(key, full_shape, saved)
            except errors.InvalidArgumentError:
                raise self._corrupt(f"slice {list(saved)} of {key!r} is outside its shape "
                                    f"{full_shape}") from None

        def read(saved):
            data_key = tensor_slices.encode_tensor_name_slice(key, saved)
            data_entry = self._slice_entries.get(data_key)
            if data_entry is None:
                raise self._corrupt(f"missing the data of slice {list(saved)} of {key!r}")
            want = [d if n == tensor_slices.FULL else n for (_, n), d in zip(saved, full_shape)]
            if data_entry.dtype != entry.dtype or \
                    [d.size for d in data_entry.shape.dim] != want:
                raise self._corrupt(f"the data of slice {list(saved)} of {key!r} does not "
                                    "match the slice")
            return self._read_entry(key, data_entry)
        return tensor_slices.assemble(key, full_shape, stored, tuple(extents), read)

    def _checked_entry(self, key: str):
        return self._entry(key)

    def _bad_crc(self, key: str, entry, path: str) -> errors.DataLossError:
        return errors.DataLossError(None, None, f"Checksum does not match: stored "
                                                f"{entry.crc32c} vs. calculated on the "
                                                f"restored bytes; tensor {key!r} in file "
                                                f"{path} is corrupted")

    def _located(self, key: str, entry) -> tuple:
        """(data file path, its open file, the entry's offset), the entry checked to lie
        inside the file (a truncated file is DataLossError naming it)."""
        path = data_filename(self._prefix, entry.shard_id, self._num_shards)
        f, file_size = self._file(entry.shard_id)
        start, end = entry.offset, entry.offset + entry.size
        if end > file_size:
            raise errors.DataLossError(None, None, f"Checkpoint data file {path} is truncated: "
                                                   f"tensor {key!r} needs bytes [{start}, "
                                                   f"{end}) of {file_size}")
        return path, f, start

    def _read_bytes_into(self, key: str, entry, shape, itemsize: int, address: int) -> None:
        """A numeric tensor's bytes read once into the `entry.size` bytes at `address`, size
        and CRC checked (one copy: no file-sized buffer, no slices)."""
        path, f, start = self._located(key, entry)
        count = int(np.prod(shape, dtype=np.int64))
        if entry.size != count * itemsize:
            raise errors.DataLossError(None, None, f"Tensor {key!r} in {path}: size "
                                                   f"{entry.size} does not match its shape "
                                                   f"{list(shape)} and dtype")
        if not entry.size:
            got = 0
        else:
            try:
                got = read_into(f, start, buffer_at(address, entry.size))
            except OSError as e:
                raise _os_error(path, e) from None
        if got != entry.size:
            raise errors.DataLossError(None, None, f"Checkpoint data file {path} is truncated: "
                                                   f"tensor {key!r} needs bytes [{start}, "
                                                   f"{start + entry.size})")
        if sstable.mask_crc(crc32c_at(address, entry.size)) != entry.crc32c:
            raise self._bad_crc(key, entry, path)

    def read_tensor(self, key: str):
        """The numeric tensor under `key` as a new ATen tensor that owns its memory (read
        straight into it), or None for strings, dtypes ATen lacks and tensors saved in
        slices (use `read`)."""
        entry = self._checked_entry(key)
        torch_dtype = _TORCH_OF_ENUM.get(entry.dtype)
        if torch_dtype is None or len(entry.slices):
            return None
        dtype, shape = self.dtype_and_shape(key)
        out = torch.empty(entry.size, dtype=torch.uint8)
        self._read_bytes_into(key, entry, shape, dtype.itemsize,
                             raw_memory.address(out, torch.uint8, entry.size))
        return out.view(torch_dtype).reshape(shape)

    def read(self, key: str) -> np.ndarray:
        """The tensor under `key` as a NumPy array (strings: an object array of bytes); one
        saved in slices is assembled from them."""
        entry = self._checked_entry(key)
        if len(entry.slices):
            return self.read_slice(key, [(0, tensor_slices.FULL)] * len(entry.shape.dim))
        return self._read_entry(key, entry)

    def _read_entry(self, key: str, entry) -> np.ndarray:
        dtype = self._numpy_dtype(key, entry)
        shape = tuple(d.size for d in entry.shape.dim)
        if entry.dtype != DT_STRING:
            out = np.empty(entry.size, dtype=np.uint8)
            self._read_bytes_into(key, entry, shape, dtype.itemsize,
                                 raw_memory.address(out, np.uint8, entry.size))
            return out.view(dtype.newbyteorder("<")).astype(dtype, copy=False).reshape(shape)
        path, f, start = self._located(key, entry)
        try:
            f.seek(start)
            raw = f.read(entry.size)
        except OSError as e:
            raise _os_error(path, e) from None
        count = int(np.prod(shape, dtype=np.int64))
        value = self._parse_strings(raw, count, path, key)
        if value is None or sstable.mask_crc(_string_bytes(value)[1]) != entry.crc32c:
            raise self._bad_crc(key, entry, path)
        return value.reshape(shape)

    @staticmethod
    def _parse_strings(raw: bytes, count: int, path: str, key: str):
        try:
            pos, sizes = 0, []
            for _ in range(count):
                size, pos = sstable.get_varint(raw, pos)
                sizes.append(size)
        except ValueError:
            return None
        pos += 4  # the lengths' checksum, covered by the whole-tensor CRC
        if pos + sum(sizes) != len(raw):
            return None
        out = np.empty(count, dtype=object)
        for i, size in enumerate(sizes):
            out[i] = raw[pos:pos + size]
            pos += size
        return out


def _close_all(files: dict) -> None:
    for f, _ in files.values():
        f.close()
    files.clear()
