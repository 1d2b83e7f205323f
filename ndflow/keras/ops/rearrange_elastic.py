"""`keras.ops.rearrange` (einops notation: "b (h h1) w c -> b h (w h1) c", h1=2) and
`keras.ops.image.elastic_transform` (a Gaussian-smoothed random displacement field, sampled
with map_coordinates; int seeds give Keras' exact field: ndflow reproduces its draws)."""

from __future__ import annotations

import re

from ndflow.keras import docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import image_docs
from ndflow.keras.ops import image_functions as image
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops.symbolic import keras_op
from ndflow.keras.random_functions import draw_seed
from ndflow.ops import array_builders, array_core, array_range, stateless_random
from ndflow.ops.cast import cast

_AXES = re.compile(r"\w+|\(.*?\)")


def _groups(axes):
    """Each axis of a pattern side as the list of its names ("(h w)" -> [h, w])."""
    return [re.findall(r"\w+", a) if a.startswith("(") else [a] for a in axes]


@keras_op("rearrange")
def rearrange(tensor, pattern, **axes_lengths):
    """Reshapes and transposes `tensor` as an einops-style pattern describes.

    Each axis on the left of "->" gets a name; a parenthesized group "(h w)" is one axis
    split into several. The right side lists the names in their new order, groups merging
    axes back into one.

    Args:
      tensor: a tensor or array-like.
      pattern: e.g. "b h w c -> b c h w" (transpose) or "b (h p) w -> b h (p w)".
      **axes_lengths: the sizes of split axes that cannot be inferred, e.g. `p=2`.

    Returns:
      The rearranged tensor.

    Raises:
      ValueError: the left side's axis count differs from the tensor's rank, or the right
        side names an axis the left side lacks.

    Example:

    >>> tf.keras.ops.rearrange(tf.zeros((2, 3, 4)), "a b c -> c (a b)").shape
    TensorShape([4, 6])
    """
    x = rules.to_tensor(tensor)
    lhs, rhs = re.split(r"\s*->\s*", pattern)
    in_groups, out_groups = _groups(_AXES.findall(lhs)), _groups(_AXES.findall(rhs))
    if len(in_groups) != x.shape.rank:
        raise ValueError(f"The pattern's left side has {len(in_groups)} axes; the tensor has "
                         f"rank {x.shape.rank}")
    static = x.shape.as_list()
    dynamic = array_core.shape(x) if None in static else None
    shape = [dynamic[i] if d is None else d for i, d in enumerate(static)]
    sizes = dict(axes_lengths)
    for group, dim in zip(in_groups, shape):
        unknown = [a for a in group if a not in sizes]
        if len(group) == 1 and unknown:
            sizes[group[0]] = dim
        elif unknown:
            known = 1
            for a in group:
                if a in sizes:
                    known *= sizes[a]
            sizes[unknown[0]] = dim // known
    names = [a for g in in_groups for a in g]
    missing = {a for g in out_groups for a in g} - set(names)
    if missing:
        raise ValueError(f"Unknown axes on the right side of the pattern: {sorted(missing)}")
    x = array_core.reshape(x, _shape([sizes[a] for a in names]))
    x = arr.transpose(x, [names.index(a) for g in out_groups for a in g])
    out_shape = []
    for g in out_groups:
        size = 1
        for a in g:
            size = size * sizes[a]
        out_shape.append(size)
    return array_core.reshape(x, _shape(out_shape))


def _shape(dims):
    """A reshape target: ints, or a tensor where some dims are only known at run time."""
    if all(isinstance(d, int) for d in dims):
        return dims
    return array_core.stack([cast(d, "int32") for d in dims])


@keras_op("elastic_transform", "image")
def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear",
                      fill_mode="reflect", fill_value=0.0, seed=None, data_format=None):
    data_format = image._format(data_format)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"('nearest', 'bilinear'). Received: interpolation={interpolation}")
    if fill_mode not in ("constant", "nearest", "wrap", "reflect"):
        raise ValueError("Invalid value for argument `fill_mode`. Expected of one "
                         "('constant', 'nearest', 'wrap', 'reflect'). Received: "
                         f"fill_mode={fill_mode}")
    images = image._images(images)
    dtype = images.dtype
    single = images.shape.rank == 3
    if single:
        images = array_core.expand_dims(images, 0)
    last = images
    if data_format == "channels_first":
        last = arr.moveaxis(images, 1, -1)
    batch, height, width, channels = last.shape.as_list()
    batch = batch or 1
    size = 6 * int(sigma) | 1
    seed = draw_seed(seed)

    def field():
        # (Keras draws dx and dy with the same seed: the same field on both axes)
        noise = stateless_random.stateless_normal([batch, height, width], seed,
                                                  dtype=dtype) * cast(sigma, dtype)
        blurred = image.gaussian_blur(array_core.expand_dims(noise, -1), (size, size),
                                      (sigma, sigma), data_format="channels_last")
        return array_core.squeeze(blurred, axis=[-1])
    dx, dy = field(), field()
    gx, gy = array_builders.meshgrid(cast(array_range.range(0, width), dtype),
                                     cast(array_range.range(0, height), dtype), indexing="xy")
    xs = array_core.expand_dims(gx, 0) + cast(alpha, dtype) * dx
    ys = array_core.expand_dims(gy, 0) + cast(alpha, dtype) * dy
    order = 0 if interpolation == "nearest" else 1
    planes = []
    for c in range(channels):
        planes.append(array_core.stack([
            image.map_coordinates(last[b, ..., c], array_core.stack([ys[b], xs[b]]), order,
                                  fill_mode=fill_mode, fill_value=fill_value)
            for b in range(batch)]))
    out = array_core.stack(planes, axis=-1)
    if data_format == "channels_first":
        out = arr.moveaxis(out, -1, 1)
    out = array_core.squeeze(out, axis=[0]) if single else out
    return cast(out, dtype)


docstrings.attach(globals(), image_docs.ELASTIC_DOCS)
