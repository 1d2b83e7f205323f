"""TF2's summary functions: `tf.summary.write`, `scalar`, `histogram`, `image`, `text`,
`audio`, writing tensor summaries exactly as TensorBoard's summary_v2 functions do (the same
tensors, dtypes and shapes, `SummaryMetadata` from TensorBoard's own plugin modules).

Eagerly a summary is written at once. In a graph (a `tf.function` being traced, a TF1 graph)
it becomes a stateful host op (a PyFunc, TF's WriteSummary in spirit) taking the step, the
data and the `record_if` condition as inputs, so every call of the function writes its own
values at its own step — a `tf.Variable` step is read when the function runs, as in TF.
Each returns a bool tensor: whether a summary was written.
"""

from __future__ import annotations

import contextlib
import re
import time

import numpy as np
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.plugins.audio import metadata as audio_metadata
from tensorboard.plugins.histogram import metadata as histogram_metadata
from tensorboard.plugins.image import metadata as image_metadata
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboard.plugins.text import metadata as text_metadata

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.graph_def import ndarray_to_tensor_proto
from ndflow.core.scopes import get_name_scope, name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.script_ops import numpy_function
from ndflow.summary import encoders, summary_ops_docs
from ndflow.summary.writer import STATE, NoopSummaryWriter, recording_condition

_NO_STEP = ("No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()")


def summary_tag(name: str) -> str:
    """TF's summary_scope: the tag is the current name scope joined with `name`."""
    scope = get_name_scope().rstrip("/")
    return f"{scope}/{name}" if scope else name


@tf_export("summary.experimental.summary_scope", v1=[])
@contextlib.contextmanager
def summary_scope(name, default_name="summary", values=None):
    """A name scope for a summary op; yields (tag, scope): the tag is the enclosing name
    scope joined with `name` (not made unique), as TF's summary_scope."""
    name = name or default_name
    tag = summary_tag(name)
    scope_name = _INVALID_SCOPE_CHARACTERS.sub("", name) or None
    with name_scope(scope_name, default_name, values) as scope:
        yield tag, scope


_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


