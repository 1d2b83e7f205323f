"""`tf.image` geometry: flips, crops, pads and per-image standardization.

As in TensorFlow these are compositions of array ops (ReverseV2, Slice, Pad, ...), not ops of
their own, so their gradients are those ops' gradients. An image is a 3-D `[height, width,
channels]` tensor or a 4-D batch `[batch, height, width, channels]`; the shape checks and
their ValueError texts are TF 2.21's. Sizes known statically are checked when the graph is
built (or at once, eagerly); unknown ones get an Assert op, as TF adds.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import control_dependencies, name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_reorder,
    array_slicing,
    cast,
    comparison,
    image_ops_docs,
    math,
    random,
    reduction,
    stateless_random,
)
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.norms import reduce_std


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def static_value(x):
    """A Python int/float for `x` when it is known now (a number or a constant tensor)."""
    if not is_tensor(x):
        return x
    v = constant_value(x)
    return None if v is None else np.asarray(v).item()


def assert_true(cond, message: str) -> list:
    """TF's `_assert`: a ValueError now when `cond` is known, else an Assert op to run."""
    if is_tensor(cond):
        known = static_value(cond)
        if known is None and context.executing_eagerly():
            known = bool(cond.numpy())
        if known is None:
            return [Assert(cond, [message])]
        cond = known
    if not cond:
        raise ValueError(message)
    return []


def with_dependencies(deps: list, t: Tensor) -> Tensor:
    if not deps:
        return t
    with control_dependencies(deps):
        return array_core.identity(t)


def check_at_least_3d(image: Tensor) -> list:
    """TF's `_CheckAtLeast3DImage(require_static=False)`: static checks, [] or asserts."""
    shape = image.shape
    if shape.ndims is None or shape.ndims < 3:
        if shape.ndims is not None:
            raise ValueError(f"'image' (shape {shape}) must be at least three-dimensional.")
        return [Assert(comparison.greater_equal(array_core.rank(image), 3),
                       ["'image' must be at least three-dimensional."])]
    inner = shape.as_list()[-3:]
    if any(d == 0 for d in inner):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {shape}")
    return []


def image_dims(image: Tensor, rank: int) -> list:
    """TF's `_ImageDimensions`: static dims as ints, unknown ones as scalar tensors."""
    dims = image.shape.with_rank(rank).as_list() if image.shape.ndims is not None \
        else [None] * rank
    if all(d is not None for d in dims):
        return dims
    dynamic = array_core.shape(image)
    return [d if d is not None else dynamic[i] for i, d in enumerate(dims)]


def as_batch(image: Tensor) -> tuple[Tensor, bool]:
    """A 3-D image as a batch of one (TF's `is_batch` handling)."""
    nd = image.shape.ndims
    if nd == 3 or nd is None:
        return array_core.expand_dims(image, 0), False
    if nd != 4:
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image, True


def set_static_shape(t: Tensor, dims: list) -> Tensor:
    """TF's `set_shape` after a slice/pad whose sizes were stacked into a tensor: the dims
    known as Python ints (graph tensors only; eager ones know their shape)."""
    if hasattr(t, "set_shape") and not context.executing_eagerly():
        t.set_shape([d if isinstance(d, int) and not isinstance(d, bool) else None
                     for d in dims])
    return t


def _unbatch(image: Tensor, is_batch: bool) -> Tensor:
    return image if is_batch else array_core.squeeze(image, axis=[0])


def _flip(image, flip_index: int, scope: str) -> Tensor:
    with name_scope(None, scope):
        image = convert_to_tensor(image, name="image")
        image = with_dependencies(check_at_least_3d(image), image)
        nd = image.shape.ndims
        if nd == 3:
            return array_reorder.reverse(image, [flip_index])
        if nd == 4:
            return array_reorder.reverse(image, [flip_index + 1])
        if nd is None:  # height and width are the 3rd and 2nd axes from the end either way
            return array_reorder.reverse(image, [flip_index - 3])
        raise ValueError(f"'image' (shape {image.shape})must have either 3 or 4 dimensions.")


@tf_export("image.flip_left_right")
def flip_left_right(image) -> Tensor:
    """`tf.image.flip_left_right`: reverses the width axis of a 3-D image or 4-D batch."""
    return _flip(image, 1, "flip_left_right")


