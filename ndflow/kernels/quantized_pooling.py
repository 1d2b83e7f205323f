"""Kernels of QuantizedMaxPool / QuantizedAvgPool (TF's quantized_pooling_ops.cc): the pool
of the integers themselves, NHWC, SAME padding as TF places it (the extra row or column
after); the average is TF's int32 SpatialAvgPool: the sum of the window's in-bounds values
divided by their count, truncated toward zero. The range inputs pass through."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from ndflow.core.graph_def import dtype_name
from ndflow.kernels.registry import kernel
from ndflow.ops import quantized_nn_ops as ops


def _check_attrs(ksize, strides) -> None:
    if len(ksize) != 4:
        raise InvalidArgumentError(None, None, "Sliding window ksize field must specify 4 "
                                   "dimensions")
    if len(strides) != 4:
        raise InvalidArgumentError(None, None, "Sliding window stride field must specify 4 "
                                   "dimensions")
    if ksize[0] != 1 or strides[0] != 1:
        raise UnimplementedError(None, None, "Pooling is not yet supported on the batch "
                                 "dimension.")


def _check_inputs(x, lo, hi, ksize, strides) -> None:
    for what, t in (("min_input", lo), ("max_input", hi)):
        if t.dim() != 0:
            raise InvalidArgumentError(None, None, f"{what} shape must be rank 0 but is rank "
                                       f"{t.dim()}, received shape: "
                                       f"[{','.join(str(d) for d in t.shape)}]")
    if x.dim() != 4:
        raise InvalidArgumentError(None, None, "tensor_in_shape must have 2 spatial "
                                   f"dimensions. {x.dim()} 0")
    if ksize[3] != 1 and (ksize[1] != 1 or ksize[2] != 1):
        raise UnimplementedError(None, None, "MaxPooling supports exactly one of pooling "
                                 "across depth or pooling across width/height.")


def _padding(size: int, k: int, stride: int, padding: str) -> tuple:
    out = ops.pool_output_size(size, k, stride, padding)
    if out < 0:
        raise InvalidArgumentError(None, None, f"Computed output size would be negative: {out} "
                                   f"[input_size: {size}, effective_filter_size: {k}, stride: "
                                   f"{stride}]")
    if padding == "VALID":
        return out, 0, 0
    total = max(0, (out - 1) * stride + k - size)
    return out, total // 2, total - total // 2


def _pool(x: torch.Tensor, ksize, strides, padding: str, average: bool) -> torch.Tensor:
    n, h, w, c = x.shape
    (oh, top, bottom), (ow, left, right) = (_padding(h, ksize[1], strides[1], padding),
                                            _padding(w, ksize[2], strides[2], padding))
    if oh == 0 or ow == 0 or n == 0 or c == 0:
        return torch.empty((n, oh, ow, c), dtype=x.dtype, device=x.device)
    v = x.permute(0, 3, 1, 2).to(torch.float64)   # integers, exactly (as TF's int32 sums)
    window, stride = (ksize[1], ksize[2]), (strides[1], strides[2])
    pads = (left, right, top, bottom)
    if average:
        sums = F.avg_pool2d(F.pad(v, pads), window, stride, divisor_override=1)
        ones = F.pad(torch.ones((1, 1, h, w), dtype=v.dtype, device=v.device), pads)
        counts = F.avg_pool2d(ones, window, stride, divisor_override=1)
        out = torch.trunc(sums / counts)
    else:
        out = F.max_pool2d(F.pad(v, pads, value=float("-inf")), window, stride)
    return out.permute(0, 2, 3, 1).to(x.dtype)


def _depth_max_pool(x: torch.Tensor, k: int, stride: int) -> torch.Tensor:
    c = x.shape[-1]
    if k != stride or c % k:
        raise UnimplementedError(None, None, "Depthwise max pooling requires the depth window "
                                 "to equal the depth stride and to evenly divide the input "
                                 "depth.")
    v = x.to(torch.int64).reshape(*x.shape[:-1], c // k, k)
    return v.amax(-1).to(x.dtype)


def _factory(average: bool):
    def build(node):
        dt, name = node.attrs["T"], node.op_def.name
        if dt not in (dtypes.qint8, dtypes.quint8):   # TF's kernels: these two only
            raise NotFoundError(None, None, f"Could not find device for node: {{{{node {name}}}}} "
                                f"= {name}[T=DT_{dtype_name(dt).upper()}, ...]\nAll kernels "
                                f"registered for op {name}:\n  device='CPU'; T in [DT_QINT8]\n"
                                "  device='CPU'; T in [DT_QUINT8]")
        ksize, strides = list(node.attrs["ksize"]), list(node.attrs["strides"])
        padding = node.attrs["padding"]

        def run(x, lo, hi):
            _check_attrs(ksize, strides)
            _check_inputs(x, lo, hi, ksize, strides)
            if ksize[3] != 1:
                if average:
                    raise UnimplementedError(None, None, "Non-spatial pooling is not yet "
                                             "supported. Volunteers? :)")
                out = _depth_max_pool(x, ksize[3], strides[3])
            else:
                out = _pool(x, ksize, strides, padding, average)
            return out, lo.clone(), hi.clone()
        return run
    return build


kernel(ops.QuantizedMaxPool)(_factory(average=False))
kernel(ops.QuantizedAvgPool)(_factory(average=True))
