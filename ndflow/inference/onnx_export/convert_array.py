"""Converters for TensorFlow's math and array ops: element-wise arithmetic, MatMul,
reductions, casts and the shape ops (Reshape, Transpose, ConcatV2, Squeeze, ExpandDims, Pad,
Shape, StridedSlice, Pack). Axes, permutations and paddings must be constants, as they are
in exported inference graphs."""

from __future__ import annotations

import numpy as np

from ndflow.inference.onnx_export.builder import (
    OnnxBuilder,
    UnsupportedOpError,
    converter,
    onnx_dtype,
)


def _binary(onnx_type: str):
    return lambda b, op, ins: [b.one(onnx_type, ins[:2], op.name)]


for _tf, _onnx in {"Add": "Add", "AddV2": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "Div",
                   "Div": "Div", "Maximum": "Max", "Minimum": "Min", "Pow": "Pow",
                   "Greater": "Greater", "Less": "Less", "Equal": "Equal"}.items():
    converter(_tf)(_binary(_onnx))


def _unary(onnx_type: str):
    return lambda b, op, ins: [b.one(onnx_type, ins[:1], op.name)]


for _tf, _onnx in {"Neg": "Neg", "Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt", "Abs": "Abs",
                   "Floor": "Floor", "Ceil": "Ceil", "Erf": "Erf", "Reciprocal": "Reciprocal",
                   "Sin": "Sin", "Cos": "Cos", "Round": "Round", "Sign": "Sign"}.items():
    converter(_tf)(_unary(_onnx))


@converter("Identity", "StopGradient", "Snapshot", "PreventGradient")
def _identity(b: OnnxBuilder, op, ins: list) -> list:
    return [ins[0]]  # no node: consumers read the input (graph outputs get their own node)


@converter("Rsqrt")
def _rsqrt(b: OnnxBuilder, op, ins: list) -> list:
    return [b.one("Reciprocal", [b.one("Sqrt", ins[:1], f"{op.name}/sqrt")], op.name)]


@converter("Square")
def _square(b: OnnxBuilder, op, ins: list) -> list:
    return [b.one("Mul", [ins[0], ins[0]], op.name)]


@converter("SquaredDifference")
def _squared_difference(b: OnnxBuilder, op, ins: list) -> list:
    d = b.one("Sub", ins[:2], f"{op.name}/diff")
    return [b.one("Mul", [d, d], op.name)]


@converter("MatMul")
def _matmul(b: OnnxBuilder, op, ins: list) -> list:
    return [b.one("Gemm", ins[:2], op.name, transA=int(bool(op.attrs.get("transpose_a"))),
                  transB=int(bool(op.attrs.get("transpose_b"))))]