def _host_array(value) -> np.ndarray:
    """`value` as tf.convert_to_tensor would hold it, as NumPy (Python numbers without a
    trip through a tensor: summaries are written per batch)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, bool):
        return np.asarray(value)
    if isinstance(value, float):
        return np.asarray(value, np.float32)
    if isinstance(value, int):
        return np.asarray(value, np.int32 if -2**31 <= value < 2**31 else np.int64)
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, (str, bytes)):
        return np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    if hasattr(value, "numpy"):  # eager tensors and variables
        return np.asarray(value.numpy())
    return np.asarray(convert_to_tensor(value).numpy())


def _metadata(metadata) -> summary_pb2.SummaryMetadata:
    if metadata is None:
        return summary_pb2.SummaryMetadata()
    if isinstance(metadata, bytes):
        return summary_pb2.SummaryMetadata.FromString(metadata)
    if isinstance(metadata, summary_pb2.SummaryMetadata):
        return metadata
    raise TypeError(f"metadata must be a SummaryMetadata proto or its serialized bytes, got "
                    f"{type(metadata).__name__}")


_BOOLS: dict = {}


def _false():
    return _bool(False)


def _true():
    return _bool(True)


def _bool(value: bool):
    """The eager bool result (one immutable tensor each, made once); a constant in graphs."""
    if not context.executing_eagerly():
        return convert_to_tensor(value)
    if value not in _BOOLS:
        _BOOLS[value] = convert_to_tensor(value)
    return _BOOLS[value]


def _step(step):
    """`step`, or (None) the default step; a ValueError where neither is set."""
    if step is None:
        step = STATE.step
        if step is None:
            raise ValueError(_NO_STEP)
    return step


def write_summary(tag: str, data, step, metadata, to_proto, name: str | None = None):
    """Writes `to_proto(data as an ndarray)` (a TensorProto) under `tag` at `step` to the
    default writer, where recording is on. `data` may be a callable (run only when written).
    """
    writer = STATE.writer
    if writer is None:
        return _false()
    step = _step(step)
    metadata = _metadata(metadata)
    if context.executing_eagerly():
        if isinstance(writer, NoopSummaryWriter) or not recording_condition():
            return _false()
        value = _host_array(data() if callable(data) else data)
        step_value = step if isinstance(step, int) else int(_host_array(step))
        writer.write_summary(tag, to_proto(value), step_value, metadata, time.time())
        return _true()
    return _graph_write(writer, tag, data, step, metadata, to_proto, name)


def _graph_write(writer, tag, data, step, metadata, to_proto, name):
    if isinstance(writer, NoopSummaryWriter):
        return _false()
    condition = recording_condition()
    if condition is False:
        return _false()
    tensor = convert_to_tensor(data() if callable(data) else data)
    step_t = convert_to_tensor(step)
    if step_t.dtype is not dtypes.int64:
        step_t = cast(step_t, dtypes.int64)
    cond_t = convert_to_tensor(condition)

    def write_at_run_time(step_value, value, record):
        if not bool(record):
            return np.bool_(False)
        writer.write_summary(tag, to_proto(np.asarray(value)), int(step_value), metadata,
                             time.time())
        return np.bool_(True)
    op = numpy_function(write_at_run_time, [step_t, tensor, cond_t], dtypes.bool,
                        stateful=True, name=name or "write_summary")
    op.set_shape([])
    context.get_default_graph().add_to_collection(SUMMARY_V2_COLLECTION, op)
    return op


SUMMARY_V2_COLLECTION = "_SUMMARY_V2"  # TF's key: what all_v2_summary_ops returns


@tf_export(v1=["summary.all_v2_summary_ops"])
def all_v2_summary_ops():
    """The TF2 summary ops built in the default graph (None when eager), for TF1 programs
    to run with `Session.run`."""
    if context.executing_eagerly():
        return None
    return context.get_default_graph().get_collection(SUMMARY_V2_COLLECTION)


def _static_shape(data):
    return data.shape if isinstance(data, Tensor) else None


@tf_export("summary.write", v1=[])
def write(tag, tensor, step=None, metadata=None, name=None):
    """Writes `tensor` (or the result of calling it) as a tensor summary `tag` at `step`
    with `metadata` (a SummaryMetadata proto or its bytes)."""
    return write_summary(tag, tensor, step, metadata,
                         lambda a: ndarray_to_tensor_proto(a), name)


def _scalar_proto(a: np.ndarray):
    if a.ndim != 0:
        raise ValueError(f"Expected scalar shape, saw shape: {a.shape}.")
    return ndarray_to_tensor_proto(np.asarray(a, np.float32), dtypes.float32)


@tf_export("summary.scalar", v1=[])
def scalar(name, data, step=None, description=None):
    """Writes a scalar (cast to float32) for TensorBoard's Scalars dashboard."""
    shape = _static_shape(data)
    if shape is not None and shape.rank not in (None, 0):
        raise ValueError(f"Expected scalar shape, saw shape: {tuple(shape.as_list())}.")
    md = scalar_metadata.create_summary_metadata(display_name=None, description=description)
    return write_summary(summary_tag(name), data, step, md, _scalar_proto)


