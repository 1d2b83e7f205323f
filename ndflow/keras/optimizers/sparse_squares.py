"""A gradient and its square (or abs) as Keras 3 computes them on TensorFlow: `ops.square`
of an IndexedSlices gradient (an Embedding's) squares the slices' values, so a row gathered
twice adds two squares once densified, while every other use sees the summed (dense)
gradient."""

from __future__ import annotations

from ndflow.ops import math
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.indexed_slices import IndexedSlices


def dense_and_square(gradient):
    """`(g, g^2)`: dense tensors, the square summed per row for IndexedSlices."""
    return dense_and_elementwise(gradient, math.square)


def dense_and_elementwise(gradient, fn):
    """`(g, fn(g))`: dense tensors, `fn` (square, abs) of an IndexedSlices gradient applied to
    its values, then summed per row."""
    if isinstance(gradient, IndexedSlices):
        mapped = IndexedSlices(fn(gradient.values), gradient.indices, gradient.dense_shape)
        return convert_to_tensor(gradient), convert_to_tensor(mapped)
    return gradient, fn(gradient)
