"""`tf.image.generate_bounding_box_proposals` (TF's GenerateBoundingBoxProposals): region
proposals from anchor-relative box encodings, as in Faster R-CNN's region proposal network
(kernel: ndflow/kernels/image_proposals.py).

Per image, the anchors' boxes are taken in descending score order (`scores` [N, H, W, A], ties
in (h, w, a) order), the `pre_nms_topn` best decoded ([dy, dx, dh, dw] deltas of
`bbox_deltas` [N, H, W, 4 A] against `anchors` [H, W, 4 A] of [y1, x1, y2, x2] boxes; dh and dw
capped at log(1000 / 16)), clipped to the image (`image_info` [N, 5]: height, width, scale),
boxes with a side under `min_size` * scale dropped, and greedy non-max suppression at
`nms_threshold` keeps at most `post_nms_topn`: rois [N, post_nms_topn, 4] (y1, x1, y2, x2) and
their scores [N, post_nms_topn], zeros after the kept ones. TF has this op on GPUs only; ndflow
runs it on any device, with the GPU kernel's arithmetic.
"""

from __future__ import annotations

import collections

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _rank(shape: TensorShape, rank: int) -> list:
    if shape.ndims is not None and shape.ndims != rank:
        if context.executing_eagerly():
            return [None] * rank        # left to the kernel, as TF's eager ops
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape.as_list() if shape.ndims is not None else [None] * rank


def _proposals_shape(ctx):
    scores = _rank(ctx.shapes[0], 4)
    _rank(ctx.shapes[1], 4)
    info = _rank(ctx.shapes[2], 2)
    if info[1] is not None and info[1] != 5 and not context.executing_eagerly():
        raise ValueError(f"Dimension must be 5 but is {info[1]}")
    _rank(ctx.shapes[3], 3)
    for i in (4, 5, 6):
        _rank(ctx.shapes[i], 0)
    top = int(ctx.attrs.get("post_nms_topn", 300))
    top = top if top >= 0 else None     # TF's MakeShape: -1 is an unknown dimension
    return [TensorShape([scores[0], top, 4]), TensorShape([scores[0], top])]


GenerateBoundingBoxProposals = op_def(
    "GenerateBoundingBoxProposals",
    inputs=["scores: float", "bbox_deltas: float", "image_info: float", "anchors: float",
            "nms_threshold: float", "pre_nms_topn: int32", "min_size: float"],
    outputs=["rois: float", "roi_probabilities: float"],
    attrs=["post_nms_topn: int = 300"], shape=_proposals_shape,
    not_differentiable=True)  # TF: ops.NotDifferentiable("GenerateBoundingBoxProposals")

# TF's result type: a namedtuple named after the op.
GenerateBoundingBoxProposalsResult = collections.namedtuple(
    "GenerateBoundingBoxProposals", ["rois", "roi_probabilities"])


@tf_export("image.generate_bounding_box_proposals")
def generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors,
                                    nms_threshold=0.7, pre_nms_topn=6000, min_size=16,
                                    post_nms_topn=300, name=None):
    """`tf.image.generate_bounding_box_proposals`: (rois [N, post_nms_topn, 4] as y1, x1, y2,
    x2, roi_probabilities [N, post_nms_topn]) decoded from `bbox_deltas` against `anchors`,
    clipped, filtered by `min_size` and non-max suppressed; see the module's doc."""
    f32 = dtypes.float32
    inputs = [convert_to_tensor(scores, f32, name="scores"),
              convert_to_tensor(bbox_deltas, f32, name="bbox_deltas"),
              convert_to_tensor(image_info, f32, name="image_info"),
              convert_to_tensor(anchors, f32, name="anchors"),
              convert_to_tensor(nms_threshold, f32, name="nms_threshold"),
              convert_to_tensor(pre_nms_topn, dtypes.int32, name="pre_nms_topn"),
              convert_to_tensor(min_size, f32, name="min_size")]
    out = apply_op(GenerateBoundingBoxProposals, inputs,
                   {"post_nms_topn": int(post_nms_topn)}, name=name).outputs
    return GenerateBoundingBoxProposalsResult(*out)
