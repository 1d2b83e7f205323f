"""`tf.boolean_mask`: TF's composite (Reshape the masked dimensions into one, Where on the
flattened mask, Squeeze, GatherV2), so its gradient is GatherV2's."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import OPERATORS, Tensor
from ndflow.ops import array_mask_docs
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.array_core import reshape, shape, squeeze
from ndflow.ops.array_gather import gather, where
from ndflow.ops.array_slicing import concat, is_boolean_index, slice_helper
from ndflow.ops.reduction import reduce_prod


@tf_export("boolean_mask")
def boolean_mask(tensor, mask, axis=None, name: str = "boolean_mask") -> Tensor:
    """`tf.boolean_mask`: the slices of `tensor` (from `axis` on) where `mask` is true."""
    with name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        shape_mask = mask.shape
        ndims_mask = shape_mask.rank
        shape_tensor = tensor.shape
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None is "
                             "not.")
        axis = 0 if axis is None else axis
        axis_value = constant_value(axis) if isinstance(axis, Tensor) else axis
        if axis_value is not None:
            axis = int(axis_value)
            if shape_tensor.rank is not None:
                part = TensorShape(shape_tensor.as_list()[axis:axis + ndims_mask])
                if not part.is_compatible_with(shape_mask):
                    raise ValueError(f"Shapes {part} and {shape_mask} are incompatible")
        leading_size = reduce_prod(shape(tensor)[axis:axis + ndims_mask], [0])
        tensor = reshape(tensor, concat([shape(tensor)[:axis], [leading_size],
                                         shape(tensor)[axis + ndims_mask:]], 0))
        if axis_value is not None and shape_tensor.rank is not None \
                and hasattr(tensor, "set_shape"):  # graph tensors: TF's static shape fix-up
            dims = shape_tensor.as_list()
            masked = dims[axis:axis + ndims_mask]
            first = None if None in masked else int(_prod(masked))
            tensor.set_shape(dims[:axis] + [first] + dims[axis + ndims_mask:])
        mask = reshape(mask, [-1])
        indices = squeeze(where(mask), axis=[1])
        return gather(tensor, indices, axis=axis)


def _prod(dims: list) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


__all__ = ["boolean_mask"]


def getitem(tensor, slice_spec, var=None) -> Tensor:
    """`Tensor.__getitem__` (TF's `_slice_helper`): a boolean index (`x[x > 0]`, `x[np_mask]`,
    also of a variable) is `boolean_mask`; anything else one StridedSlice."""
    if is_boolean_index(slice_spec):
        return boolean_mask(tensor=convert_to_tensor(tensor), mask=slice_spec)
    return slice_helper(tensor, slice_spec, var)


OPERATORS["getitem"] = getitem


attach(globals(), array_mask_docs.DOCS)
