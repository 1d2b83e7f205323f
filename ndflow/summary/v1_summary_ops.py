"""TF1's summary ops (`tf.compat.v1.summary.scalar/histogram/image/audio/text/
tensor_summary/merge/merge_all`) as TensorFlow builds them: TF's ScalarSummary,
HistogramSummary, ImageSummary, AudioSummaryV2, TensorSummaryV2 and MergeSummary ops
(ops/summary_v1_ops.py), each named by its summary scope (`loss`, `family/name`), whose value
is the serialized `Summary` TF's kernels make; added to the SUMMARIES collection for
`merge_all`. Eagerly the op runs at once (or, with a default TF2 writer and a step, the TF2
summary is written instead)."""

from __future__ import annotations

import contextlib
import re
import warnings

from tensorboard.compat.proto import summary_pb2

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.scopes import name_scope
from ndflow.kernels.summary_v1_kernels import histogram_proto
from ndflow.ops import summary_v1_ops as ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.summary import summary_ops
from ndflow.summary.writer import STATE
from ndflow.train.training_util import get_global_step

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


def _collect(op, collections, default):
    if context.executing_eagerly():
        return
    graph = context.get_default_graph()
    for key in (collections if collections is not None else default):
        graph.add_to_collection(key, op)


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

    with v1_summary_scope(name, family) as (tag, scope):
        val = apply_op(ops.ScalarSummary, [tag, tensor], name=scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


@tf_export(v1=["summary.histogram"])
def histogram(name, values, collections=None, family=None):
    """A serialized `Summary` with a `HistogramProto` of `values`."""
    v2 = _invoke_v2(name, family, summary_ops.histogram, data=values)
    if v2 is not None:
        return v2

    with v1_summary_scope(name, family, "HistogramSummary") as (tag, scope):
        val = apply_op(ops.HistogramSummary, [tag, values], name=scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


@tf_export(v1=["summary.image"])
def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A serialized `Summary` with up to `max_outputs` PNG images of a [k, h, w, c] batch,
    tagged `name/image` (one) or `name/image/i`."""
    v2 = _invoke_v2(name, family, summary_ops.image, data=tensor, max_outputs=max_outputs)
    if v2 is not None:
        return v2

    with v1_summary_scope(name, family) as (tag, scope):
        val = apply_op(ops.ImageSummary, [tag, tensor], {"max_images": max_outputs},
                       name=scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


@tf_export(v1=["summary.audio"])
def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """A serialized `Summary` with up to `max_outputs` WAV clips of a [k, frames, channels]
    (or [k, frames]) float batch in [-1, 1], tagged `name/audio` (one) or `name/audio/i`."""
    v2 = _invoke_v2(name, family, summary_ops.audio, data=tensor, sample_rate=sample_rate,
                    max_outputs=max_outputs)
    if v2 is not None:
        return v2

    with v1_summary_scope(name, family) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        val = apply_op(ops.AudioSummaryV2, [tag, tensor, rate], {"max_outputs": max_outputs},
                       name=scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


@tf_export(v1=["summary.text"])
def text(name, tensor, collections=None):
    """A serialized `Summary` with the string `tensor` as a text-plugin tensor summary."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got "
                         f"{tensor.dtype}")
    v2 = _invoke_v2(name, None, summary_ops.text, data=tensor)
    if v2 is not None:
        return v2
    md = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=md, collections=collections)


@tf_export(v1=["summary.tensor_summary"])
def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A serialized `Summary` holding `tensor` itself, with `summary_metadata` (or one made
    of `display_name` and `summary_description`)."""
    md = summary_pb2.SummaryMetadata()
    if summary_metadata is not None:
        md.CopyFrom(summary_metadata)
    if summary_description is not None:
        md.summary_description = summary_description
    if display_name is not None:
        md.display_name = display_name
    with v1_summary_scope(name, family) as (tag, scope):
        val = apply_op(ops.TensorSummaryV2, [tag, tensor, md.SerializeToString()],
                       name=scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


@tf_export(v1=["summary.merge"])
def merge(inputs, collections=None, name=None):
    """One serialized `Summary` holding the values of the serialized Summaries `inputs`."""
    if context.executing_eagerly():
        raise RuntimeError("Merging tf.summary.* ops is not compatible with eager execution. "
                           "Use tf.contrib.summary instead.")
    name = _clean_tag(name)
    with name_scope(name, "Merge"):
        val = apply_op(ops.MergeSummary, [list(inputs)], name=name).outputs[0]
        _collect(val, collections, [])
    return val


@tf_export(v1=["summary.merge_all"])
def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`merge` of every summary op in collection `key` (None when there is none)."""
    if context.executing_eagerly():
        raise RuntimeError("Merging tf.summary.* ops is not compatible with eager execution. "
                           "Use tf.contrib.summary instead.")
    ops = context.get_default_graph().get_collection(key, scope)
    return merge(ops, name=name) if ops else None


__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge",
           "merge_all", "histogram_proto"]
