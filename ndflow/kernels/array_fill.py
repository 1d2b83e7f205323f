"""ATen kernels for Fill, Range, Tile, BroadcastTo (and BroadcastGradientArgs), the Pad family,
GatherV2, UnsortedSegmentSum and OneHot, with TF's CPU kernel error messages."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels import broadcast_layout
from ndflow.kernels.padding import constant_pad
from ndflow.kernels.registry import kernel
from ndflow.ops import array_fill as ops
from ndflow.ops import array_gather as gops
from ndflow.ops import array_range
from ndflow.ops.array_range import range_size


def invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _static(node):
    s = node.output_shapes[0] if node.output_shapes else None
    return s.as_list() if s is not None and s.is_fully_defined() else None


@kernel(ops.Fill)
def _fill(node):
    static = _static(node)

    def fill(dims, value):
        shape = static
        if shape is None:
            shape = dims.tolist()
            for d in shape:
                if d < 0:
                    raise invalid(f"Dimension {d} must be >= 0")
        return value.expand(shape).contiguous()
    return fill


@kernel(array_range.Range)
def _range(node):
    dt = node.attrs["Tidx"]
    integer = dt.is_integer
    dev = node.device

    def range_(start, limit, delta):
        a, b, d = start.item(), limit.item(), delta.item()
        try:
            n = range_size(a, b, d, integer)
        except ValueError as e:
            raise invalid(str(e)) from None
        if integer:
            return torch.arange(a, a + n * d, d, dtype=dt.torch_dtype, device=dev)[:n]
        out = torch.arange(n, dtype=torch.float64, device=dev).mul_(d).add_(a)
        return out.to(dt.torch_dtype)
    return range_


@kernel(ops.Tile)
def _tile(node):
    def tile(x, multiples):
        m = multiples.tolist()
        if len(m) != x.dim():
            raise invalid(f"Expected multiples argument to be a vector of length {x.dim()} but "
                          f"got length {len(m)}")
        for i, k in enumerate(m):
            if k < 0:
                raise invalid(f"Expected multiples[{i}] >= 0, but got {k}")
        if m and all(k == 1 or n == 1 for k, n in zip(m, x.shape)):   # a broadcast
            return broadcast_layout.expand(x, [n * k for n, k in zip(x.shape, m)])
        return x.repeat(m) if m else x
    return tile


@kernel(ops.BroadcastTo)
def _broadcast_to(node):
    static = _static(node)

    def broadcast_to(x, shape):
        dims = static if static is not None else shape.tolist()
        try:
            if len(dims) < x.dim() or any(d < 0 for d in dims):
                raise RuntimeError
            return broadcast_layout.expand(x, dims)
        except RuntimeError:
            if len(dims) < x.dim():
                raise invalid(f"Rank of input ({x.dim()}) must be no greater than rank of "
                              f"output shape ({len(dims)}).") from None
            raise invalid(f"Incompatible shapes: {fmt(list(x.shape))} vs. {fmt(dims)}") \
                from None
    return broadcast_to


def _check_paddings(x, paddings) -> list:
    p = paddings.tolist()
    if len(p) != x.dim():
        raise invalid(f"The first dimension of paddings must be the rank of inputs"
                      f"{fmt([len(p), 2])} {fmt(list(x.shape))}")
    for a, b in p:
        if a < 0 or b < 0:
            raise invalid(f"Paddings must be non-negative: {a} {b}")
    return p


def _flat_pads(p: list) -> list:
    return [v for a, b in reversed(p) for v in (a, b)]


@kernel(ops.Pad)
def _pad(node):
    return lambda x, paddings: constant_pad(x, _flat_pads(_check_paddings(x, paddings)))


@kernel(ops.PadV2)
def _pad_v2(node):
    def pad_v2(x, paddings, value):
        return constant_pad(x, _flat_pads(_check_paddings(x, paddings)), value.item())
    return pad_v2


def mirror_indices(n: int, a: int, b: int, reflect: bool) -> list:
    """Source index of each output position of a mirror-padded dimension of size n."""
    if reflect:
        left, right = list(range(a, 0, -1)), list(range(n - 2, n - 2 - b, -1))
    else:
        left, right = list(range(a - 1, -1, -1)), list(range(n - 1, n - 1 - b, -1))
    return left + list(range(n)) + right


def _mirror_plan(x_shape, p, reflect: bool, grad: bool, dev):
    plan = []
    for dim, (n, (a, b)) in enumerate(zip(x_shape, p)):
        if a == 0 and b == 0:
            continue
        size = n - a - b if grad else n
        limit = size - 1 if reflect else size
        if a > limit or b > limit:
            word = "less than" if reflect else "no greater than"
            neg = "not less than" if reflect else "greater than"
            raise invalid(f"paddings must be {word} the dimension size: {a}, {b} {neg} {size}")
        idx = torch.tensor(mirror_indices(size, a, b, reflect), dtype=torch.long, device=dev)
        plan.append((dim, size, idx))
    return plan


def _mirror_kernel(node, grad: bool):
    reflect = node.attrs["mode"] == "REFLECT"
    dev = node.device
    cache: dict = {}

    def mirror(x, paddings):
        p = _check_paddings(x, paddings)
        key = (tuple(x.shape), tuple(map(tuple, p)))
        plan = cache.get(key)
        if plan is None:
            plan = cache[key] = _mirror_plan(x.shape, p, reflect, grad, dev)
        for dim, size, idx in plan:
            if not grad:
                x = torch.index_select(x, dim, idx)
            else:
                shape = list(x.shape)
                shape[dim] = size
                x = torch.zeros(shape, dtype=x.dtype, device=x.device).index_add_(dim, idx, x)
        return x
    return mirror


kernel(ops.MirrorPad)(lambda node: _mirror_kernel(node, False))
kernel(ops.MirrorPadGrad)(lambda node: _mirror_kernel(node, True))


# -- GatherV2, UnsortedSegmentSum, OneHot --------------------------------------------------------

def _first_bad(indices, n: int):
    bad = ((indices < 0) | (indices >= n)).nonzero()
    pos = bad[0].tolist() if len(bad) else []
    value = indices[tuple(pos)].item() if len(bad) else None
    where = f"[{','.join(map(str, pos))}]" if pos else ""
    return where, value


@kernel(gops.GatherV2)
def _gather(node):
    def gather(params, indices, axis):
        a = int(axis)
        r = params.dim()
        if not -r <= a < r:
            raise invalid(f"Expected axis in the range [{-r}, {r}), but got {a}")
        a += r if a < 0 else 0
        try:
            out = torch.index_select(params, a, indices.reshape(-1))
        except (IndexError, RuntimeError):
            where, value = _first_bad(indices, params.shape[a])
            raise invalid(f"indices{where} = {value} is not in [0, {params.shape[a]})") \
                from None
        shape = params.shape[:a] + indices.shape + params.shape[a + 1:]
        return out.reshape(shape)
    return gather


@kernel(gops.UnsortedSegmentSum)
def _unsorted_segment_sum(node):
    def segment_sum(data, ids, num_segments):
        num = int(num_segments)
        flat = ids.reshape(-1).long()
        rest = data.shape[ids.dim():]
        values = data.reshape((flat.numel(),) + tuple(rest))
        if flat.numel():
            if int(flat.max()) >= num:
                bad = int((flat >= num).nonzero()[0])
                raise invalid(f"segment_ids[{bad}] = {int(flat[bad])} is out of range "
                              f"[0, {num})")
            keep = flat >= 0
            if not bool(keep.all()):
                flat, values = flat[keep], values[keep]
        out = torch.zeros((num,) + tuple(rest), dtype=data.dtype, device=data.device)
        return out.index_add_(0, flat, values)  # `out` is our own fresh buffer
    return segment_sum


@kernel(gops.OneHot)
def _one_hot(node):
    axis = node.attrs["axis"]
    dev = node.device

    def one_hot(indices, depth, on, off):
        d = int(depth)
        if d < 0:
            raise invalid(f"depth must be non-negative, got: {d}")
        r = indices.dim()
        if not -1 <= axis <= r:
            raise invalid(f"Expected axis to be -1 or between [0, {r + 1}).  But received: "
                          f"{axis}")
        mask = indices.unsqueeze(-1) == torch.arange(d, device=dev, dtype=indices.dtype)
        out = torch.where(mask, on, off)
        if axis != -1 and axis != r:
            out = out.movedim(-1, axis).contiguous()
        return out
    return one_hot


@kernel(gops.Where)
def _where(node):
    return lambda x: torch.nonzero(x)


@kernel(ops.BroadcastGradientArgs)
def _broadcast_gradient_args(node):
    def bga(s0, s1):
        a, b = s0.tolist(), s1.tolist()
        n = max(len(a), len(b))
        xa, xb = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        r0, r1 = [], []
        for i, (da, db) in enumerate(zip(xa, xb)):
            if da == 1:
                r0.append(i)
            if db == 1:
                r1.append(i)
            if da != db and 1 not in (da, db):
                raise InvalidArgumentError(
                    None, None, f"Incompatible shapes: [{','.join(map(str, a))}] vs. "
                    f"[{','.join(map(str, b))}]")
        return (torch.tensor(r0, dtype=s0.dtype, device=s0.device),
                torch.tensor(r1, dtype=s1.dtype, device=s1.device))
    return bga
