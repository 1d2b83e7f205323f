"""Non-max suppression (TF's NonMaxSuppressionV3/V4/V5, NonMaxSuppressionWithOverlaps and
CombinedNonMaxSuppression): greedy selection of boxes in descending score order, dropping
those that overlap a selected one too much (or, with V5's soft_nms_sigma > 0, lowering their
scores by a Gaussian of the overlap). `tf.image.non_max_suppression` and its relatives."""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops import array_core, array_fill, array_slicing
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _check_rank(shape: TensorShape, rank: int) -> None:
    if shape.rank is not None and shape.rank != rank and not context.executing_eagerly():
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.rank}")


def _nms_shape(first: str, scalars: int, outputs: str):
    """The shape function: `first` ("boxes" [n, 4] or "overlaps" [n, n]), scores [n], then
    `scalars` scalar inputs; outputs "i" (indices of unknown length, or max_output_size
    long when padded), "v" (valid_outputs, a scalar) or "s" (scores, as the indices)."""
    def infer(ctx):
        _check_rank(ctx.shapes[0], 2)
        _check_rank(ctx.shapes[1], 1)
        for s in ctx.shapes[2:2 + scalars]:
            _check_rank(s, 0)
        first_shape, scores = ctx.shapes[0], ctx.shapes[1]
        if not context.executing_eagerly() and first_shape.rank == 2:
            last = first_shape.dims[1]
            want = 4 if first == "boxes" else first_shape.dims[0]
            if last is not None and want is not None and last != want:
                raise ValueError(f"Dimension must be {want} but is {last}")
            n, m = first_shape.dims[0], scores.dims[0] if scores.rank == 1 else None
            if n is not None and m is not None and n != m:
                raise ValueError(f"Dimensions must be equal, but are {n} and {m}")
        length = None
        if ctx.attrs.get("pad_to_max_output_size"):
            size = ctx.value(2)
            length = int(size) if size is not None else None
        vector = TensorShape([length])
        return [vector if o in "is" else TensorShape([]) for o in outputs]
    return infer


NonMaxSuppressionV3 = op_def(
    "NonMaxSuppressionV3",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold",
            "score_threshold: T_threshold"],
    outputs=["selected_indices: int32"],
    attrs=["T: {half, float} = DT_FLOAT", "T_threshold: {half, float} = DT_FLOAT"],
    shape=_nms_shape("boxes", 3, "i"), gradient_undefined=True)

NonMaxSuppressionV4 = op_def(
    "NonMaxSuppressionV4",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold",
            "score_threshold: T_threshold"],
    outputs=["selected_indices: int32", "valid_outputs: int32"],
    attrs=["T: {half, float} = DT_FLOAT", "T_threshold: {half, float} = DT_FLOAT",
           "pad_to_max_output_size: bool = false"],
    shape=_nms_shape("boxes", 3, "iv"), gradient_undefined=True)

NonMaxSuppressionV5 = op_def(
    "NonMaxSuppressionV5",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T",
            "score_threshold: T", "soft_nms_sigma: T"],
    outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
    attrs=["T: {half, float} = DT_FLOAT", "pad_to_max_output_size: bool = false"],
    shape=_nms_shape("boxes", 4, "isv"), gradient_undefined=True)

NonMaxSuppressionWithOverlaps = op_def(
    "NonMaxSuppressionWithOverlaps",
    inputs=["overlaps: float", "scores: float", "max_output_size: int32",
            "overlap_threshold: float", "score_threshold: float"],
    outputs=["selected_indices: int32"],
    shape=_nms_shape("overlaps", 3, "i"), not_differentiable=True)  # TF: NotDifferentiable


def _combined_shape(ctx):
    boxes, scores = ctx.shapes[0], ctx.shapes[1]
    if not context.executing_eagerly():
        _check_rank(boxes, 4)
        _check_rank(scores, 3)
    batch = boxes.dims[0] if boxes.rank == 4 else (scores.dims[0] if scores.rank == 3
                                                   else None)
    size = None
    total, per_class = ctx.value(3), ctx.value(2)
    if total is not None:
        size = int(total)
        if ctx.attrs["pad_per_class"]:
            classes = scores.dims[2] if scores.rank == 3 else None
            size = (min(size, int(per_class) * classes)
                    if per_class is not None and classes is not None else None)
    return [TensorShape([batch, size, 4]), TensorShape([batch, size]),
            TensorShape([batch, size]), TensorShape([batch])]


