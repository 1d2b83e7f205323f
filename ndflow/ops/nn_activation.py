"""Activations: Relu, Relu6, Elu, Selu, LeakyRelu, Softplus, Softmax, LogSoftmax and grads.

Their gradients (TF's nn_grad.py, second derivatives included) are in nn_grad.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_transpose, nn_activation_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.nn_common import FLOAT_T
from ndflow.ops.op_def import POINTWISE, op_def

_REAL = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}"


def _same_shape(ctx):
    return [ctx.shapes[0]]


def _merged_shape(ctx):
    try:
        return [ctx.shapes[0].merge_with(ctx.shapes[1])]
    except ValueError:
        raise ValueError(f"Shapes must be equal rank, but are {ctx.shapes[0].rank} and "
                         f"{ctx.shapes[1].rank}") from None


def _unary(name, t=FLOAT_T, extra=()):
    return op_def(name, inputs=["features: T"], outputs=["activations: T"],
                  attrs=[t, *extra], shape=_same_shape, tags=[POINTWISE])


def _grad_op(name, second="features", t=FLOAT_T, extra=()):
    return op_def(name, inputs=["gradients: T", f"{second}: T"], outputs=["backprops: T"],
                  attrs=[t, *extra], shape=_merged_shape, tags=[POINTWISE])


def _out(op_def_, inputs, attrs=None, name=None):
    return apply_op(op_def_, inputs, attrs, name=name).outputs[0]


Relu = _unary("Relu", _REAL)
ReluGrad = _grad_op("ReluGrad", t=_REAL)
Relu6 = _unary("Relu6", _REAL)
Relu6Grad = _grad_op("Relu6Grad", t=_REAL)
Elu = _unary("Elu")
EluGrad = _grad_op("EluGrad", "outputs")
Selu = _unary("Selu")
SeluGrad = _grad_op("SeluGrad", "outputs")
_ALPHA = "alpha: float = 0.2"
LeakyRelu = _unary("LeakyRelu", FLOAT_T + " = DT_FLOAT", [_ALPHA])
LeakyReluGrad = _grad_op("LeakyReluGrad", t=FLOAT_T + " = DT_FLOAT", extra=[_ALPHA])
Softplus = _unary("Softplus")
SoftplusGrad = _grad_op("SoftplusGrad")


def _softmax_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is not None and s.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {s.rank}")
    return [s]


Softmax = op_def("Softmax", inputs=["logits: T"], outputs=["softmax: T"], attrs=[FLOAT_T],
                 shape=_softmax_shape)
LogSoftmax = op_def("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
                    attrs=[FLOAT_T], shape=_softmax_shape)


# -- public wrappers -------------------------------------------------------------------------------


@tf_export("nn.relu")
def relu(features, name: str | None = None) -> Tensor:
    """`tf.nn.relu`: max(features, 0)."""
    return _out(Relu, [features], name=name)


@tf_export("nn.relu6")
def relu6(features, name: str | None = None) -> Tensor:
    """`tf.nn.relu6`: min(max(features, 0), 6)."""
    return _out(Relu6, [convert_to_tensor(features, name="features")], name=name or "Relu6")


@tf_export("nn.elu")
def elu(features, name: str | None = None) -> Tensor:
    """`tf.nn.elu`: exp(features) - 1 if < 0, features otherwise."""
    return _out(Elu, [features], name=name)


@tf_export("nn.selu")
def selu(features, name: str | None = None) -> Tensor:
    """`tf.nn.selu`: scale * elu with alpha, scale = 1.6732632..., 1.0507009..."""
    return _out(Selu, [features], name=name)


@tf_export("nn.leaky_relu")
def leaky_relu(features, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """`tf.nn.leaky_relu`: features if > 0 else alpha * features (ints cast to float32)."""
    features = convert_to_tensor(features, name="features")
    if features.dtype.is_integer:
        features = cast(features, dtypes.float32)
    if hasattr(alpha, "item"):
        alpha = alpha.item()
    return _out(LeakyRelu, [features], {"alpha": float(alpha)}, name=name or "LeakyRelu")


@tf_export("math.softplus", "nn.softplus")
def softplus(features, name: str | None = None) -> Tensor:
    """`tf.math.softplus` / `tf.nn.softplus`: log(exp(features) + 1)."""
    return _out(Softplus, [features], name=name)


def _swap_axis(x, axis: int, rank: int):
    """Transposes `axis` with the last axis (its own inverse), as TF's `_wrap_2d_function`."""
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return array_transpose.transpose(x, perm)


def _softmax_like(op_def_, logits, axis, name):
    logits = convert_to_tensor(logits, name="logits")
    if axis is None:
        axis = -1
    rank = logits.shape.rank
    if axis == -1 or (rank is not None and axis == rank - 1):
        return _out(op_def_, [logits], name=name)
    if rank is None:
        raise NotImplementedError("softmax over a non-last axis needs a known rank")
    if not -rank <= axis < rank:
        raise ValueError(f"`axis` must be in the range [{-rank}, {rank}) where {rank} is the "
                         f"number of dimensions in the input. Received: axis={axis}")
    axis %= rank
    out = _out(op_def_, [_swap_axis(logits, axis, rank)])
    return _swap_axis(out, axis, rank) if name is None else \
        array_core.identity(_swap_axis(out, axis, rank), name=name)


@tf_export("math.softmax", "nn.softmax", v1=[])
def softmax(logits, axis: int | None = None, name: str | None = None) -> Tensor:
    """`tf.nn.softmax` (TF2): exp(logits) / sum(exp(logits), axis)."""
    return _softmax_like(Softmax, logits, axis, name)


@tf_export("math.log_softmax", "nn.log_softmax", v1=[])
def log_softmax(logits, axis: int | None = None, name: str | None = None) -> Tensor:
    """`tf.nn.log_softmax` (TF2): logits - log(sum(exp(logits), axis))."""
    return _softmax_like(LogSoftmax, logits, axis, name)


@tf_export(v1=["math.softmax", "nn.softmax"])
def softmax_v1(logits, axis: int | None = None, name: str | None = None, dim=None) -> Tensor:
    """`tf.compat.v1.nn.softmax` (`dim` is the deprecated alias of `axis`)."""
    return softmax(logits, axis if axis is not None else dim, name)


@tf_export(v1=["math.log_softmax", "nn.log_softmax"])
def log_softmax_v1(logits, axis: int | None = None, name: str | None = None, dim=None) -> Tensor:
    """`tf.compat.v1.nn.log_softmax`."""
    return log_softmax(logits, axis if axis is not None else dim, name)


attach(globals(), nn_activation_docs.DOCS)
