"""TF1's summary ops (`tf.compat.v1.summary.scalar/histogram/image/text/merge/merge_all`):
graph ops whose value is a serialized `Summary` proto in TF1's format (scalars as
`simple_value`, histograms as `HistogramProto` with TensorFlow's exponential buckets, images
as `Summary.Image` PNGs, text as a tensor summary), computed on the host when a Session runs
them, added to the SUMMARIES collection for `merge_all`. Eagerly they return the serialized
proto at once."""

from __future__ import annotations

import contextlib
import re
import sys
import warnings

import numpy as np
from tensorboard.compat.proto import summary_pb2
from tensorboard.plugins.text import metadata as text_metadata

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.graph_def import ndarray_to_tensor_proto
from ndflow.core.scopes import name_scope
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.script_ops import numpy_function
from ndflow.summary import encoders, summary_ops
from ndflow.summary.writer import STATE
from ndflow.train.training_util import get_global_step


def _default_bucket_limits() -> np.ndarray:
    """TensorFlow's histogram bucket limits: +-1e-12 * 1.1**k up to 1e20, 0 and +-DBL_MAX."""
    pos, v = [], 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos)


_BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values) -> summary_pb2.HistogramProto:
    """TensorFlow's Histogram::EncodeToProto: runs of empty buckets collapse into one."""
    v = np.asarray(values, np.float64).reshape(-1)
    hist = summary_pb2.HistogramProto()
    if v.size == 0:
        hist.min, hist.max = sys.float_info.max, -sys.float_info.max
        hist.bucket_limit.append(sys.float_info.max)
        hist.bucket.append(0.0)
        return hist
    if not np.all(np.isfinite(v)):
        raise ValueError("Nan in summary histogram")
    hist.min, hist.max, hist.num = float(v.min()), float(v.max()), float(v.size)
    hist.sum, hist.sum_squares = float(v.sum()), float(np.dot(v, v))
    counts = np.bincount(np.searchsorted(_BUCKET_LIMITS, v, side="right"),
                         minlength=len(_BUCKET_LIMITS))[:len(_BUCKET_LIMITS)]
    i, n = 0, len(counts)
    while i < n:
        end, count = _BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = _BUCKET_LIMITS[i], counts[i]
                i += 1
        hist.bucket_limit.append(float(end))
        hist.bucket.append(float(count))
    return hist


def _tf1_uint8_images(images: np.ndarray) -> np.ndarray:
    """TF1 ImageSummary's float scaling: all >= 0 -> largest is 255; else 0 maps to 127
    and the values are scaled so the smallest is 0 or the largest 255."""
    a = np.asarray(images)
    if a.dtype == np.uint8:
        return a
    a = a.astype(np.float64)
    out = np.empty(a.shape, np.uint8)
    for i, img in enumerate(a):
        lo, hi = float(img.min(initial=0.0)), float(img.max(initial=0.0))
        if lo >= 0:
            scale = 255.0 / hi if hi > 0 else 0.0
            offset = 0.0
        else:
            scale = 127.0 / max(-lo, hi) if max(-lo, hi) > 0 else 0.0
            offset = 128.0
        out[i] = np.clip(img * scale + offset, 0, 255).astype(np.uint8)  # truncated, as TF
    return out


_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    r"""TF1's clean_tag: characters other than [-/\w.] become '_', no leading '/'."""
    if name is None:
        return None
    return _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")


@contextlib.contextmanager
def v1_summary_scope(name, family=None, default_name=None):
    """TF1's summary_scope: a name scope `family/name` (unique in graphs); yields
    (tag, scope), the tag being the scope, prefixed by `family` again when one is given
    (so the summary shows in that family's tab): `fam/outer/fam/x`, as TensorFlow."""
    name, family = _clean_tag(name), _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name) as scope:
        tag = scope.rstrip("/")
        yield (tag if family is None else f"{family}/{tag}"), scope


