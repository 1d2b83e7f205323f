"""TF1 readers (`tf.compat.v1.TFRecordReader`, `TextLineReader`, `FixedLengthRecordReader`,
`WholeFileReader`, `IdentityReader`, their base `ReaderBase`): resource ops with
TensorFlow's op names (TFRecordReaderV2, ReaderReadV2, ...). A reader takes file names
(work units) from a queue (`tf.compat.v1.train.string_input_producer`) and produces
(key, value) string records. Kernels in kernels/reader_ops.py.
"""

from __future__ import annotations

import itertools

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import init_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import no_outputs, op_def, scalar_output

ANONYMOUS_PREFIX = "_ndflow_anonymous_reader_"
_anonymous_ids = itertools.count()




_RESOURCE = ["container: string = ''", "shared_name: string = ''"]


def _reader_op(name, attrs, doc):
    return op_def(name, outputs=["reader_handle: resource"], attrs=attrs + _RESOURCE,
                  shape=scalar_output, stateful=True, gradient_undefined=True, doc=doc)


TFRecordReaderV2 = _reader_op("TFRecordReaderV2", ["compression_type: string = ''"],
                              "A reader of the records of TFRecord files.")
TextLineReaderV2 = _reader_op("TextLineReaderV2", ["skip_header_lines: int = 0"],
                              "A reader of the lines of text files.")
FixedLengthRecordReaderV2 = _reader_op(
    "FixedLengthRecordReaderV2",
    ["header_bytes: int = 0", "record_bytes: int", "footer_bytes: int = 0",
     "hop_bytes: int = 0", "encoding: string = ''"],
    "A reader of fixed-length records of binary files.")
WholeFileReaderV2 = _reader_op("WholeFileReaderV2", [],
                               "A reader producing each file's whole contents.")
IdentityReaderV2 = _reader_op("IdentityReaderV2", [],
                              "A reader producing each work unit as key and value.")

ReaderReadV2 = op_def(
    "ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
    outputs=["key: string", "value: string"], shape=lambda ctx: [TensorShape([])] * 2,
    stateful=True, gradient_undefined=True, doc="The next (key, value) record.")
ReaderReadUpToV2 = op_def(
    "ReaderReadUpToV2",
    inputs=["reader_handle: resource", "queue_handle: resource", "num_records: int64"],
    outputs=["keys: string", "values: string"],
    shape=lambda ctx: [TensorShape([None])] * 2, stateful=True, gradient_undefined=True,
    doc="Up to num_records (key, value) records.")
ReaderNumRecordsProducedV2 = op_def(
    "ReaderNumRecordsProducedV2", inputs=["reader_handle: resource"],
    outputs=["records_produced: int64"], shape=scalar_output, stateful=True,
    gradient_undefined=True, doc="How many records the reader produced.")
ReaderNumWorkUnitsCompletedV2 = op_def(
    "ReaderNumWorkUnitsCompletedV2", inputs=["reader_handle: resource"],
    outputs=["units_completed: int64"], shape=scalar_output, stateful=True,
    gradient_undefined=True, doc="How many work units (files) the reader finished.")
ReaderSerializeStateV2 = op_def(
    "ReaderSerializeStateV2", inputs=["reader_handle: resource"], outputs=["state: string"],
    shape=scalar_output, stateful=True, gradient_undefined=True, doc="The reader's state.")
ReaderRestoreStateV2 = op_def(
    "ReaderRestoreStateV2", inputs=["reader_handle: resource", "state: string"],
    shape=no_outputs, stateful=True, gradient_undefined=True, doc="Restores a reader's state.")
ReaderResetV2 = op_def(
    "ReaderResetV2", inputs=["reader_handle: resource"], shape=no_outputs, stateful=True,
    gradient_undefined=True, doc="Restores the reader to its initial clean state.")


def _queue_ref(queue):
    return queue if not hasattr(queue, "queue_ref") else queue.queue_ref


@tf_export(v1=["ReaderBase"])
class ReaderBase:
    """A reader resource and the ops on it (TF's io_ops.ReaderBase)."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return self._supports_serialize

    def read(self, queue, name=None):
        """The next record: (key, value) scalar strings; takes a new file name from `queue`
        when the current one is finished."""
        op = apply_op(ReaderReadV2, [self._reader_ref, _queue_ref(queue)], name=name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """Up to `num_records` records (keys, values), fewer when the queue runs out."""
        n = convert_to_tensor(num_records, dtype=dtypes.int64)
        op = apply_op(ReaderReadUpToV2, [self._reader_ref, _queue_ref(queue), n], name=name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        return apply_op(ReaderNumRecordsProducedV2, [self._reader_ref], name=name).outputs[0]

    def num_work_units_completed(self, name=None):
        return apply_op(ReaderNumWorkUnitsCompletedV2, [self._reader_ref],
                        name=name).outputs[0]

    def serialize_state(self, name=None):
        return apply_op(ReaderSerializeStateV2, [self._reader_ref], name=name).outputs[0]

    def restore_state(self, state, name=None):
        state = convert_to_tensor(state, dtype=dtypes.string)
        return apply_op(ReaderRestoreStateV2, [self._reader_ref, state], name=name)

    def reset(self, name=None):
        return apply_op(ReaderResetV2, [self._reader_ref], name=name)


def _make_reader(op_def, attrs: dict, name):
    if context.executing_eagerly():
        attrs = dict(attrs, shared_name=f"{ANONYMOUS_PREFIX}{next(_anonymous_ids)}")
    with init_scope():
        return apply_op(op_def, [], attrs, name=name).outputs[0]


@tf_export(v1=["TFRecordReader"])
class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files (`options`: a TFRecordOptions, or a compression
    type name 'ZLIB' / 'GZIP'); keys are 'file:offset'."""

    def __init__(self, name=None, options=None):
        kind = getattr(options, "compression_type", options) or ""
        kind = {0: "", 1: "ZLIB", 2: "GZIP"}.get(kind, kind) if isinstance(kind, int) else kind
        super().__init__(_make_reader(TFRecordReaderV2, {"compression_type": str(kind)},
                                      name))


@tf_export(v1=["TextLineReader"])
class TextLineReader(ReaderBase):
    """Reads the lines of text files (without their newline); keys are 'file:line'."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_make_reader(
            TextLineReaderV2, {"skip_header_lines": int(skip_header_lines or 0)}, name),
            supports_serialize=True)


@tf_export(v1=["FixedLengthRecordReader"])
class FixedLengthRecordReader(ReaderBase):
    """Reads fixed-length records: after `header_bytes`, records of `record_bytes` every
    `hop_bytes` (default: record_bytes), stopping `footer_bytes` before the end; keys are
    'file:record index'."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(_make_reader(FixedLengthRecordReaderV2, {
            "record_bytes": int(record_bytes), "header_bytes": int(header_bytes or 0),
            "footer_bytes": int(footer_bytes or 0), "hop_bytes": int(hop_bytes or 0),
            "encoding": encoding or ""}, name), supports_serialize=True)


@tf_export(v1=["WholeFileReader"])
class WholeFileReader(ReaderBase):
    """Produces each file once: key its name, value its contents."""

    def __init__(self, name=None):
        super().__init__(_make_reader(WholeFileReaderV2, {}, name), supports_serialize=True)


@tf_export(v1=["IdentityReader"])
class IdentityReader(ReaderBase):
    """Produces each work unit (queue string) as both key and value."""

    def __init__(self, name=None):
        super().__init__(_make_reader(IdentityReaderV2, {}, name), supports_serialize=True)
