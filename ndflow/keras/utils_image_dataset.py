"""`tf.keras.utils.image_dataset_from_directory`: Keras 3's loader on ndflow's tf.data —
Keras' file order (seeded NumPy shuffle of the file list), labels, `class_names`/`file_paths`
attributes and printed lines; images read with tf.io.read_file, decoded by
tf.image.decode_image and resized by tf.image.resize (crop or pad to the aspect ratio on
request), as Keras' "tf" format does."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.data.dataset import DatasetV2
from ndflow.keras import utils_dataset_docs
from ndflow.keras.backend_functions import image_data_format
from ndflow.keras.utils_directory_index import (
    check_label_args,
    check_validation_split_arg,
    index_directory,
    labels_to_dataset,
    training_or_validation_split,
)
from ndflow.keras.utils_image import smart_resize
from ndflow.ops.array_transpose import transpose
from ndflow.ops.image_codec import decode_image
from ndflow.ops.image_resize import resize, resize_with_pad
from ndflow.ops.string_io_ops import read_file

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                   "gaussian", "mitchellcubic")


@keras_export("keras.utils.image_dataset_from_directory",
              "keras.preprocessing.image_dataset_from_directory")
def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, format="tf",  # noqa: A002
                                 verbose=True):
    check_label_args(labels, label_mode, class_names, "image")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or len(image_size) != 2:
        raise ValueError("Invalid `image_size` value. Expected a tuple of 2 integers. "
                         f"Received: image_size={image_size}")
    interpolation = interpolation.lower()
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"Argument `interpolation` should be one of {_INTERPOLATIONS}. "
                         f"Received: interpolation={interpolation}")
    _check_format(format)
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be "
                         "set to `True`.")
    check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, ALLOWLIST_FORMATS,
                                                 class_names, shuffle, seed, follow_links,
                                                 verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    data_format = data_format or image_data_format()
    load = _image_loader(tuple(image_size), channels, interpolation, data_format,
                         crop_to_aspect_ratio, pad_to_aspect_ratio)
    num_classes = len(class_names) if class_names else 0
    buffer = batch_size * 8 if batch_size is not None else 1024

    def build(subset_paths, subset_labels, shuffled):
        ds = DatasetV2.from_tensor_slices(subset_paths)
        if label_mode:
            ds = DatasetV2.zip((ds, labels_to_dataset(subset_labels, label_mode,
                                                      num_classes)))
        if shuffled:
            ds = ds.shuffle(buffer_size=buffer, seed=seed)
        ds = ds.map((lambda x, y: (load(x), y)) if label_mode else load,
                    num_parallel_calls=-1)  # AUTOTUNE, as Keras
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds = ds.prefetch(-1)
        ds.class_names = class_names
        ds.file_paths = subset_paths
        return ds

    if subset == "both":
        train = training_or_validation_split(paths, labels, validation_split, "training")
        val = training_or_validation_split(paths, labels, validation_split, "validation")
        for part, name in ((train, "training"), (val, "validation")):
            if not part[0]:
                raise ValueError(f"No {name} images found in directory {directory}. "
                                 f"Allowed formats: {ALLOWLIST_FORMATS}")
        return [build(*train, shuffle), build(*val, False)]
    paths, labels = training_or_validation_split(paths, labels, validation_split, subset)
    if not paths:
        raise ValueError(f"No images found in directory {directory}. "
                         f"Allowed formats: {ALLOWLIST_FORMATS}")
    return build(paths, labels, shuffle)


def _image_loader(image_size, channels, interpolation, data_format, crop, pad):
    """path -> float32 image of `image_size` (Keras' _load_image_tf)."""
    def load(path):
        img = decode_image(read_file(path), channels=channels, expand_animations=False)
        if crop:
            if data_format == "channels_first":
                img = transpose(img, (2, 0, 1))
            img = smart_resize(img, image_size, interpolation=interpolation,
                               data_format=data_format)
        elif pad:
            img = resize_with_pad(img, image_size[0], image_size[1], method=interpolation)
        else:
            img = resize(img, image_size, method=interpolation)
        if data_format == "channels_first" and not crop:
            img = transpose(img, (2, 0, 1))
        img.set_shape((*image_size, channels) if data_format == "channels_last"
                      else (channels, *image_size))
        return img
    return load



def _check_format(format) -> None:  # noqa: A002 - Keras' argument name
    if format == "grain":
        raise ValueError('format="grain" needs the grain package, which ndflow does not use; '
                         'use format="tf".')
    if format != "tf":
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')


utils_dataset_docs.attach_loaders(globals(), "image_dataset_from_directory")
