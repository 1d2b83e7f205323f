"""Raw memory for the numba kernels: the one place a tensor or a NumPy array becomes an
address that nopython code reads through `numba.carray`.

A numba callback on ATen's OpenMP team (kernels/omp_pool.py) sees its arrays as int64
(address, element count) pairs and views them with `carray(address_as_pointer(...), n)`,
with no bounds: a non-contiguous tensor, a float64 tensor where float32 was meant, or a count
past the end would read or write memory that is not the array's. The host side checks here,
once per launch, what the callback will assume:

    address(t, torch.float32, n)      # element 0 of t, n float32s from it
    address(t, torch.float32, m, lo)  # element lo, m of them
    span(t)                           # (address, numel) of a contiguous CPU tensor/array

Each raises `RawMemoryError` (a ValueError naming what was wrong) for a tensor that is not
on the CPU, not contiguous, of another dtype, or too short for the elements asked for (their
bytes, from the offset, past the end of the tensor or of its storage). The views inside the
callbacks stay where the kernels compute their chunks' offsets
(tests/test_architecture_rules.py names those modules); what they index was checked here.
"""

from __future__ import annotations

import numpy as np
import torch


class RawMemoryError(ValueError):
    """A tensor or array that cannot be handed to a numba kernel as asked."""


def _describe(a) -> str:
    return f"{type(a).__name__} of shape {tuple(a.shape)} and dtype {a.dtype}"


def span(a) -> tuple[int, int]:
    """(address, element count) of `a`, a contiguous CPU torch tensor or C-contiguous NumPy
    array: what a callback of omp_pool.run_chunks reads it by."""
    if isinstance(a, torch.Tensor):
        if not (a.is_cpu and a.is_contiguous()):
            raise RawMemoryError(f"a numba kernel reads a contiguous CPU tensor, got "
                                 f"{'a non-contiguous ' if a.is_cpu else 'a ' + a.device.type}"
                                 f" {_describe(a)} (strides {a.stride()})")
        return a.data_ptr(), a.numel()
    if isinstance(a, np.ndarray):
        if not a.flags.c_contiguous:
            raise RawMemoryError(f"a numba kernel reads a C-contiguous array, got a "
                                 f"non-contiguous {_describe(a)} (strides {a.strides})")
        return a.ctypes.data, a.size
    raise RawMemoryError(f"a numba kernel reads a torch tensor or a NumPy array, got "
                         f"{type(a).__name__}")


def strided_span(t: torch.Tensor) -> tuple[int, int]:
    """(address of element 0, elements from it to the last one in memory) of a strided CPU
    tensor view with non-negative strides, checked to lie inside its storage: what a callback
    reads a view by, indexing it with the view's strides (run_chunks takes the pair as is)."""
    if not t.is_cpu or any(s < 0 for s in t.stride()):
        raise RawMemoryError(f"a numba kernel reads a CPU view of non-negative strides, got "
                             f"{_describe(t)} (strides {t.stride()})")
    extent = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) if t.numel() else 0
    end = (t.storage_offset() + extent) * t.element_size()
    if end > t.untyped_storage().nbytes():
        raise RawMemoryError(f"{_describe(t)} (strides {t.stride()}) ends at byte {end}, "
                             f"outside its storage of {t.untyped_storage().nbytes()}")
    return t.data_ptr(), extent


def matrix(t: torch.Tensor, dtype) -> tuple[int, int, int, int]:
    """(address of element 0, elements from it to the last one in memory, row stride, column
    stride) of a non-empty 2-D CPU tensor view of `dtype` with non-negative strides, checked
    to lie inside its storage: what a kernel reads a matrix by, in place whatever its layout
    (~0.6 us, where `strided_span` takes 1.3: a small product's operands are read so)."""
    rows, cols = t.shape
    row, col = t.stride()
    extent = 1 + (rows - 1) * row + (cols - 1) * col
    if t.dtype != dtype or not t.is_cpu or row < 0 or col < 0 or not rows or not cols or \
            (t.storage_offset() + extent) * t.element_size() > t.untyped_storage().nbytes():
        raise RawMemoryError(f"a numba kernel reads a non-empty CPU matrix of {dtype} and "
                             f"non-negative strides inside its storage, got {_describe(t)} "
                             f"(strides {t.stride()})")
    return t.data_ptr(), extent, row, col


