"""`tf.image.sample_distorted_bounding_box` (SampleDistortedBoundingBoxV2; TF1's
SampleDistortedBoundingBox with `min_object_covered` as an attribute) and
`tf.image.stateless_sample_distorted_bounding_box`: a random crop (begin, size, box)
covering enough of one of the given boxes, Inception's preprocessing. The kernels
(kernels/image_bbox_sampling.py) draw TensorFlow's crops for a seed."""

from __future__ import annotations

from ndflow.core import determinism
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.random_seed import get_seed

_INTS = "T: {uint8, int8, int16, int32, int64}"
_COMMON = ["aspect_ratio_range: list(float) = [0.75, 1.33]",
           "area_range: list(float) = [0.05, 1.0]", "max_attempts: int = 100",
           "use_image_if_no_bounding_boxes: bool = false"]
_OUTPUTS = ["begin: T", "size: T", "bboxes: float"]


def _shape(ctx):
    size, boxes = ctx.shapes[0], ctx.shapes[1]
    if size.rank is not None and size.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {size.rank}")
    if boxes.rank is not None and boxes.rank != 3:
        raise ValueError(f"Shape must be rank 3 but is rank {boxes.rank}")
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


SampleDistortedBoundingBox = op_def(
    "SampleDistortedBoundingBox", inputs=["image_size: T", "bounding_boxes: float"],
    outputs=_OUTPUTS, attrs=[_INTS, "seed: int = 0", "seed2: int = 0",
                             "min_object_covered: float = 0.1"] + _COMMON,
    shape=_shape, stateful=True, not_differentiable=True)
SampleDistortedBoundingBoxV2 = op_def(
    "SampleDistortedBoundingBoxV2",
    inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float"],
    outputs=_OUTPUTS, attrs=[_INTS, "seed: int = 0", "seed2: int = 0"] + _COMMON,
    shape=_shape, stateful=True, not_differentiable=True)
StatelessSampleDistortedBoundingBox = op_def(
    "StatelessSampleDistortedBoundingBox",
    inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float",
            "seed: Tseed"],
    outputs=_OUTPUTS, attrs=[_INTS, "Tseed: {int32, int64}"] + _COMMON,
    shape=_shape, gradient_undefined=True)   # TF registers no gradient (the others: none)


def _options(aspect_ratio_range, area_range, max_attempts, use_image) -> dict:
    """The attrs given (None keeps the op's default)."""
    given = {"aspect_ratio_range": aspect_ratio_range, "area_range": area_range,
             "max_attempts": max_attempts, "use_image_if_no_bounding_boxes": use_image}
    out = {k: v for k, v in given.items() if v is not None}
    for k in ("aspect_ratio_range", "area_range"):
        if k in out:
            out[k] = [float(v) for v in out[k]]
    return out


def _run(op, inputs: list, attrs: dict, name: str) -> tuple:
    return tuple(apply_op(op, inputs, attrs, name=name).outputs)


def _stateful(image_size, bounding_boxes, seeds: tuple, min_object_covered, options: dict,
              name) -> tuple:
    """SampleDistortedBoundingBoxV2 with the op seeds `seeds` (None: 0)."""
    with name_scope(name, "sample_distorted_bounding_box") as scope:
        attrs = dict(seed=seeds[0] or 0, seed2=seeds[1] or 0, **options)
        return _run(SampleDistortedBoundingBoxV2, [
            convert_to_tensor(image_size), convert_to_tensor(bounding_boxes, "float32"),
            convert_to_tensor(min_object_covered, "float32")], attrs, scope)


@tf_export("image.sample_distorted_bounding_box", v1=[])
def sample_distorted_bounding_box_v2(image_size, bounding_boxes, seed=0,
                                     min_object_covered=0.1, aspect_ratio_range=None,
                                     area_range=None, max_attempts=None,
                                     use_image_if_no_bounding_boxes=None, name=None) -> tuple:
    """`tf.image.sample_distorted_bounding_box`: (begin, size, bboxes) of a random crop;
    `seed` 0 draws from a random seed (as TF: the global seed is used only with a seed)."""
    if not seed and determinism.enabled():
        raise ValueError("tf.image.sample_distorted_bounding_box requires a non-zero seed to "
                         f"be passed in when determinism is enabled, but got seed={seed}. "
                         'Please pass in a non-zero seed, e.g. by passing "seed=1".')
    return _stateful(image_size, bounding_boxes, get_seed(seed) if seed else (0, 0),
                     min_object_covered, _options(aspect_ratio_range, area_range,
                                                  max_attempts, use_image_if_no_bounding_boxes),
                     name)


@tf_export(v1=["image.sample_distorted_bounding_box"])
def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None) -> tuple:
    """TF1's `tf.image.sample_distorted_bounding_box`: the op's own `seed`/`seed2`."""
    if not seed and not seed2 and determinism.enabled():
        raise ValueError('tf.compat.v1.image.sample_distorted_bounding_box requires "seed" or '
                         '"seed2" to be non-zero when determinism is enabled. Please pass in '
                         'a non-zero seed, e.g. by passing "seed=1". Got seed='
                         f"{seed} and seed2={seed2}")
    return _stateful(image_size, bounding_boxes, (seed, seed2), min_object_covered,
                     _options(aspect_ratio_range, area_range, max_attempts,
                              use_image_if_no_bounding_boxes), name)


@tf_export("image.stateless_sample_distorted_bounding_box", v1=[])
def stateless_sample_distorted_bounding_box(image_size, bounding_boxes, seed,
                                            min_object_covered=0.1, aspect_ratio_range=None,
                                            area_range=None, max_attempts=None,
                                            use_image_if_no_bounding_boxes=None,
                                            name=None) -> tuple:
    """`tf.image.stateless_sample_distorted_bounding_box`: the same crop for the same
    [2] seed, however often it is called."""
    with name_scope(name, "stateless_sample_distorted_bounding_box") as scope:
        return _run(StatelessSampleDistortedBoundingBox, [
            convert_to_tensor(image_size), convert_to_tensor(bounding_boxes, "float32"),
            convert_to_tensor(min_object_covered, "float32"), convert_to_tensor(seed)],
            _options(aspect_ratio_range, area_range, max_attempts,
                     use_image_if_no_bounding_boxes), scope)
