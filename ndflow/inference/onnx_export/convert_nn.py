"""Converters for TensorFlow's neural-network ops: convolutions, pooling, normalization,
activations. TensorFlow's NHWC becomes ONNX's NCHW with Transposes around the op (ONNX
Runtime's transpose optimizer cancels the pairs between consecutive ops); SAME padding is
ONNX's SAME_UPPER (the extra pad at the end, as TensorFlow puts it)."""

from __future__ import annotations

import numpy as np

from ndflow.inference.onnx_export.builder import OnnxBuilder, UnsupportedOpError, converter

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def _nhwc(op) -> bool:
    fmt = op.attrs.get("data_format", "NHWC")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if fmt not in ("NHWC", "NCHW"):
        raise UnsupportedOpError(op, f"data_format {fmt!r}")
    return fmt == "NHWC"


def _spatial(values, nhwc: bool) -> list:
    """The H, W entries of a 4-element strides/ksize/dilations list."""
    values = list(values)
    return values[1:3] if nhwc else values[2:4]


def _same_pads(op, nhwc: bool, kernel: list, strides: list, dilations: list):
    """TF's SAME padding as explicit ONNX pads (ONNX Runtime refuses SAME_UPPER with
    dilations); None when a spatial size is unknown."""
    dims = op.inputs[0].shape.as_list() if op.inputs[0].shape.rank == 4 else None
    sizes = _spatial(dims, nhwc) if dims else [None, None]
    if None in sizes:
        return None
    begins, ends = [], []
    for n, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        begins.append(total // 2)
        ends.append(total - total // 2)
    return begins + ends


def _padding(op, kernel=None, strides=None, dilations=(1, 1)) -> dict:
    pad = op.attrs.get("padding", "VALID")
    pad = pad.decode() if isinstance(pad, bytes) else pad
    if pad == "SAME":
        if kernel is not None and tuple(dilations) != (1, 1):
            pads = _same_pads(op, _nhwc(op), kernel, strides, dilations)
            if pads is None:
                raise UnsupportedOpError(op, "dilated SAME padding with unknown spatial size")
            return {"pads": pads}
        return {"auto_pad": "SAME_UPPER"}
    if pad == "VALID":
        return {"auto_pad": "VALID"}
    raise UnsupportedOpError(op, f"padding {pad!r}")


def _in_nchw(b: OnnxBuilder, op, x: str, nhwc: bool) -> str:
    return b.to_nchw(x, op.name) if nhwc else x


def _out_layout(b: OnnxBuilder, op, y: str, nhwc: bool) -> str:
    return b.to_nhwc(y, op.name) if nhwc else y


@converter("Conv2D", "DepthwiseConv2dNative")
def _conv2d(b: OnnxBuilder, op, ins: list) -> list:
    nhwc = _nhwc(op)
    w = b.constant(op.inputs[1])
    depthwise = op.type == "DepthwiseConv2dNative"
    strides = _spatial(op.attrs["strides"], nhwc)
    dilations = _spatial(op.attrs.get("dilations", [1, 1, 1, 1]), nhwc)
    w_static = op.inputs[1].shape.as_list() if op.inputs[1].shape.rank == 4 else None
    kernel = w_static[:2] if w_static and None not in w_static[:2] else None
    if kernel is None and tuple(dilations) != (1, 1):
        raise UnsupportedOpError(op, "dilated convolution with an unknown filter size")
    attrs = dict(_padding(op, kernel, strides, dilations), strides=strides,
                 dilations=dilations)
    if w is not None:
        if depthwise:  # [H, W, C, M] -> [C*M, 1, H, W], group = C
            h, wd, c, m = w.shape
            w_oihw = w.reshape(h, wd, c * m).transpose(2, 0, 1)[:, None, :, :]
            attrs["group"] = c
        else:          # HWIO -> OIHW
            w_oihw = w.transpose(3, 2, 0, 1)
            in_c = op.inputs[0].shape.as_list()[3 if nhwc else 1]
            if in_c is not None and in_c != w.shape[2]:
                attrs["group"] = in_c // w.shape[2]
        w_name = b.initializer(w_oihw, f"{op.name}/filter")
    elif depthwise:
        raise UnsupportedOpError(op, "a depthwise filter must be a constant")
    else:
        w_name = b.one("Transpose", [ins[1]], f"{op.name}/filter", perm=[3, 2, 0, 1])
    y = b.one("Conv", [_in_nchw(b, op, ins[0], nhwc), w_name], f"{op.name}/conv", **attrs)
    return [_out_layout(b, op, y, nhwc)]


@converter("MaxPool", "AvgPool")
def _pool(b: OnnxBuilder, op, ins: list) -> list:
    nhwc = _nhwc(op)
    ksize = list(op.attrs["ksize"])
    if (ksize[0], ksize[3 if nhwc else 1]) != (1, 1):
        raise UnsupportedOpError(op, "pooling across batch or channels")
    attrs = dict(_padding(op), kernel_shape=_spatial(ksize, nhwc),
                 strides=_spatial(op.attrs["strides"], nhwc))
    kind = "MaxPool" if op.type == "MaxPool" else "AveragePool"
    # TF's AvgPool divides by the window's valid elements: ONNX's count_include_pad=0 default.
    y = b.one(kind, [_in_nchw(b, op, ins[0], nhwc)], f"{op.name}/pool", **attrs)
    return [_out_layout(b, op, y, nhwc)]


@converter("LRN")
def _lrn(b: OnnxBuilder, op, ins: list) -> list:
    # TF: x / (bias + alpha * sum_{d-r..d+r} x^2)^beta; ONNX divides alpha by the window size.
    r = int(op.attrs.get("depth_radius", 5))
    size = 2 * r + 1
    y = b.one("LRN", [b.to_nchw(ins[0], op.name)], f"{op.name}/lrn", size=size,
              alpha=float(op.attrs.get("alpha", 1.0)) * size,
              beta=float(op.attrs.get("beta", 0.5)), bias=float(op.attrs.get("bias", 1.0)))
    return [b.to_nhwc(y, op.name)]


@converter("BiasAdd", "BiasAddV1")
def _bias_add(b: OnnxBuilder, op, ins: list) -> list:
    rank = op.inputs[0].shape.rank
    if op.type == "BiasAdd" and not _nhwc(op) and rank is not None and rank > 2:
        bias = b.constant(op.inputs[1])
        shape = [-1] + [1] * (rank - 2)
        if bias is not None:
            ins = [ins[0], b.initializer(bias.reshape(shape), f"{op.name}/bias")]
        else:
            ins = [ins[0], b.one("Reshape", [ins[1], b.int64s(shape)], f"{op.name}/bias")]
    return [b.one("Add", ins[:2], op.name)]


@converter("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def _fused_batch_norm(b: OnnxBuilder, op, ins: list) -> list:
    if op.attrs.get("is_training", True):
        raise UnsupportedOpError(op, "is_training=True (export an inference graph)")
    nhwc = _nhwc(op)
    eps = float(op.attrs.get("epsilon", 1e-3))
    consts = [b.constant(t) for t in op.inputs[1:5]]
    if all(c is not None for c in consts):
        # Folded into one per-channel multiply-add, so no layout change is needed.
        scale, offset, mean, var = (c.astype(np.float64) for c in consts)
        mul = scale / np.sqrt(var + eps)
        add = offset - mean * mul
        dt = b.constant(op.inputs[1]).dtype
        shape = [-1] if nhwc else [-1, 1, 1]
        m = b.initializer(mul.astype(dt).reshape(shape), f"{op.name}/mul")
        a = b.initializer(add.astype(dt).reshape(shape), f"{op.name}/add")
        y = b.one("Add", [b.one("Mul", [ins[0], m], f"{op.name}/scaled"), a], op.name)
    else:
        y = b.one("BatchNormalization", [_in_nchw(b, op, ins[0], nhwc)] + ins[1:5],
                  f"{op.name}/bn", epsilon=eps)
        y = _out_layout(b, op, y, nhwc)
    # Inference mode: batch_mean / batch_variance are the moving statistics passed in.
    return [y, ins[3], ins[4], None, None, None][: len(op.outputs)]


def _unary(onnx_type: str, **attrs):
    return lambda b, op, ins: [b.one(onnx_type, ins[:1], op.name, **attrs)]


for _tf, _onnx in {"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Elu": "Elu",
                   "Softplus": "Softplus", "Softsign": "Softsign"}.items():
    converter(_tf)(_unary(_onnx))
converter("Selu")(_unary("Selu", alpha=_SELU_ALPHA, gamma=_SELU_SCALE))


@converter("LeakyRelu")
def _leaky_relu(b: OnnxBuilder, op, ins: list) -> list:
    return [b.one("LeakyRelu", ins[:1], op.name, alpha=float(op.attrs.get("alpha", 0.2)))]


@converter("Relu6")
def _relu6(b: OnnxBuilder, op, ins: list) -> list:
    dt = op.outputs[0].dtype.as_numpy_dtype
    lo = b.initializer(np.array(0, dt), f"{op.name}/min")
    hi = b.initializer(np.array(6, dt), f"{op.name}/max")
    return [b.one("Clip", [ins[0], lo, hi], op.name)]


@converter("Softmax", "LogSoftmax")
def _softmax(b: OnnxBuilder, op, ins: list) -> list:
    # TF normalizes over the last axis; ONNX (opset >= 13) over `axis` alone, default -1.
    return [b.one(op.type, ins[:1], op.name, axis=-1)]
