"""`tf.io.TFRecordWriter`, `tf.io.TFRecordOptions`, `tf.compat.v1.io.TFRecordCompressionType`
and `tf.compat.v1.io.tf_record_iterator` (record framing in tfrecord_format.py).

The writer streams to `path` as TensorFlow's does (records become visible on `flush`/`close`,
so a reader may follow a growing file); it is not a save-then-rename writer.
"""

from __future__ import annotations

import zlib

from ndflow.core.api_export import tf_export
from ndflow.core.errors import FailedPreconditionError, NotFoundError, PermissionDeniedError
from ndflow.data import tfrecord_format


@tf_export(v1=["io.TFRecordCompressionType"])
class TFRecordCompressionType:
    """The type of compression for the record."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


@tf_export("io.TFRecordOptions", v1=["io.TFRecordOptions"])
class TFRecordOptions:
    """Options for TFRecord files: `compression_type` "GZIP", "ZLIB" or "" (none); the zlib
    settings apply to writing (`compression_level` is honoured, the others are accepted)."""

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.get_compression_type_string(compression_type)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """'ZLIB', 'GZIP' or '' for a `TFRecordOptions`, a `TFRecordCompressionType` or a
        string; ValueError for anything else."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, int) and options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if isinstance(options, str) and options in cls.compression_type_map.values():
            return options
        raise ValueError(f'Not a valid compression_type: "{options}"')


def _as_bytes(record) -> bytes:
    if isinstance(record, bytes):
        return record
    if isinstance(record, str):
        return record.encode("utf-8")
    if isinstance(record, (bytearray, memoryview)):
        return bytes(record)
    raise TypeError(f"TFRecordWriter.write() takes bytes or str, got "
                    f"{type(record).__name__}: {record!r:.60}")


@tf_export("io.TFRecordWriter", v1=["io.TFRecordWriter"])
class TFRecordWriter:
    """Writes records to a TFRecord file; a context manager (closes on exit).

        with tf.io.TFRecordWriter(path, "GZIP") as w:
            w.write(example.SerializeToString())
    """

    def __init__(self, path, options=None):
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(compression_type=options)
        self._path = path.decode() if isinstance(path, bytes) else str(path)
        kind = TFRecordOptions.get_compression_type_string(options)
        try:
            self._file = open(self._path, "wb")
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{self._path}; No such file or directory") from None
        except IsADirectoryError:
            raise FailedPreconditionError(None, None, f"{self._path}; Is a directory") from None
        except PermissionError:
            raise PermissionDeniedError(None, None,
                                        f"{self._path}; Permission denied") from None
        self._zip = tfrecord_format.compressor(kind, options.compression_level)

    def _put(self, data: bytes):
        self._file.write(self._zip.compress(data) if self._zip is not None else data)

    def _check_open(self):
        if self._file is None:
            raise FailedPreconditionError(None, None, "Writer is closed.")

    def write(self, record):
        """Appends one record (bytes, or str written as UTF-8)."""
        self._check_open()
        self._put(tfrecord_format.encode_record(_as_bytes(record)))

    def flush(self):
        """Makes the records written so far readable from the file."""
        self._check_open()
        if self._zip is not None:
            self._file.write(self._zip.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        """Finishes the (compressed) stream and closes the file; closing twice is a no-op."""
        if self._file is None:
            return
        f, self._file = self._file, None
        try:
            if self._zip is not None:
                f.write(self._zip.flush(zlib.Z_FINISH))
        finally:
            f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


@tf_export(v1=["io.tf_record_iterator"])
def tf_record_iterator(path, options=None):
    """An iterator of the records (bytes) of the TFRecord file `path`, CRCs checked:
    `DataLossError` for a corrupted or truncated record, `NotFoundError` for a missing file."""
    kind = TFRecordOptions.get_compression_type_string(options)
    path = path.decode() if isinstance(path, bytes) else str(path)
    return tfrecord_format.iter_records(path, kind)