@converter("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul(b: OnnxBuilder, op, ins: list) -> list:
    xs = list(ins[:2])
    for i, flag in enumerate(("adj_x", "adj_y")):
        if op.attrs.get(flag):
            rank = op.inputs[i].shape.rank
            if rank is None:
                raise UnsupportedOpError(op, f"{flag} needs a known rank")
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            xs[i] = b.one("Transpose", [xs[i]], f"{op.name}/{flag}", perm=perm)
    return [b.one("MatMul", xs, op.name)]


@converter("Cast")
def _cast(b: OnnxBuilder, op, ins: list) -> list:
    return [b.one("Cast", ins[:1], op.name, to=onnx_dtype(op.attrs["DstT"]))]


def _axes(b: OnnxBuilder, op, index: int) -> list:
    return [int(a) for a in np.asarray(b.require_constant(op, index, "axis")).reshape(-1)]


@converter("Sum", "Mean", "Max", "Min", "Prod")
def _reduce(b: OnnxBuilder, op, ins: list) -> list:
    kind = {"Sum": "ReduceSum", "Mean": "ReduceMean", "Max": "ReduceMax", "Min": "ReduceMin",
            "Prod": "ReduceProd"}[op.type]
    axes = _axes(b, op, 1)
    keep = int(bool(op.attrs.get("keep_dims", False)))
    if not axes:
        return [ins[0]]  # TF reduces over nothing: the input unchanged
    if kind == "ReduceSum" or b.opset >= 18:  # axes became an input (ReduceSum at opset 13)
        return [b.one(kind, [ins[0], b.int64s(axes)], op.name, keepdims=keep)]
    return [b.one(kind, [ins[0]], op.name, axes=axes, keepdims=keep)]


@converter("Reshape")
def _reshape(b: OnnxBuilder, op, ins: list) -> list:
    shape = b.constant(op.inputs[1])
    if shape is None:
        shape_name = b.one("Cast", [ins[1]], f"{op.name}/shape", to=onnx_dtype_int64())
        return [b.one("Reshape", [ins[0], shape_name], op.name)]
    shape = np.asarray(shape).reshape(-1)
    # TF never copies a dimension from the input for 0 (ONNX does unless allowzero=1).
    extra = {"allowzero": 1} if (shape == 0).any() else {}
    return [b.one("Reshape", [ins[0], b.int64s(shape, f"{op.name}/shape")], op.name, **extra)]


def onnx_dtype_int64() -> int:
    return 7  # TensorProto.INT64


@converter("Transpose")
def _transpose(b: OnnxBuilder, op, ins: list) -> list:
    return [b.one("Transpose", ins[:1], op.name, perm=_axes(b, op, 1))]


@converter("ConcatV2")
def _concat(b: OnnxBuilder, op, ins: list) -> list:
    axis = _axes(b, op, len(op.inputs) - 1)[0]
    return [b.one("Concat", ins[:-1], op.name, axis=axis)]


@converter("Pack")
def _pack(b: OnnxBuilder, op, ins: list) -> list:
    axis = int(op.attrs.get("axis", 0))
    axes = b.int64s([axis], f"{op.name}/axis")
    parts = [b.one("Unsqueeze", [x, axes], f"{op.name}/part") for x in ins]
    return [b.one("Concat", parts, op.name, axis=axis)]


@converter("Squeeze")
def _squeeze(b: OnnxBuilder, op, ins: list) -> list:
    dims = list(op.attrs.get("squeeze_dims", []) or [])
    if not dims:
        return [b.one("Squeeze", ins[:1], op.name)]
    return [b.one("Squeeze", [ins[0], b.int64s(dims, f"{op.name}/axes")], op.name)]


@converter("ExpandDims")
def _expand_dims(b: OnnxBuilder, op, ins: list) -> list:
    axes = b.int64s(_axes(b, op, 1), f"{op.name}/axes")
    return [b.one("Unsqueeze", [ins[0], axes], op.name)]


@converter("Pad", "PadV2", "MirrorPad")
def _pad(b: OnnxBuilder, op, ins: list) -> list:
    paddings = np.asarray(b.require_constant(op, 1, "paddings")).astype(np.int64)
    pads = b.int64s(np.concatenate([paddings[:, 0], paddings[:, 1]]), f"{op.name}/pads")
    if op.type == "MirrorPad":
        mode = op.attrs.get("mode", "REFLECT")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if mode != "REFLECT":
            raise UnsupportedOpError(op, f"mode {mode!r} (ONNX pads only by reflection)")
        return [b.one("Pad", [ins[0], pads], op.name, mode="reflect")]
    inputs = [ins[0], pads] + ([ins[2]] if op.type == "PadV2" else [])
    return [b.one("Pad", inputs, op.name, mode="constant")]


@converter("Shape")
def _shape(b: OnnxBuilder, op, ins: list) -> list:
    s = b.one("Shape", ins[:1], f"{op.name}/int64")
    return [b.one("Cast", [s], op.name, to=onnx_dtype(op.attrs.get("out_type")))]


@converter("StridedSlice")
def _strided_slice(b: OnnxBuilder, op, ins: list) -> list:
    if op.attrs.get("ellipsis_mask", 0) or op.attrs.get("new_axis_mask", 0):
        raise UnsupportedOpError(op, "ellipsis_mask / new_axis_mask")
    begin, end, strides = (np.asarray(b.require_constant(op, i, n)).astype(np.int64)
                           for i, n in ((1, "begin"), (2, "end"), (3, "strides")))
    bm, em = int(op.attrs.get("begin_mask", 0)), int(op.attrs.get("end_mask", 0))
    shrink = int(op.attrs.get("shrink_axis_mask", 0))
    big = np.iinfo(np.int64).max
    starts, ends = [], []
    for i, (s, e, st) in enumerate(zip(begin, end, strides)):
        if shrink >> i & 1:
            s, e, st = s, (s + 1 if s != -1 else big), 1
        starts.append(s if not bm >> i & 1 else (0 if st > 0 else big))
        ends.append(e if not em >> i & 1 else (big if st > 0 else -big))
    y = b.one("Slice", [ins[0], b.int64s(starts), b.int64s(ends),
                        b.int64s(range(len(starts))), b.int64s(strides)], f"{op.name}/slice")
    squeezed = [i for i in range(len(starts)) if shrink >> i & 1]
    if squeezed:
        y = b.one("Squeeze", [y, b.int64s(squeezed)], op.name)
    return [y]
