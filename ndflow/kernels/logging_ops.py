"""Kernels for StringFormat and PrintV2. Strings are Python `bytes` in 0-d object arrays (as
string constants); tensors are summarized as TF's print_v2 does: `[1 2 3 ... 8 9 10]`, floats
in the shortest of %.6g/%.9g (float) or %.15g/%.17g (double) that reads back exactly."""

from __future__ import annotations

import logging
import sys
import threading
import time

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.tensor_text import print_one_dim
from ndflow.ops import control_flow_assert, logging_ops


def _float_text(v: float, double: bool) -> str:
    short, full = ("%.15g", "%.17g") if double else ("%.6g", "%.9g")
    s = short % v
    if v != v or v in (float("inf"), float("-inf")):
        return s
    same = float(s) == v if double else np.float32(float(s)) == np.float32(v)
    return s if same else full % v


def _scalar_formatter(dt):
    if dt is dtypes.float64:
        return lambda v: _float_text(float(v), True)
    if dt.is_floating:
        return lambda v: _float_text(float(v), False)
    if dt is dtypes.bool:
        return lambda v: "1" if v else "0"
    if dt is dtypes.string:
        return lambda v: '"' + (v.decode() if isinstance(v, bytes) else str(v)) + '"'
    return lambda v: str(int(v))


def summarize(arr: np.ndarray, dt, limit: int) -> str:
    """TF's print_v2 summary of a tensor value (`limit` < 0: every element)."""
    fmt = _scalar_formatter(dt)
    if arr.ndim == 0:  # a string scalar quoted too, as TF's StringFormat does
        return fmt(arr.item())
    rank = arr.ndim

    def rec(sub, d: int) -> str:
        n = sub.shape[0]
        if limit < 0 or n <= 2 * limit:
            picks = list(range(n))
        else:
            picks = list(range(limit)) + [None] + list(range(n - limit, n))
        last = d == rank - 1
        items = ["..." if i is None else (fmt(sub[i]) if last else rec(sub[i], d + 1))
                 for i in picks]
        sep = " " if last else "\n" * (rank - d - 1) + " " * (d + 1)
        return "[" + sep.join(items) + "]"
    return rec(arr, 0)


def _to_numpy(v):
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu()
        return (v.float() if v.dtype in (torch.bfloat16, torch.float16) else v).numpy()
    return np.asarray(v, dtype=object)


@kernel(logging_ops.StringFormat)
def _string_format(node):
    template, placeholder = node.attrs["template"], node.attrs["placeholder"]
    limit = node.attrs["summarize"]
    pieces = template.split(placeholder) if node.input_dtypes else [template]
    if len(pieces) - 1 != len(node.input_dtypes):
        raise InvalidArgumentError(None, None, "num placeholders in template and num inputs "
                                   f"must match: {len(pieces) - 1} vs. "
                                   f"{len(node.input_dtypes)}")
    kinds = list(node.input_dtypes)

    def string_format(*xs):
        out = [pieces[0]]
        for x, dt, piece in zip(xs, kinds, pieces[1:]):
            out.append(summarize(_to_numpy(x), dt, limit))
            out.append(piece)
        return np.array("".join(out).encode(), dtype=object)
    return string_format


_LOGGERS = {"log(info)": logging.INFO, "log(warning)": logging.WARNING,
            "log(error)": logging.ERROR}


@kernel(logging_ops.PrintV2)
def _print_v2(node):
    stream, end = node.attrs["output_stream"], node.attrs["end"]

    def print_v2(s):
        v = np.asarray(s, dtype=object).item()
        text = (v.decode() if isinstance(v, bytes) else str(v))
        if stream in ("stdout", "stderr"):
            out = sys.stdout if stream == "stdout" else sys.stderr
            out.write(text + end)
            out.flush()
        elif stream in _LOGGERS:
            logging.getLogger("ndflow").log(_LOGGERS[stream], text)
        elif stream.startswith("file://"):
            with open(stream[len("file://"):], "a") as f:
                f.write(text + end)
        else:
            raise InvalidArgumentError(None, None, f"{stream} is not a valid output_stream")
    return print_v2


def summarize_value(arr: np.ndarray, dt, limit: int) -> str:
    """TF's Tensor::SummarizeValue (Print's and Assert's form): the first `limit` elements
    (< 0: all) in row-major order, rows of the last dimension space separated and each
    sub-array in brackets, then '...' where elements were left out (strings raw)."""
    if dt is dtypes.string:
        def fmt(v):
            return v.decode() if isinstance(v, bytes) else str(v)
    else:
        fmt = _scalar_formatter(dt)
    flat = arr.reshape(-1)
    limit = flat.size if limit < 0 else min(limit, flat.size)
    text = print_one_dim(arr.shape, [fmt(v) for v in flat[:limit]], limit)
    # a scalar left out is '', with no '...'
    return text + ("..." if arr.ndim and flat.size > limit else "")


@kernel(logging_ops.Print)
@host_kernel(logging_ops.Print)
def _print_v1(node):
    """TF1's Print: the input passed through; the message and each data tensor's summary
    written to stderr, the first `first_n` times (< 0: every time)."""
    message, first_n = node.attrs["message"], node.attrs["first_n"]
    limit, kinds = node.attrs["summarize"], list(node.input_dtypes[1:])
    calls = [0]
    lock = threading.Lock()

    def print_(x, *data):
        if first_n >= 0:
            with lock:
                if calls[0] >= first_n:
                    return x
                calls[0] += 1
        parts = [f"[{summarize_value(_to_numpy(v), dt, limit)}]" for v, dt in zip(data, kinds)]
        sys.stderr.write(message + "".join(parts) + "\n")
        sys.stderr.flush()
        return x
    return print_


@kernel(control_flow_assert.AssertOp)
def _assert(node):
    limit, kinds = node.attrs["summarize"], list(node.input_dtypes[1:])

    def assert_(condition, *data):
        if bool(condition.reshape(-1)[0]) if condition.numel() else True:
            return None
        parts = [f"[{summarize_value(_to_numpy(x), dt, limit)}]" for x, dt in zip(data, kinds)]
        raise InvalidArgumentError(None, None, "assertion failed: " + " ".join(parts))
    return assert_


@kernel(logging_ops.Timestamp)
def _timestamp(node):
    device = node.device
    return lambda: torch.tensor(time.time(), dtype=torch.float64, device=device)