CombinedNonMaxSuppression = op_def(
    "CombinedNonMaxSuppression",
    inputs=["boxes: float", "scores: float", "max_output_size_per_class: int32",
            "max_total_size: int32", "iou_threshold: float", "score_threshold: float"],
    outputs=["nmsed_boxes: float", "nmsed_scores: float", "nmsed_classes: float",
             "valid_detections: int32"],
    attrs=["pad_per_class: bool = false", "clip_boxes: bool = true"],
    shape=_combined_shape, gradient_undefined=True)


# TF's result type: a namedtuple named after the op.
CombinedNMSResult = collections.namedtuple(
    "CombinedNonMaxSuppression",
    ["nmsed_boxes", "nmsed_scores", "nmsed_classes", "valid_detections"])


def _boxes_scores(boxes, scores):
    boxes = convert_to_tensor(boxes, name="boxes")
    if boxes.dtype not in (dtypes.float16, dtypes.float32):
        boxes = convert_to_tensor(boxes, dtypes.float32)
    return boxes, convert_to_tensor(scores, boxes.dtype, name="scores")


def _threshold(value, name, dtype=None):
    t = convert_to_tensor(value, dtype, name=name) if dtype is not None else \
        convert_to_tensor(value, name=name)
    if t.dtype not in (dtypes.float16, dtypes.float32):
        t = convert_to_tensor(value, dtypes.float32, name=name)
    return t


def _size(max_output_size):
    return convert_to_tensor(max_output_size, dtypes.int32, name="max_output_size")


@tf_export("image.non_max_suppression")
def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """`tf.image.non_max_suppression`: the indices (int32) of the boxes kept by greedy
    non-max suppression, highest score first (ties: lower index first); a box is dropped
    when its IoU with a kept box is above `iou_threshold`, or its score not above
    `score_threshold`. Boxes are [y1, x1, y2, x2] with the corners in any order."""
    with name_scope(name, "non_max_suppression"):
        iou = _threshold(iou_threshold, "iou_threshold")
        score = _threshold(score_threshold, "score_threshold", iou.dtype)
        boxes, scores = _boxes_scores(boxes, scores)
        return apply_op(NonMaxSuppressionV3, [boxes, scores, _size(max_output_size), iou,
                                              score], {}).outputs[0]


@tf_export("image.non_max_suppression_with_scores")
def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """`tf.image.non_max_suppression_with_scores`: (selected indices, their scores). With
    `soft_nms_sigma` > 0 this is Soft-NMS: an overlapping box's score is multiplied by
    exp(-iou**2 / (2 sigma)) instead of the box being dropped (iou_threshold is unused);
    boxes whose scores fall to `score_threshold` or below are dropped."""
    with name_scope(name, "non_max_suppression_with_scores"):
        # as TF: the thresholds (float32 from Python floats) must be of the boxes' type
        iou = convert_to_tensor(iou_threshold, name="iou_threshold")
        score = convert_to_tensor(score_threshold, name="score_threshold")
        sigma = convert_to_tensor(soft_nms_sigma, name="soft_nms_sigma")
        boxes, scores = _boxes_scores(boxes, scores)
        out = apply_op(NonMaxSuppressionV5, [
            boxes, scores, _size(max_output_size), iou, score, sigma],
            {"pad_to_max_output_size": False}).outputs
        return out[0], out[1]


@tf_export("image.non_max_suppression_overlaps")
def non_max_suppression_with_overlaps(overlaps, scores, max_output_size,
                                      overlap_threshold=0.5, score_threshold=float("-inf"),
                                      name=None):
    """`tf.image.non_max_suppression_overlaps`: greedy NMS over a given [n, n] matrix of
    overlaps instead of the boxes' IoU."""
    with name_scope(name, "non_max_suppression_overlaps"):
        return apply_op(NonMaxSuppressionWithOverlaps, [
            convert_to_tensor(overlaps, dtypes.float32, name="overlaps"),
            convert_to_tensor(scores, dtypes.float32, name="scores"), _size(max_output_size),
            convert_to_tensor(overlap_threshold, dtypes.float32, name="overlap_threshold"),
            convert_to_tensor(score_threshold, dtypes.float32, name="score_threshold")],
            {}).outputs[0]


