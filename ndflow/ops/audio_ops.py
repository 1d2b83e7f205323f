"""`tf.audio`: DecodeWav / EncodeWav — 16-bit PCM WAV files <-> float32 [samples, channels]
in [-1, 1) and the sample rate, as TensorFlow's ops (no gradient)."""

from __future__ import annotations

import collections

from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def


def _decoded_shape(ctx):
    ctx.shapes[0].with_rank(0)
    samples, channels = ctx.attrs["desired_samples"], ctx.attrs["desired_channels"]
    return [TensorShape([samples if samples >= 0 else None,
                         channels if channels >= 0 else None]), TensorShape([])]


def _encoded_shape(ctx):
    ctx.shapes[0].with_rank(2)
    ctx.shapes[1].with_rank(0)
    return [TensorShape([])]


DecodeWav = op_def("DecodeWav", inputs=["contents: string"],
                   outputs=["audio: float", "sample_rate: int32"],
                   attrs=["desired_channels: int = -1", "desired_samples: int = -1"],
                   shape=_decoded_shape, gradient_undefined=True)
_Decoded = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])  # TF's output tuple
EncodeWav = op_def("EncodeWav", inputs=["audio: float", "sample_rate: int32"],
                   outputs=["contents: string"], shape=_encoded_shape, gradient_undefined=True)


@tf_export("audio.decode_wav", v1=["audio.decode_wav"])
def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """(audio float32 [samples, channels], sample_rate int32) of a 16-bit PCM WAV file;
    `desired_samples` pads with zeros or truncates, `desired_channels` keeps the first
    channels or repeats the last."""
    op = apply_op(DecodeWav, [contents], {"desired_channels": desired_channels,
                                          "desired_samples": desired_samples}, name=name)
    return _Decoded(*op.outputs)


@tf_export("audio.encode_wav", v1=["audio.encode_wav"])
def encode_wav(audio, sample_rate, name=None):
    """A 16-bit PCM WAV file (string scalar) of float32 [samples, channels] audio (values
    clamped to [-1, 1], scaled by 32768 and rounded half away from zero, as TF)."""
    return apply_op(EncodeWav, [audio, sample_rate], name=name).outputs[0]
