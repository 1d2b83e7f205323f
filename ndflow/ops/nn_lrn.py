"""Local response normalization: LRN and LRNGrad (`tf.nn.local_response_normalization`).

sqr_sum[b, y, x, d] = sum(input[b, y, x, d - r : d + r + 1] ** 2)
output = input / (bias + alpha * sqr_sum) ** beta, over the last (depth) axis of a 4-D input.
Deviation from TF: T also accepts double (TF: {half, bfloat16, float}) so the gradient can be
checked in float64, as FusedBatchNormV3 does here.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.nn_common import check_rank
from ndflow.ops.op_def import op_def

_T = "T: {half, bfloat16, float, double} = DT_FLOAT"
_ATTRS = ["depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
          "beta: float = 0.5"]


def _lrn_shape(ctx):
    return [check_rank(ctx.shapes[0], 4)]


def _lrn_grad_shape(ctx):
    s = check_rank(ctx.shapes[0], 4)
    for other in ctx.shapes[1:]:
        s = s.merge_with(check_rank(other, 4))
    return [s]


LRN = op_def("LRN", inputs=["input: T"], outputs=["output: T"], attrs=[*_ATTRS, _T],
             shape=_lrn_shape)
LRNGrad = op_def("LRNGrad", inputs=["input_grads: T", "input_image: T", "output_image: T"],
                 outputs=["output: T"], attrs=[*_ATTRS, _T], shape=_lrn_grad_shape,
                 gradient_undefined=True)


def lrn_attrs(depth_radius, bias, alpha, beta) -> dict:
    return {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha),
            "beta": float(beta)}


@tf_export("nn.local_response_normalization", "nn.lrn",
           v1=["nn.local_response_normalization", "nn.lrn"])
def local_response_normalization(input, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5,
                                 name: str | None = None) -> Tensor:
    """`tf.nn.local_response_normalization` (`tf.nn.lrn`): the LRN op over the last axis."""
    x = convert_to_tensor(input, name="input")
    return apply_op(LRN, [x], lrn_attrs(depth_radius, bias, alpha, beta),
                    name=name or "LRN").outputs[0]


lrn = local_response_normalization


def lrn_grad(input_grads, input_image, output_image, depth_radius: int = 5, bias: float = 1.0,
             alpha: float = 1.0, beta: float = 0.5, name: str | None = None) -> Tensor:
    """The raw LRNGrad op (`tf.raw_ops.LRNGrad`)."""
    return apply_op(LRNGrad, [input_grads, input_image, output_image],
                    lrn_attrs(depth_radius, bias, alpha, beta), name=name).outputs[0]