@tf_export("image.flip_up_down")
def flip_up_down(image) -> Tensor:
    """`tf.image.flip_up_down`: reverses the height axis of a 3-D image or 4-D batch."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, flip_index: int, uniform, scope: str) -> Tensor:
    """Flips with probability 1/2: one draw for a 3-D image, one per image of a batch."""
    with name_scope(None, scope):
        image = convert_to_tensor(image, name="image")
        image = with_dependencies(check_at_least_3d(image), image)
        nd = image.shape.ndims
        if nd == 3:
            u = uniform([])
            flipped = array_reorder.reverse(image, [flip_index])
            return arithmetic.where(comparison.less(u, 0.5), flipped, image)
        if nd == 4:
            batch = array_core.shape(image)[0]
            u = uniform(array_core.stack([batch]))
            flips = cast.cast(math.round(array_core.reshape(u, [-1, 1, 1, 1])), image.dtype)
            flipped = array_reorder.reverse(image, [flip_index + 1])
            return flips * flipped + (1 - flips) * image
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")


def _stateful(seed):
    return lambda shape: random.random_uniform(shape, 0, 1.0, seed=seed)


def _stateless(seed):
    return lambda shape: stateless_random.stateless_uniform(shape, seed, 0, 1.0)


@tf_export("image.random_flip_left_right")
def random_flip_left_right(image, seed=None) -> Tensor:
    """`tf.image.random_flip_left_right`: each image mirrored horizontally with p = 1/2."""
    return _random_flip(image, 1, _stateful(seed), "random_flip_left_right")


@tf_export("image.random_flip_up_down")
def random_flip_up_down(image, seed=None) -> Tensor:
    """`tf.image.random_flip_up_down`: each image mirrored vertically with p = 1/2."""
    return _random_flip(image, 0, _stateful(seed), "random_flip_up_down")


@tf_export("image.stateless_random_flip_left_right", v1=[])
def stateless_random_flip_left_right(image, seed) -> Tensor:
    """`tf.image.stateless_random_flip_left_right`: the flips determined by `seed`."""
    return _random_flip(image, 1, _stateless(seed), "stateless_random_flip_left_right")


@tf_export("image.stateless_random_flip_up_down", v1=[])
def stateless_random_flip_up_down(image, seed) -> Tensor:
    """`tf.image.stateless_random_flip_up_down`: the flips determined by `seed`."""
    return _random_flip(image, 0, _stateless(seed), "stateless_random_flip_up_down")


@tf_export("image.crop_to_bounding_box")
def crop_to_bounding_box(image, offset_height, offset_width, target_height,
                         target_width) -> Tensor:
    """`tf.image.crop_to_bounding_box`: the window at (offset_height, offset_width)."""
    with name_scope(None, "crop_to_bounding_box"):
        image, is_batch = as_batch(convert_to_tensor(image, name="image"))
        deps = check_at_least_3d(image)
        batch, height, width, depth = image_dims(image, 4)
        deps += assert_true(_cmp(offset_width, 0, ">="), "offset_width must be >= 0.")
        deps += assert_true(_cmp(offset_height, 0, ">="), "offset_height must be >= 0.")
        deps += assert_true(_cmp(target_width, 0, ">"), "target_width must be > 0.")
        deps += assert_true(_cmp(target_height, 0, ">"), "target_height must be > 0.")
        deps += assert_true(_cmp(width, target_width + offset_width, ">="),
                            "width must be >= target + offset.")
        deps += assert_true(_cmp(height, target_height + offset_height, ">="),
                            "height must be >= target + offset.")
        image = with_dependencies(deps, image)
        cropped = array_slicing.slice(
            image, array_core.stack([0, offset_height, offset_width, 0]),
            array_core.stack([-1, target_height, target_width, -1]))
        set_static_shape(cropped, [batch, target_height, target_width, depth])
        return _unbatch(cropped, is_batch)


@tf_export("image.pad_to_bounding_box")
def pad_to_bounding_box(image, offset_height, offset_width, target_height,
                        target_width) -> Tensor:
    """`tf.image.pad_to_bounding_box`: zeros around the image up to the target size."""
    with name_scope(None, "pad_to_bounding_box"):
        image, is_batch = as_batch(convert_to_tensor(image, name="image"))
        batch, height, width, depth = image_dims(image, 4)
        after_w = target_width - offset_width - width
        after_h = target_height - offset_height - height
        deps = check_at_least_3d(image)
        deps += assert_true(_cmp(offset_height, 0, ">="), "offset_height must be >= 0")
        deps += assert_true(_cmp(offset_width, 0, ">="), "offset_width must be >= 0")
        deps += assert_true(_cmp(after_w, 0, ">="), "width must be <= target - offset")
        deps += assert_true(_cmp(after_h, 0, ">="), "height must be <= target - offset")
        image = with_dependencies(deps, image)
        paddings = array_core.reshape(
            array_core.stack([0, 0, offset_height, after_h, offset_width, after_w, 0, 0]),
            [4, 2])
        padded = array_fill.pad(image, paddings)
        set_static_shape(padded, [batch, target_height, target_width, depth])
        return _unbatch(padded, is_batch)


def _cmp(x, y, op: str):
    """x >= y or x > y, as a Python bool when both are known, else a bool tensor."""
    if not is_tensor(x) and not is_tensor(y):
        return x >= y if op == ">=" else x > y
    return comparison.greater_equal(x, y) if op == ">=" else comparison.greater(x, y)


def _max(x, y):
    return arithmetic.maximum(x, y) if is_tensor(x) or is_tensor(y) else max(x, y)


def _min(x, y):
    return arithmetic.minimum(x, y) if is_tensor(x) or is_tensor(y) else min(x, y)


@tf_export("image.resize_with_crop_or_pad",
           v1=["image.resize_with_crop_or_pad", "image.resize_image_with_crop_or_pad"])
def resize_with_crop_or_pad(image, target_height, target_width) -> Tensor:
    """`tf.image.resize_with_crop_or_pad`: center crop and/or zero-pad to the target size."""
    with name_scope(None, "resize_image_with_crop_or_pad"):
        image, is_batch = as_batch(convert_to_tensor(image, name="image"))
        deps = check_at_least_3d(image)
        deps += assert_true(_cmp(target_width, 0, ">"), "target_width must be > 0.")
        deps += assert_true(_cmp(target_height, 0, ">"), "target_height must be > 0.")
        image = with_dependencies(deps, image)
        _, height, width, _ = image_dims(image, 4)
        width_diff, height_diff = target_width - width, target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        return _unbatch(resized, is_batch)


@tf_export("image.central_crop")
def central_crop(image, central_fraction) -> Tensor:
    """`tf.image.central_crop`: keeps the central `central_fraction` of height and width."""
    with name_scope(None, "central_crop"):
        image = convert_to_tensor(image, name="image")
        fraction = static_value(central_fraction)
        if fraction is None:
            raise ValueError("central_fraction must be a Python number or a constant tensor")
        if fraction <= 0.0 or fraction > 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if fraction == 1.0:
            return image
        check_at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. "
                             f"Had rank = {rank}.")
        dims = image_dims(image, rank)
        h, w = dims[rank - 3], dims[rank - 2]
        # float64 arithmetic then truncation, as TF computes the start row/column.
        if is_tensor(h):
            hd = cast.cast(h, dtypes.float64)
            h_start = cast.cast((hd - hd * fraction) / 2, dtypes.int32)
        else:
            h_start = int((float(h) - float(h) * fraction) / 2)
        if is_tensor(w):
            wd = cast.cast(w, dtypes.float64)
            w_start = cast.cast((wd - wd * fraction) / 2, dtypes.int32)
        else:
            w_start = int((float(w) - float(w) * fraction) / 2)
        begin = [h_start, w_start, 0] if rank == 3 else [0, h_start, w_start, 0]
        size = [h - h_start * 2, w - w_start * 2, -1]
        if rank == 4:
            size = [-1, *size]
        out = array_slicing.slice(image, array_core.stack(begin), array_core.stack(size))
        return set_static_shape(out, [*dims[:-3], size[-3], size[-2], dims[-1]])


@tf_export("image.per_image_standardization")
def per_image_standardization(image) -> Tensor:
    """`tf.image.per_image_standardization`: (x - mean) / max(stddev, 1/sqrt(N)) per image,
    as float32."""
    with name_scope(None, "per_image_standardization") as scope:
        image = convert_to_tensor(image, name="image")
        image = with_dependencies(check_at_least_3d(image), image)
        image = cast.cast(image, dtypes.float32)
        num_pixels = reduction.reduce_prod(array_core.shape(image)[-3:])
        mean = reduction.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        min_stddev = math.rsqrt(cast.cast(num_pixels, dtypes.float32))
        adjusted = arithmetic.maximum(stddev, min_stddev)
        return arithmetic.divide(image - mean, adjusted, name=scope)


def _random_crop(value, size, uniform_int, name, default) -> Tensor:
    with name_scope(name, default) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_core.shape(value)
        check = Assert(reduction.reduce_all(comparison.greater_equal(shape, size)),
                       ["Need value.shape >= size, got ", shape, size], summarize=1000)
        if check is not None:  # (eagerly Assert has raised already when it fails)
            shape = with_dependencies([check], shape)
        limit = shape - size + 1
        offset = arithmetic.floormod(uniform_int(array_core.shape(shape)), limit)
        return array_slicing.slice(value, offset, size, name=scope)


@tf_export("image.random_crop", v1=["image.random_crop", "random_crop"])
def random_crop(value, size, seed=None, name=None) -> Tensor:
    """`tf.image.random_crop`: a window of shape `size` at a uniformly random offset."""
    return _random_crop(value, size, lambda s: random.random_uniform(
        s, dtype=dtypes.int32, maxval=dtypes.int32.max, seed=seed), name, "random_crop")


@tf_export("image.stateless_random_crop", v1=[])
def stateless_random_crop(value, size, seed, name=None) -> Tensor:
    """`tf.image.stateless_random_crop`: the offset determined by `seed`."""
    return _random_crop(value, size, lambda s: stateless_random.stateless_uniform(
        s, seed, maxval=dtypes.int32.max, dtype=dtypes.int32), name, "random_crop")


attach(globals(), image_ops_docs.DOCS)
