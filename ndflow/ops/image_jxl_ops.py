"""`tf.image.decode_jxl` (also `tf.io.decode_jxl`): TF's DecodeJxl op, JPEG XL files to uint8
[height, width, channels] images (kernel in kernels/image_jxl.py)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _decoded_shape(ctx):
    ctx.shapes[0].with_rank(0)
    return [TensorShape([None, None, ctx.attrs.get("channels", 0) or None])]


DecodeJxl = op_def("DecodeJxl", inputs=["contents: string"], outputs=["image: dtype"],
                   attrs=["channels: int = 0", "dtype: {uint8} = DT_UINT8"],
                   shape=_decoded_shape, gradient_undefined=True)


@tf_export("image.decode_jxl", "io.decode_jxl")
def decode_jxl(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A JPEG XL file (a 0-D string) as a uint8 [height, width, channels] image: `channels`
    0 (the file's: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) or 1, 3, 4 (which must match it)."""
    x = convert_to_tensor(contents, dtypes.string, name="contents")
    return apply_op(DecodeJxl, [x], {"channels": int(channels),
                                     "dtype": dtypes.as_dtype(dtype)}, name=name).outputs[0]
