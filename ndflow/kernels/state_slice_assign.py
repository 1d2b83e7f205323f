"""Kernel of ResourceStridedSliceAssign (`v[0, 1:3].assign(x)`).

A value read earlier never changes: the slice is written in place only when nothing else
holds the variable's tensor, else into a copy (`state_sparse.writable`). The value
broadcasts into the slice's final shape as TF's kernel allows (extra leading 1-dims, size-1
dims); an empty slice accepts any value.
"""

from __future__ import annotations

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape, fmt
from ndflow.kernels.array_slicing import compile_strided_slice
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import not_found, tf_type_name
from ndflow.kernels.state_sparse import writable
from ndflow.ops.array_slicing import strided_slice_spec
from ndflow.ops.state_slice_assign import ResourceStridedSliceAssign

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _broadcast_to(value_shape: list, final: list) -> list | None:
    """`value_shape` without its extra leading 1-dims when it broadcasts into `final`."""
    vs = list(value_shape)
    while len(vs) > len(final) and vs[0] == 1:
        vs.pop(0)
    if len(vs) > len(final):
        return None
    tail = final[len(final) - len(vs):]
    return vs if all(v in (1, f) for v, f in zip(vs, tail)) else None


@kernel(ResourceStridedSliceAssign)
def _resource_strided_slice_assign(node):
    masks = {k: node.attrs[k] for k in _MASKS}
    dtype = node.attrs["T"]

    def run(res, begin, end, strides, value):
        if res.value is None:
            raise not_found(res)
        if res.dtype is not dtype:
            raise InvalidArgumentError(
                None, None, f"l-value dtype {tf_type_name(res.dtype)} does not match r-value "
                f"dtype {tf_type_name(dtype)}")
        dims = list(res.value.shape)
        args = [v.tolist() for v in (begin, end, strides)]
        _, _, bare, bare_flips = compile_strided_slice(dims, *args, masks)
        final = strided_slice_spec(dims, *args, masks).final
        n = 1
        for d in final:
            n *= d
        if n == 0:
            return None
        vs = _broadcast_to(list(value.shape), final)
        if vs is None:
            raise InvalidArgumentError(
                None, None, f"Cannot broadcast input shape {fmt(TensorShape(value.shape))} "
                f"into final shape {fmt(TensorShape(final))}")
        table = writable(res)  # in place unless a read of the variable is still alive
        view = table[bare]
        src = value.to(table.device).reshape(vs).expand(final).reshape(view.shape)
        view.copy_(src.flip(bare_flips) if bare_flips else src)
        return None

    return run
