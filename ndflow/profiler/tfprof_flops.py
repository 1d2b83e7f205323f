"""tfprof's per-op FLOP statistics: TensorFlow's `RegisterStatistics(op, "flops")` functions
(python/profiler/internal/flops_registry.py and the convolutions' in python/ops/nn_ops.py),
computed from the graph's static shapes.

`node_flops(op)` is an op's count, None for a type nothing is registered for, and raises
ValueError where a shape it needs is not fully known (tfprof then reports "N ops no flops
stats due to incomplete shapes"), as TensorFlow's `assert_is_fully_defined` does.
"""

from __future__ import annotations

import math


def _shape(t) -> list:
    dims = t.shape.dims
    if dims is None or any(d is None for d in dims):
        raise ValueError(f"Shape {t.shape} is not fully defined")
    return list(dims)


def _in(op, i: int) -> list:
    return _shape(op.inputs[i])


def _out(op) -> list:
    return _shape(op.outputs[0])


def _check_nhwc(op) -> None:
    fmt = op.attrs.get("data_format", "")
    if (fmt.decode() if isinstance(fmt, bytes) else fmt) != "NHWC":
        raise ValueError("Only NHWC format is supported in flops computations")


def _unary(per_element: int = 1):
    return lambda op: math.prod(_in(op, 0)) * per_element


def _binary(per_element: int = 1):
    return lambda op: math.prod(_out(op)) * per_element


def _reduction(reduce_flops: int = 1, finalize_flops: int = 0):
    def flops(op):
        n_in, n_out = math.prod(_in(op, 0)), math.prod(_out(op))
        return n_in * reduce_flops + n_out * (finalize_flops - reduce_flops)
    return flops


def _ksize_area(op) -> int:
    return math.prod(op.attrs["ksize"])


def _pool(op):
    _check_nhwc(op)
    return _ksize_area(op) * math.prod(_out(op))


def _avg_pool_grad(op):
    _check_nhwc(op)
    return _ksize_area(op) * math.prod(_in(op, 1)) * 2


def _max_pool_grad(op):
    _check_nhwc(op)
    orig_out = math.prod(_in(op, 1))
    return _ksize_area(op) * orig_out + orig_out


def _strides_hw(op) -> int:
    s = list(op.attrs["strides"])
    return s[1] * s[2]


def _conv2d_backprop_input(op):
    _check_nhwc(op)
    out, kernel = _out(op), _in(op, 1)
    return int(2 * math.prod(out) * math.prod(kernel) / (out[-1] * _strides_hw(op)))


def _conv2d_backprop_filter(op):
    _check_nhwc(op)
    image, kernel = _in(op, 0), _out(op)
    return int(2 * math.prod(image) * math.prod(kernel) / (image[-1] * _strides_hw(op)))


def _add_n(op):
    n = len(op.inputs) + len(op.control_inputs)  # TF counts the NodeDef's inputs
    if not n:
        return 0
    return math.prod(_in(op, 0)) * (n - 1)


def _mat_mul(op):
    a = _in(op, 0)
    k = a[0] if op.attrs.get("transpose_a", False) else a[1]
    return k * math.prod(_out(op)) * 2


def _batch_mat_mul(op):
    a = _in(op, 0)
    adj = op.attrs.get("adj_x", op.attrs.get("transpose_a", False))
    k = a[-2] if adj else a[-1]
    return k * math.prod(_out(op)) * 2


def _conv3d(op):
    _in(op, 0)
    f = _in(op, 1)
    return math.prod(_out(op)) * f[3] * f[0] * f[1] * f[2] * 2


def _conv2d(op):
    _in(op, 0)
    f = _in(op, 1)
    return math.prod(_out(op)) * f[2] * f[0] * f[1] * 2


def _depthwise_conv(op):
    _in(op, 0)
    f = _in(op, 1)
    return math.prod(_out(op)) * f[0] * f[1] * 2


def _bias_add(op):
    return math.prod(_in(op, 0))


def _l2_loss(op):
    return math.prod(_in(op, 0)) * 3 - 1


FLOPS = {
    "Reciprocal": _unary(), "Square": _unary(), "Rsqrt": _unary(2), "Log": _unary(),
    "Neg": _unary(), "AssignSub": _unary(), "AssignAdd": _unary(), "L2Loss": _l2_loss,
    "Softmax": _unary(5),
    "Add": _binary(), "AddV2": _binary(), "Sub": _binary(), "Mul": _binary(),
    "RealDiv": _binary(), "Maximum": _binary(), "Minimum": _binary(), "Pow": _binary(),
    "RsqrtGrad": _binary(4), "GreaterEqual": _binary(), "Greater": _binary(),
    "LessEqual": _binary(), "Less": _binary(), "Equal": _binary(), "NotEqual": _binary(),
    "SquaredDifference": _binary(2),
    "Mean": _reduction(1, 1), "Sum": _reduction(), "ArgMax": _reduction(),
    "ArgMin": _reduction(), "BiasAddGrad": _reduction(),
    "AvgPool": _pool, "MaxPool": _pool, "AvgPoolGrad": _avg_pool_grad,
    "MaxPoolGrad": _max_pool_grad, "Conv2DBackpropInput": _conv2d_backprop_input,
    "Conv2DBackpropFilter": _conv2d_backprop_filter, "AddN": _add_n, "MatMul": _mat_mul,
    "BatchMatMul": _batch_mat_mul, "BatchMatMulV2": _batch_mat_mul,
    "BatchMatMulV3": _batch_mat_mul, "Conv3D": _conv3d, "Conv2D": _conv2d,
    "DepthwiseConv2dNative": _depthwise_conv, "BiasAdd": _bias_add, "Dilation2D": _depthwise_conv,
}


def node_flops(op) -> int | None:
    fn = FLOPS.get(op.type)
    return None if fn is None else int(fn(op))