@tf_export("summary.histogram", v1=[])
def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of `data`'s elements ([buckets, 3] float64: left edge, right edge,
    count; 30 buckets by default) for the Histograms and Distributions dashboards."""
    md = histogram_metadata.create_summary_metadata(display_name=None, description=description)

    def to_proto(a):
        return ndarray_to_tensor_proto(encoders.histogram_buckets(a, buckets), dtypes.float64)
    return write_summary(summary_tag(name), data, step, md, to_proto)


def _check_rank(shape_or_array, rank: int):
    shape = getattr(shape_or_array, "shape", shape_or_array)
    dims = tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)
    if len(dims) != rank:
        raise ValueError(f"Tensor  must have rank {rank}.  Received rank {len(dims)}, shape "
                         f"{dims}")


@tf_export("summary.image", v1=[])
def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to `max_outputs` images of a [k, h, w, c] batch (c in 1..4; floats in
    [0, 1] or integers) as PNGs for the Images dashboard."""
    shape = _static_shape(data)
    if shape is not None and shape.rank is not None:
        _check_rank(shape, 4)
    if int(max_outputs) < 0:
        raise ValueError(f"max_outputs must be non-negative, got {max_outputs}")
    md = image_metadata.create_summary_metadata(display_name=None, description=description)

    def to_proto(a):
        _check_rank(a, 4)
        images = encoders.to_uint8_image(a)
        encoded = [encoders.encode_png(img) for img in images[:int(max_outputs)]]
        dims = [str(images.shape[2]).encode(), str(images.shape[1]).encode()]
        return ndarray_to_tensor_proto(np.array(dims + encoded, dtype=object), dtypes.string)
    return write_summary(summary_tag(name), data, step, md, to_proto)


@tf_export("summary.text", v1=[])
def text(name, data, step=None, description=None):
    """Writes a string tensor (any shape; Markdown) for the Text dashboard."""
    md = text_metadata.create_summary_metadata(display_name=None, description=description)

    def to_proto(a):
        if a.dtype != object and a.dtype.kind not in "SU":
            raise ValueError(f"text summary data must be strings, got dtype {a.dtype}")
        return ndarray_to_tensor_proto(a, dtypes.string)
    return write_summary(summary_tag(name), data, step, md, to_proto)


@tf_export("summary.audio", v1=[])
def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None,
          description=None):
    """Writes up to `max_outputs` clips of a [k, t, c] float batch in [-1, 1] at
    `sample_rate` Hz as WAV for the Audio dashboard."""
    if encoding not in (None, "wav"):
        raise ValueError(f"Unknown encoding: {encoding!r}")
    shape = _static_shape(data)
    if shape is not None and shape.rank is not None:
        _check_rank(shape, 3)
    md = audio_metadata.create_summary_metadata(
        display_name=None, description=description,
        encoding=audio_metadata.Encoding.Value("WAV"))
    rate = int(_host_array(sample_rate)) if not isinstance(sample_rate, int) else sample_rate

    def to_proto(a):
        _check_rank(a, 3)
        clips = [encoders.encode_wav(clip, rate) for clip in a[:int(max_outputs)]]
        rows = np.array([[c, b""] for c in clips], dtype=object).reshape(len(clips), 2)
        return ndarray_to_tensor_proto(rows, dtypes.string)
    return write_summary(summary_tag(name), data, step, md, to_proto)


@tf_export("summary.experimental.write_raw_pb", v1=[])
def write_raw_pb(tensor, step=None, name=None):
    """Writes serialized `Summary` protos (a string scalar or vector) as they are."""
    writer = STATE.writer
    if writer is None:
        return _false()
    step = _step(step)
    if not context.executing_eagerly():
        raise NotImplementedError("write_raw_pb runs eagerly in ndflow")
    if isinstance(writer, NoopSummaryWriter) or not recording_condition():
        return _false()
    step_value = int(_host_array(step))
    for blob in np.asarray(_host_array(tensor), dtype=object).reshape(-1):
        writer.write_event(event_pb2.Event(wall_time=time.time(), step=step_value,
                                           summary=summary_pb2.Summary.FromString(blob)))
    return _true()


__all__ = ["write", "scalar", "histogram", "image", "text", "audio", "summary_scope",
           "write_raw_pb", "all_v2_summary_ops", "write_summary", "summary_tag",
           "SUMMARY_V2_COLLECTION"]


attach(globals(), summary_ops_docs.DOCS)