def within(t: torch.Tensor, dtype, extent: int) -> int:
    """The address of element 0 of a CPU tensor of `dtype` whose layout `matrix` checked on
    another tensor of its shape and strides, or of their transposes (the same elements;
    `extent` from it), checked to lie inside its own storage: a product prepared for a shape
    reads each call's operands so."""
    if t.dtype != dtype or not t.is_cpu or \
            (t.storage_offset() + extent) * t.element_size() > t.untyped_storage().nbytes():
        raise RawMemoryError(f"a numba kernel reads {extent} elements of {dtype} from element "
                             f"0 of {_describe(t)} (strides {t.stride()}), outside it")
    return t.data_ptr()


def flat(t: torch.Tensor, dtype, count: int) -> int:
    """The address of a contiguous CPU tensor of exactly `count` elements of `dtype`: a
    generated kernel that knows its arrays' lengths reads each call's tensors so."""
    if t.dtype != dtype or not t.is_cpu or t.numel() != count or not t.is_contiguous():
        raise RawMemoryError(f"a numba kernel reads {count} contiguous elements of {dtype} "
                             f"here, got {'a non-contiguous ' if not t.is_contiguous() else ''}"
                             f"{_describe(t)}")
    return t.data_ptr()


def vector(t: torch.Tensor, dtype, count: int) -> int:
    """The address of a 1-D CPU tensor of `count` adjacent elements of `dtype` (a product's
    bias: a third of `address`'s checks, which the call of a small product would pay)."""
    if t.dtype != dtype or not t.is_cpu or t.shape != (count,) or \
            (count > 1 and t.stride() != (1,)):
        raise RawMemoryError(f"a numba kernel reads {count} adjacent elements of {dtype} "
                             f"here, got {_describe(t)} (strides {t.stride()})")
    return t.data_ptr()


def address(a, dtype=None, count: int | None = None, offset: int = 0) -> int:
    """The address of element `offset` of `a` (as `span` takes it), checked to be followed by
    `count` elements (default: the rest of `a`) of `dtype` (a torch dtype for a tensor, a
    NumPy dtype for an array; None: any) inside `a` and inside its storage (~1 us: the
    pointer tables of the grouped optimizer updates take five an update)."""
    base, size = span(a)
    tensor = isinstance(a, torch.Tensor)
    if dtype is not None and a.dtype != (dtype if tensor else np.dtype(dtype)):
        raise RawMemoryError(f"a numba kernel reads {dtype} here, got {_describe(a)}")
    if count is None:
        count = size - offset
    if offset < 0 or count < 0 or offset + count > size:
        raise RawMemoryError(f"elements [{offset}, {offset + count}) are outside "
                             f"{_describe(a)} ({size} elements)")
    if not tensor:
        return base + offset * a.itemsize
    itemsize = a.element_size()
    end = (a.storage_offset() + offset + count) * itemsize
    stored = a.untyped_storage().nbytes()
    if end > stored:
        raise RawMemoryError(f"elements [{offset}, {offset + count}) of {_describe(a)} end "
                             f"at byte {end} of its storage of {stored}")
    return base + offset * itemsize


def sized_addresses(tensors: list, sizes, dtype) -> list:
    """The addresses of contiguous CPU tensors (`span`) checked to hold `sizes` elements of
    `dtype` each: the gradients a launch laid out before takes (its variables' sizes)."""
    addresses = []
    for t, size in zip(tensors, sizes):
        address, count = span(t)
        if count != size or t.dtype != dtype:
            raise RawMemoryError(f"a numba kernel reads {size} elements of {dtype} here, got "
                                 f"{_describe(t)}")
        addresses.append(address)
    return addresses


def split_rows(table: np.ndarray, width: int, arrays: int, chunk: int, itemsize: int = 4):
    """A launch table's rows (`width` int64s each: the addresses of `arrays` arrays of one
    element count, that count at index `arrays`) cut into rows of at most `chunk` elements,
    the addresses moved along their arrays (inside the spans checked when the table was
    made): a team claims rows, and a large variable's row was one thread's work. Returns (the
    table, each row's original row), or (`table`, None) where no row is over `chunk`."""
    rows = table.reshape(-1, width)
    sizes = rows[:, arrays]
    if not len(sizes) or sizes.max() <= chunk:
        return table, None
    pieces = np.maximum(1, -(-sizes // chunk))
    origin = np.repeat(np.arange(len(rows)), pieces)
    starts = (np.arange(len(origin)) - (np.cumsum(pieces) - pieces)[origin]) * chunk
    out = rows[origin]
    out[:, :arrays] += starts[:, None] * itemsize
    out[:, arrays] = np.minimum(chunk, sizes[origin] - starts)
    return out.reshape(-1), origin
