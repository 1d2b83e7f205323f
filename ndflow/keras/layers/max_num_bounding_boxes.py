"""Keras 3's MaxNumBoundingBoxes: a fixed number of boxes per image in a detection batch
(`{"images", "bounding_boxes": {"boxes", "labels"}, ...}`): boxes beyond `max_number` are cut,
missing ones padded with `fill_value` (boxes as float32, labels in their own dtype); images,
labels and masks pass through."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.image_preprocessing import ImagePreprocessingLayer
from ndflow.ops import array_core, array_fill, math
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


def validate_bounding_boxes(bounding_boxes):
    if not isinstance(bounding_boxes, dict) or "labels" not in bounding_boxes \
            or "boxes" not in bounding_boxes:
        raise ValueError("Expected `bounding_boxes` agurment to be a dict with keys 'boxes' "
                         f"and 'labels'. Received: bounding_boxes={bounding_boxes}")
    boxes = cast(convert_to_tensor(bounding_boxes["boxes"]), dtypes.float32)
    labels = convert_to_tensor(bounding_boxes["labels"])
    if boxes.shape.rank not in (2, 3) or labels.shape.rank not in (1, 2) or \
            boxes.shape.rank - labels.shape.rank != 1:
        raise ValueError(f"Found bounding_boxes['boxes'].shape={boxes.shape.as_list()} and "
                         f"bounding_boxes['labels'].shape={labels.shape.as_list()}: expected "
                         "boxes of shape (batch, num_boxes, 4) with labels of shape (batch, "
                         "num_boxes), or (num_boxes, 4) with (num_boxes,)")
    return {**bounding_boxes, "boxes": boxes, "labels": labels}


@keras_export("keras.layers.MaxNumBoundingBoxes")
class MaxNumBoundingBoxes(ImagePreprocessingLayer):
    """Makes every image's bounding boxes exactly `max_number`: extra boxes are cut, missing
    ones padded with `fill_value` (boxes and labels), so batches have a static shape.
    Images pass through.

    Args:
      max_number: the number of boxes per image.
      fill_value: the value of padded boxes and labels (default -1).
      **kwargs: Layer arguments (name, dtype, ...).
    """

    _USE_BASE_FACTOR = False

    def __init__(self, max_number, fill_value=-1, **kwargs):
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        self.fill_value = int(fill_value)

    def transform_images(self, images, transformation=None, training=True):
        return images

    def transform_labels(self, labels, transformation=None, training=True):
        return labels

    def transform_segmentation_masks(self, masks, transformation=None, training=True):
        return masks

    def transform_bounding_boxes(self, bounding_boxes, transformation=None, training=True):
        boxes, labels = bounding_boxes["boxes"], bounding_boxes["labels"]
        num_boxes = boxes.shape[1] if boxes.shape[1] is not None else \
            array_core.shape(boxes)[1]
        pad = math.maximum(self.max_number - num_boxes, 0) if not isinstance(num_boxes, int) \
            else max(self.max_number - num_boxes, 0)
        boxes = array_fill.pad(boxes[:, :self.max_number], [[0, 0], [0, pad], [0, 0]],
                               constant_values=cast(self.fill_value, boxes.dtype))
        labels = array_fill.pad(labels[:, :self.max_number], [[0, 0], [0, pad]],
                                constant_values=cast(self.fill_value, labels.dtype))
        batch = boxes.shape[0] if boxes.shape[0] is not None else array_core.shape(boxes)[0]
        return {**bounding_boxes,
                "boxes": array_core.reshape(boxes, [batch, self.max_number, 4]),
                "labels": array_core.reshape(labels, [batch, self.max_number])}

    def call(self, inputs, training=True):
        if not isinstance(inputs, dict) or "bounding_boxes" not in inputs:
            return super().call(inputs, training=training)
        data = dict(inputs)
        images = convert_to_tensor(data["images"])
        batched = self.check_rank(images)
        if not self.bounding_box_format:
            raise ValueError("You passed an input with a 'bounding_boxes' key, but you didn't "
                             "specify a bounding box format. Pass a `bounding_box_format` "
                             f"argument to your {type(self).__name__} layer, e.g. "
                             "`bounding_box_format='xyxy'`.")
        boxes = validate_bounding_boxes(data["bounding_boxes"])
        if not batched:
            boxes = {**boxes, "boxes": array_core.expand_dims(boxes["boxes"], 0),
                     "labels": array_core.expand_dims(boxes["labels"], 0)}
        boxes = self.transform_bounding_boxes(boxes, training=training)
        if not batched:
            boxes = {**boxes, "boxes": array_core.squeeze(boxes["boxes"], axis=[0]),
                     "labels": array_core.squeeze(boxes["labels"], axis=[0])}
        data["images"] = images
        data["bounding_boxes"] = boxes
        if "labels" in data:
            data["labels"] = convert_to_tensor(data["labels"])
        if "segmentation_masks" in data:
            data["segmentation_masks"] = convert_to_tensor(data["segmentation_masks"])
        return data

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            extra = set(input_shape["bounding_boxes"]) - {"boxes", "labels"}
            if extra:
                raise KeyError(f"There are unsupported keys in `bounding_boxes`: "
                               f"{list(extra)}. Only `boxes` and `labels` are supported.")
            boxes_shape = list(input_shape["bounding_boxes"]["boxes"])
            labels_shape = list(input_shape["bounding_boxes"]["labels"])
            boxes_shape[1] = labels_shape[1] = self.max_number
            input_shape["bounding_boxes"]["boxes"] = boxes_shape
            input_shape["bounding_boxes"]["labels"] = labels_shape
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "max_number": self.max_number}