def _padded_one(boxes, scores, max_output_size, iou, score):
    idx, valid = apply_op(NonMaxSuppressionV4, [boxes, scores, max_output_size, iou, score],
                          {"pad_to_max_output_size": True}).outputs
    return idx, valid


@tf_export("image.non_max_suppression_padded")
def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512):
    """`tf.image.non_max_suppression_padded`: (indices, number valid) of greedy NMS, for
    one image ([n, 4] boxes) or a batch ([..., n, 4], then `pad_to_max_output_size` must be
    True). Padded, the indices are `max_output_size` long with zeros after the valid ones;
    else only the valid ones. TF's tiled algorithm selects the same boxes as the greedy one
    for boxes of positive area; ndflow runs NonMaxSuppressionV4 per image, so a batch needs
    static batch dimensions (sorted_input, canonicalized_coordinates and tile_size only tune
    TF's algorithm and are accepted)."""
    del sorted_input, canonicalized_coordinates, tile_size
    with name_scope(name, "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        scores = convert_to_tensor(scores, boxes.dtype, name="scores")
        rank = boxes.shape.rank
        if not pad_to_max_output_size and rank is not None and rank > 2:
            raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) "
                             f"must be True for batched input")
        boxes = convert_to_tensor(boxes, dtypes.float32) if boxes.dtype not in (
            dtypes.float16, dtypes.float32) else boxes
        scores = convert_to_tensor(scores, boxes.dtype)
        size = _size(max_output_size)
        iou = convert_to_tensor(iou_threshold, dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, dtypes.float32, name="score_threshold")
        if rank == 2:
            idx, valid = _padded_one(boxes, scores, size, iou, score)
            if not pad_to_max_output_size:
                idx = array_slicing.slice(idx, [0], array_core.reshape(valid, [1]))
            return idx, valid
        batch = boxes.shape.dims[:-2] if rank is not None else None
        if batch is None or any(d is None for d in batch):
            raise ValueError(f"non_max_suppression_padded: ndflow needs the batch dimensions "
                             f"of boxes known statically, got shape {boxes.shape}")
        count = int(np.prod(batch, dtype=np.int64))
        n = array_core.shape(boxes)[-2:-1]
        flat_boxes = array_core.reshape(boxes, array_slicing.concat([[count], n, [4]], 0))
        flat_scores = array_core.reshape(scores, array_slicing.concat([[count], n], 0))
        pairs = [_padded_one(b, s, size, iou, score) for b, s in zip(
            array_core.unstack(flat_boxes, count), array_core.unstack(flat_scores, count))]
        if pairs:
            idx, valid = (array_core.stack([p[k] for p in pairs]) for k in (0, 1))
        else:   # an empty batch
            idx = array_fill.zeros(array_slicing.concat(
                [[0], array_core.reshape(size, [1])], 0), dtypes.int32)
            valid = array_fill.zeros([0], dtypes.int32)
        idx = array_core.reshape(
            idx, array_slicing.concat([list(batch), array_core.reshape(size, [1])], 0))
        return idx, array_core.reshape(valid, list(batch))


@tf_export("image.combined_non_max_suppression")
def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """`tf.image.combined_non_max_suppression`: NMS per batch element and class, the
    selections of all classes merged by score: (boxes [batch, max_total_size, 4], scores,
    classes (float), valid detections). boxes are [batch, n, q, 4] with q 1 (shared by the
    classes) or the number of classes; scores [batch, n, classes]."""
    with name_scope(name, "combined_non_max_suppression"):
        out = apply_op(CombinedNonMaxSuppression, [
            convert_to_tensor(boxes, dtypes.float32, name="boxes"),
            convert_to_tensor(scores, dtypes.float32, name="scores"),
            convert_to_tensor(max_output_size_per_class, dtypes.int32,
                              name="max_output_size_per_class"),
            convert_to_tensor(max_total_size, dtypes.int32, name="max_total_size"),
            convert_to_tensor(iou_threshold, dtypes.float32, name="iou_threshold"),
            convert_to_tensor(score_threshold, dtypes.float32, name="score_threshold")],
            {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)}).outputs
        return CombinedNMSResult(*out)
