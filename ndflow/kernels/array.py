"""ATen kernels for array ops: identities, shapes, reshaping, packing, transposes.

Shape-like inputs (Reshape's shape, ExpandDims' dim ...) arrive as small int tensors; when
the graph's static output shape is fully known the kernel uses it and never reads them.
Outputs may be views of inputs where ATen gives views (values are immutable). Slicing,
concatenation, fill/pad and gather kernels live in `array_slicing.py` / `array_fill.py`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph_def import dtype_name
from ndflow.core.shapes import fmt, reshape_sizes
from ndflow.kernels import list_ops as tensor_lists
from ndflow.kernels.permute import permute_copy
from ndflow.kernels.registry import kernel
from ndflow.ops import array_core, array_fill, array_transpose, constant_op
from ndflow.ops.apply import numpy_to_torch


def invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def static_dims(node, i: int = 0):
    """The fully known static output shape `i` as a list, else None."""
    s = node.output_shapes[i] if node.output_shapes else None
    return s.as_list() if s is not None and s.is_fully_defined() else None


def shape_str(shape) -> str:
    return fmt(list(shape))


@kernel(constant_op.Const)
def _const(node):
    dt = node.attrs["dtype"]
    value = numpy_to_torch(node.attrs["value"], dt, node.device) \
        if dt is not dtypes.string else node.attrs["value"]
    return lambda: value


def _passthrough(node):
    return lambda x: x


for _op in (array_core.Identity, array_core.StopGradient, array_core.PlaceholderWithDefault):
    kernel(_op)(_passthrough)


@kernel(array_core.Placeholder)
def _placeholder(node):
    """TF's PlaceholderOp: running one that was not fed is an error (raised when the kernel
    is built, i.e. when a plan that would run it is compiled)."""
    shape = node.attrs.get("shape")
    shown = f" and shape {fmt(shape)}" if shape is not None and shape.rank is not None else ""
    raise invalid(f"You must feed a value for placeholder tensor '{node.name}' with dtype "
                  f"{dtype_name(node.attrs['dtype'])}{shown}")


@kernel(array_core.IdentityN)
def _identity_n(node):
    return (lambda *xs: xs) if len(node.output_dtypes) > 1 else (lambda x: x)


@kernel(array_core.NoOp)
def _no_op(node):
    return lambda: None


@kernel(array_core.EnsureShape)
def _ensure_shape(node):
    want = node.attrs["shape"]

    def ensure_shape(x):
        if not want.is_compatible_with(tuple(x.shape)):
            raise invalid(f"Shape of tensor input {shape_str(x.shape)} is not compatible with "
                          f"expected shape {fmt(want)}.")
        return x
    return ensure_shape


# -- Shape, ShapeN, Size, Rank -------------------------------------------------------------------

def _int_vector(dt: torch.dtype, dev: torch.device):
    """values (ints) -> a tensor of `dt` on `dev`. On the CPU through NumPy: `torch.tensor`
    of a Python sequence infers its type element by element (9-10 us for a 4-d shape against
    ~4 us, measured on the AVX2 EPYC), and a dynamic-shape graph runs a Shape per reshape."""
    if dev.type != "cpu":
        return lambda values: torch.tensor(values, dtype=dt, device=dev)
    np_dtype = np.int64 if dt == torch.int64 else np.int32
    return lambda values: torch.from_numpy(np.array(values, dtype=np_dtype))


@kernel(array_core.Shape)
def _shape(node):
    make = _int_vector(node.attrs["out_type"].torch_dtype, node.device)
    return lambda x: make(x.shape)


@kernel(array_core.ShapeN)
def _shape_n(node):
    make = _int_vector(node.attrs["out_type"].torch_dtype, node.device)
    if node.attrs["N"] == 1:
        return lambda x: make(x.shape)
    return lambda *xs: tuple(make(x.shape) for x in xs)


@kernel(array_core.Size)
def _size(node):
    make = _int_vector(node.attrs["out_type"].torch_dtype, node.device)
    return lambda x: make(x.numel())


@kernel(array_core.Rank)
def _rank(node):
    dev = node.device
    return lambda x: torch.tensor(x.dim(), dtype=torch.int32, device=dev)


# -- Reshape, ExpandDims, Squeeze ----------------------------------------------------------------

def reshape_error(x, dims: list) -> InvalidArgumentError:
    """TF's Reshape kernel messages for a shape that does not fit `x`."""
    n, unknown, message = reshape_sizes(dims, "Only one input size", "Size")
    if message is not None:
        return invalid(message)
    if unknown:
        return invalid(f"Input to reshape is a tensor with {x.numel()} values, but the "
                       f"requested shape requires a multiple of {n}")
    return invalid(f"Input to reshape is a tensor with {x.numel()} values, but the requested "
                   f"shape has {n}")


@kernel(array_core.Reshape)
def _reshape(node):
    static = static_dims(node)

    def reshape(x, shape):
        dims = static if static is not None else shape.tolist()
        try:
            return x.reshape(dims)
        except RuntimeError:
            zero_size = _zero_size_dims(x, shape.tolist())
            if zero_size is None:
                raise reshape_error(x, shape.tolist()) from None
            return x.reshape(zero_size)
    return reshape