def _summary_op(name: str, default: str, tensor, build, collections, family=None):
    """A string op computing `build(ndarray) -> Summary` for `tensor`, or its bytes now."""
    if context.executing_eagerly():
        with v1_summary_scope(name, family, default) as (tag, _):
            value = convert_to_tensor(tensor).numpy()
            return convert_to_tensor(build(tag, np.asarray(value)).SerializeToString())
    with v1_summary_scope(name, family, default) as (tag, _):
        t = convert_to_tensor(tensor)
        op = numpy_function(lambda a: build(tag, np.asarray(a)).SerializeToString(), [t],
                            dtypes.string, stateful=False, name=default)
    graph = context.get_default_graph()
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        graph.add_to_collection(key, op)
    return op


def _v2_step():
    step = STATE.step
    return get_global_step() if step is None else step


def _invoke_v2(name, family, v2_summary, **kwargs):
    """TF's TF2 compatibility for TF1 summary ops: run eagerly with a default TF2 writer and
    a step (the writer's, set_step's or the global step), a TF1 summary op writes through
    the TF2 op and returns an empty string (which `merge` accepts). None when it does not
    apply (with TF's warnings)."""
    if not context.executing_eagerly():
        return None
    if STATE.writer is None:
        warnings.warn("Cannot activate TF2 compatibility support for TF1 summary ops: "
                      "default summary writer not found.", stacklevel=3)
        return None
    step = _v2_step()
    if step is None:
        warnings.warn("Cannot activate TF2 compatibility support for TF1 summary ops: global "
                      "step not set. To set step for summary writer, use "
                      "`tf.summary.SummaryWriter.as_default(step=_)`, "
                      "`tf.summary.experimental.set_step()` or "
                      "`tf.compat.v1.train.create_global_step()`.", stacklevel=3)
        return None
    with v1_summary_scope(name, family) as (tag, _):
        with name_scope(""):  # the tag is complete: no scope prefix again
            v2_summary(name=tag, step=step, **kwargs)
    return convert_to_tensor(b"")


@tf_export(v1=["summary.scalar"])
def scalar(name, tensor, collections=None, family=None):
    """A serialized `Summary` with one `simple_value`: the scalar `tensor`."""
    v2 = _invoke_v2(name, family, summary_ops.scalar, data=tensor)
    if v2 is not None:
        return v2

    def build(tag, a):
        if a.size != 1 or a.ndim > 1:
            raise ValueError(f"tags and values are not the same shape: [] != {list(a.shape)}"
                             f" (tag '{tag}')")
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, simple_value=float(a.reshape(-1)[0]))])
    return _summary_op(name, "ScalarSummary", tensor, build, collections, family)


@tf_export(v1=["summary.histogram"])
def histogram(name, values, collections=None, family=None):
    """A serialized `Summary` with a `HistogramProto` of `values`."""
    v2 = _invoke_v2(name, family, summary_ops.histogram, data=values)
    if v2 is not None:
        return v2

    def build(tag, a):
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, histo=histogram_proto(a))])
    return _summary_op(name, "HistogramSummary", values, build, collections, family)


