"""Cast to and from the quantized and narrow dtypes (qint8 & co, float8, int4/uint4), on their
ATen storage (core/narrow_dtypes.py), for the pairs TF 2.21 has Cast kernels for; others are
TF's UnimplementedError."""

from __future__ import annotations

import torch

from ndflow.core import dtypes, narrow_dtypes
from ndflow.core.errors import UnimplementedError
from ndflow.core.graph_def import dtype_name


def _from_double(dst):
    # ATen narrows a double to float first (two roundings); TF rounds the double once, as
    # ml_dtypes does
    def run(x):
        host = x.detach().cpu().numpy().astype(dst.np_dtype)
        return narrow_dtypes.numpy_to_storage(host, dst).to(x.device)
    return run


# ATen's float -> float8_e4m3fn saturates at 448 where TF's (ml_dtypes') gives NaN past the
# rounding threshold; and ATen's float8_e5m2 NaN is 0x7F where TF's is 0x7E.
_E4M3FN_OVERFLOW = 464.0


def _to_float8(dst):
    out = dst.torch_dtype

    def run(x):
        x = x.to(torch.float32)
        bits = x.to(out).view(torch.uint8)
        sign = torch.signbit(x).to(torch.uint8) << 7
        if dst is dtypes.float8_e4m3fn:
            bits = torch.where(x.abs() > _E4M3FN_OVERFLOW, sign | 0x7F, bits)
        else:
            bits = torch.where(torch.isnan(x), sign | 0x7E, bits)
        return bits.view(out)
    return run


def _widened(src):
    """The source values as an ATen type that converts to anything: float8 as float32."""
    if src in dtypes.FLOAT8:
        return lambda x: x.to(torch.float32)
    return lambda x: x


def cast_kernel(src, dst):
    """The kernel casting storage of `src` to storage of `dst` (one of them quantized or
    narrow)."""
    if not narrow_dtypes.cast_supported(src, dst):
        raise UnimplementedError(None, None, f"Cast {dtype_name(src)} to {dtype_name(dst)} "
                                 "is not supported")
    if src is dst:
        return lambda x: x
    widen = _widened(src)
    if dst in (dtypes.int4, dtypes.uint4):
        return lambda x: narrow_dtypes.wrap_narrow_int(x, dst)
    if dst in dtypes.FLOAT8:
        return _from_double(dst) if src is dtypes.float64 else _to_float8(dst)
    out = dst.torch_dtype
    if dst.is_bool:
        return lambda x: widen(x) != 0
    if src.is_complex:   # TF drops the imaginary part
        return lambda x: torch.real(x).to(out)
    return lambda x: widen(x).to(out)