def _zero_size_dims(x, dims: list) -> list | None:
    """TF's rule for -1 when the requested shape has a 0: zero sizes are left out of both
    element counts, so reshape([0, 3], [0, -1]) is [0, 3]; None when it does not apply."""
    if dims.count(-1) != 1 or 0 not in dims or any(d < -1 for d in dims):
        return None
    known = math.prod(d for d in dims if d > 0)
    present = math.prod(d for d in x.shape if d > 0)
    out = list(dims)
    out[dims.index(-1)] = present // known
    return out


@kernel(array_core.ExpandDims)
def _expand_dims(node):
    static = static_dims(node)
    if static is not None:
        return lambda x, dim: x.reshape(static)

    def expand_dims(x, dim):
        d = int(dim.reshape(-1)[0])
        r = x.dim()
        if not -1 - r <= d <= r:
            raise invalid(f"Tried to expand dim index {d} for tensor with {r} dimensions.")
        return x.unsqueeze(d)
    return expand_dims


@kernel(array_core.Squeeze)
def _squeeze(node):
    axes = node.attrs["squeeze_dims"]
    static = static_dims(node)
    if not axes:
        return (lambda x: x.reshape(static)) if static is not None else torch.squeeze

    def squeeze(x):
        r = x.dim()
        for a in axes:
            if not -r <= a < r:
                raise invalid(f"Tried to squeeze dim index {a} for tensor with {r} dimensions.")
            d = a + r if a < 0 else a
            if x.shape[d] != 1:
                raise invalid(f"Can not squeeze dim[{d}], expected a dimension of 1, got "
                              f"{x.shape[d]}")
        return x.squeeze(tuple(axes))
    return squeeze


# -- Pack / Unpack -------------------------------------------------------------------------------

@kernel(array_core.Pack)
def _pack(node):
    axis = node.attrs["axis"]

    def pack(*xs):
        try:
            return torch.stack(xs, axis)
        except (RuntimeError, IndexError):
            for i, x in enumerate(xs[1:], 1):
                if x.shape != xs[0].shape:
                    raise invalid(f"Shapes of all inputs must match: values[0].shape = "
                                  f"{shape_str(xs[0].shape)} != values[{i}].shape = "
                                  f"{shape_str(x.shape)}") from None
            r = xs[0].dim() + 1
            raise invalid(f"axis = {axis} not in [{-r}, {r})") from None
    return pack


@kernel(array_core.Unpack)
def _unpack(node):
    num, axis = node.attrs["num"], node.attrs["axis"]

    def unpack(x):
        r = x.dim()
        if not -r <= axis < r:
            raise invalid(f"axis = {axis} not in [{-r}, {r})")
        if x.shape[axis] != num:
            raise invalid(f"Input shape axis {axis + r if axis < 0 else axis} must equal "
                          f"{num}, got shape {shape_str(x.shape)}")
        parts = torch.unbind(x, axis)
        return parts[0] if num == 1 else parts
    return unpack


# -- ZerosLike / OnesLike / Transpose / InvertPermutation ----------------------------------------

@kernel(array_fill.ZerosLike)
def _zeros_like(node):
    if tensor_lists.is_variant(node):
        return tensor_lists.zeros_like_list
    return lambda x: torch.zeros_like(x, memory_format=torch.contiguous_format)


@kernel(array_fill.OnesLike)
def _ones_like(node):
    return lambda x: torch.ones_like(x, memory_format=torch.contiguous_format)


@kernel(array_transpose.Transpose)
def _transpose(node):
    def transpose(x, perm):
        p = perm.tolist()
        if len(p) != x.dim():
            raise invalid(f"transpose expects a vector of size {x.dim()}. But input(1) is a "
                          f"vector of size {len(p)}")
        for d in p:
            if not 0 <= d < x.dim():
                raise invalid(f"{d} is out of range [0 .. {x.dim()})")
        if sorted(p) != list(range(len(p))):
            raise invalid(f"{len(p) and p[0]} is missing from {{{','.join(map(str, p))}}}.")
        return permute_copy(x, p)
    return transpose


@kernel(array_transpose.ConjugateTranspose)
def _conjugate_transpose(node):
    transpose = _transpose(node)
    return lambda x, perm: torch.conj_physical(transpose(x, perm))


@kernel(array_transpose.InvertPermutation)
def _invert_permutation(node):
    def invert(x):
        if x.dim() != 1:
            raise invalid("invert_permutation expects a 1D vector.")
        n = x.numel()
        seen = set()
        for d in x.tolist():  # TF's checks, in its order and wording
            if not 0 <= d < n:
                raise invalid(f"{d} is not between 0 and {n}")
            if d in seen:
                raise invalid(f"{d} is duplicated in the input.")
            seen.add(d)
        return torch.argsort(x).to(x.dtype)
    return invert