@tf_export(v1=["summary.image"])
def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A serialized `Summary` with up to `max_outputs` PNG images of a [k, h, w, c] batch,
    tagged `name/image` (one) or `name/image/i`."""
    v2 = _invoke_v2(name, family, summary_ops.image, data=tensor, max_outputs=max_outputs)
    if v2 is not None:
        return v2

    def build(tag, a):
        if a.ndim != 4 or a.shape[-1] not in (1, 3, 4):
            raise ValueError(f"Tensor must be 4-D with last dim 1, 3, or 4, not {list(a.shape)}")
        images = _tf1_uint8_images(a)[:int(max_outputs)]
        values = []
        for i, img in enumerate(images):
            h, w, c = img.shape
            values.append(summary_pb2.Summary.Value(
                tag=f"{tag}/image" if max_outputs == 1 else f"{tag}/image/{i}",
                image=summary_pb2.Summary.Image(height=h, width=w, colorspace=c,
                                                encoded_image_string=encoders.encode_png(img))))
        return summary_pb2.Summary(value=values)
    return _summary_op(name, "ImageSummary", tensor, build, collections, family)


@tf_export(v1=["summary.audio"])
def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """A serialized `Summary` with up to `max_outputs` WAV clips of a [k, frames, channels]
    (or [k, frames]) float batch in [-1, 1], tagged `name/audio` (one) or `name/audio/i`."""
    v2 = _invoke_v2(name, family, summary_ops.audio, data=tensor, sample_rate=sample_rate,
                    max_outputs=max_outputs)
    if v2 is not None:
        return v2

    rate = float(np.asarray(convert_to_tensor(sample_rate).numpy())) \
        if context.executing_eagerly() or not isinstance(sample_rate, (int, float)) \
        else float(sample_rate)

    def build(tag, a):
        if a.ndim == 2:
            a = a[:, :, None]
        if a.ndim != 3:
            raise ValueError(f"Tensor must be 3-D or 2-D, got: {list(a.shape)}")
        values = []
        for i, clip in enumerate(a[:int(max_outputs)]):
            values.append(summary_pb2.Summary.Value(
                tag=f"{tag}/audio" if max_outputs == 1 else f"{tag}/audio/{i}",
                audio=summary_pb2.Summary.Audio(
                    sample_rate=rate, num_channels=clip.shape[1], length_frames=clip.shape[0],
                    encoded_audio_string=encoders.encode_wav(clip, int(rate)),
                    content_type="audio/wav")))
        return summary_pb2.Summary(value=values)
    return _summary_op(name, "AudioSummary", tensor, build, collections, family)


@tf_export(v1=["summary.text"])
def text(name, tensor, collections=None):
    """A serialized `Summary` with the string `tensor` as a text-plugin tensor summary."""
    v2 = _invoke_v2(name, None, summary_ops.text, data=tensor)
    if v2 is not None:
        return v2

    md = text_metadata.create_summary_metadata(display_name=None, description=None)

    def build(tag, a):
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, metadata=md, tensor=ndarray_to_tensor_proto(a, dtypes.string))])
    return _summary_op(name, "TextSummary", tensor, build, collections)


@tf_export(v1=["summary.tensor_summary"])
def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A serialized `Summary` holding `tensor` itself, with `summary_metadata` (or one made
    of `display_name` and `summary_description`)."""
    md = summary_pb2.SummaryMetadata()
    if summary_metadata is not None:
        md.CopyFrom(summary_metadata)
    if display_name is not None:
        md.display_name = display_name
    if summary_description is not None:
        md.summary_description = summary_description

    def build(tag, a):
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, metadata=md, tensor=ndarray_to_tensor_proto(a))])
    return _summary_op(name, "TensorSummary", tensor, build, collections, family)


def merge_serialized(blobs) -> bytes:
    """The union of serialized Summaries (TF's MergeSummary: a tag twice is an error)."""
    merged, seen = summary_pb2.Summary(), set()
    for blob in np.asarray(blobs, dtype=object).reshape(-1):
        s = summary_pb2.Summary.FromString(blob)
        for v in s.value:
            if v.tag in seen and not v.HasField("metadata"):
                raise ValueError(f"Duplicate tag {v.tag} found in summary inputs")
            seen.add(v.tag)
            merged.value.append(v)
    return merged.SerializeToString()


@tf_export(v1=["summary.merge"])
def merge(inputs, collections=None, name=None):
    """One serialized `Summary` holding the values of the serialized Summaries `inputs`."""
    if context.executing_eagerly():
        blobs = [convert_to_tensor(x).numpy() for x in inputs]
        return convert_to_tensor(merge_serialized(np.array(blobs, dtype=object)))
    with name_scope(name, "Merge"):
        op = numpy_function(lambda *blobs: merge_serialized(np.array(
            [np.asarray(b, dtype=object).item() for b in blobs], dtype=object)),
            [convert_to_tensor(x) for x in inputs], dtypes.string, stateful=False,
            name="MergeSummary")
    graph = context.get_default_graph()
    for key in collections or []:
        graph.add_to_collection(key, op)
    return op


@tf_export(v1=["summary.merge_all"])
def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`merge` of every summary op in collection `key` (None when there is none)."""
    if context.executing_eagerly():
        raise RuntimeError("Merging tf.summary.* ops is not compatible with eager execution. "
                           "Use tf.contrib.summary instead.")
    ops = context.get_default_graph().get_collection(key, scope)
    return merge(ops, name=name) if ops else None


__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge",
           "merge_all", "histogram_proto", "merge_serialized"]
