"""TensorFlow's clip_ops by norm: `tf.clip_by_norm`, `tf.linalg.global_norm`,
`tf.clip_by_global_norm` (`tf.clip_by_value` is with the math composites)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ndflow.core import scopes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import clip_ops_docs
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import maximum, minimum, multiply, subtract, truediv, where
from ndflow.ops.array_core import identity, stack
from ndflow.ops.array_fill import ones_like
from ndflow.ops.cast import cast
from ndflow.ops.comparison import composite_name, greater
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.math import sqrt
from ndflow.ops.nn_loss import l2_loss
from ndflow.ops.reduction import reduce_sum


@tf_export("clip_by_norm")
def clip_by_norm(t, clip_norm, axes=None, name: str | None = None) -> Tensor:
    """`tf.clip_by_norm`: `t * clip_norm / max(l2norm(t, axes), clip_norm)`; a zero norm
    leaves `t` as it is (and has a finite gradient)."""
    with composite_name(name, "clip_by_norm") as final:
        values = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name="t")
        if np.isscalar(clip_norm):
            clip_norm = max(clip_norm, 0)
        else:
            clip_norm = cast(maximum(clip_norm, 0), values.dtype)
        l2sum = reduce_sum(multiply(values, values), axes, keepdims=True)
        positive = greater(l2sum, 0)
        l2sum_safe = where(positive, l2sum, ones_like(l2sum))
        l2norm = where(positive, sqrt(l2sum_safe), l2sum)
        clipped = truediv(multiply(values, clip_norm), maximum(l2norm, clip_norm))
    if isinstance(t, IndexedSlices):  # rows stay sparse, as TF (the norm is of the rows)
        return IndexedSlices(identity(clipped, name=final), t.indices, t.dense_shape)
    return identity(clipped, name=final)


def _tensor_list(t_list) -> list:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return [None if t is None else
            convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=f"t_{i}")
            for i, t in enumerate(t_list)]


@tf_export("linalg.global_norm", v1=["linalg.global_norm", "global_norm"])
def global_norm(t_list, name: str | None = None) -> Tensor:
    """`tf.linalg.global_norm`: sqrt(sum of the squared l2 norms) of the non-None tensors."""
    with composite_name(name, "global_norm") as final:
        values = [v for v in _tensor_list(t_list) if v is not None]
        half_squared = reduce_sum(stack([l2_loss(v) for v in values]))
        squared = multiply(half_squared, 2.0)
    return sqrt(squared, name=final)


@tf_export("clip_by_global_norm")
def clip_by_global_norm(t_list, clip_norm, use_norm=None, name: str | None = None) -> tuple:
    """`tf.clip_by_global_norm`: every tensor scaled by clip_norm / max(global_norm,
    clip_norm); (clipped list, global norm). A non-finite norm makes every value NaN."""
    values = _tensor_list(t_list)
    if use_norm is None:
        use_norm = global_norm(values, name)
    with scopes.name_scope(name, "clip_by_global_norm"):
        one = convert_to_tensor(1.0, dtype=use_norm.dtype)
        scale = multiply(clip_norm, minimum(truediv(1.0, use_norm), truediv(one, clip_norm)))
        scale = scale + subtract(use_norm, use_norm)  # NaN when the norm is not finite
        clipped = [None if v is None else identity(multiply(v, cast(scale, v.dtype)))
                   for v in values]
    clipped = [IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else c
               for c, t in zip(clipped, t_list)]  # sparse gradients stay sparse, as TF
    return clipped, use_norm


attach(globals(), clip_ops_docs.DOCS)
