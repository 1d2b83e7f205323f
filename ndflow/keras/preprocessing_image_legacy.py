"""`tf.keras.preprocessing.image.ImageDataGenerator` and its iterators (`Iterator`,
`NumpyArrayIterator`, `DirectoryIterator`), the Keras 1/2 way to feed augmented images to
`fit` that many programs still use: `datagen.flow(x, y)` and
`datagen.flow_from_directory(dir, target_size=..., class_mode=...)` are Keras PyDatasets,
so `model.fit(...)` takes them. Semantics, defaults and errors are Keras 3.15's legacy
module's; the random transforms are preprocessing_image_transforms.py's."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.backend_functions import floatx, image_data_format
from ndflow.keras.preprocessing_image_transforms import (
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
)
from ndflow.keras.utils_image import img_to_array, load_img
from ndflow.keras.utils_py_dataset import PyDataset

_FORMATS = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")


@keras_export("keras.preprocessing.image.Iterator")
class Iterator(PyDataset):
    """The base of the image iterators: batches of `n` samples' indices (shuffled each
    epoch), usable as a `PyDataset` in `fit` and as a never-ending Python iterator
    (`next(datagen.flow(...))`).

    Args:
      n: the number of samples.
      batch_size: the batch size.
      shuffle: whether to shuffle the indices each epoch.
      seed: the shuffling seed.
      **kwargs: PyDataset arguments (workers, use_multiprocessing, max_queue_size).
    """

    white_list_formats = _FORMATS

    def __init__(self, n, batch_size, shuffle, seed, **kwargs):
        super().__init__(**kwargs)
        self.n, self.batch_size, self.seed, self.shuffle = n, batch_size, seed, shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __getitem__(self, idx):
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length "
                             f"{len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        chosen = self.index_array[self.batch_size * idx:self.batch_size * (idx + 1)]
        return self._get_batches_of_transformed_samples(chosen)

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            start = self.batch_index * self.batch_size % self.n if self.n else 0
            self.batch_index = self.batch_index + 1 if self.n > start + self.batch_size else 0
            self.total_batches_seen += 1
            yield self.index_array[start:start + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self):
        with self.lock:
            chosen = next(self.index_generator)
        return self._get_batches_of_transformed_samples(chosen)

    def _get_batches_of_transformed_samples(self, index_array):
        raise NotImplementedError


@keras_export("keras.preprocessing.image.NumpyArrayIterator")
class NumpyArrayIterator(Iterator):
    """The iterator `ImageDataGenerator.flow` returns: augmented batches of in-memory
    images with their labels (and sample weights).

    Args:
      x: a 4-D array of images.
      y: labels, as many as images (or None).
      image_data_generator: the `ImageDataGenerator` whose transformations apply.
      batch_size: the batch size.
      shuffle: whether to shuffle each epoch.
      sample_weight: optional per-image weights.
      seed: the shuffling and augmentation seed.
      data_format: "channels_last" or "channels_first".
      save_to_dir: optional directory to save the augmented images to.
      save_prefix: their file-name prefix.
      save_format: their format ("png", "jpeg").
      subset: "training" or "validation" with the generator's `validation_split`.
      ignore_class_split: whether to skip the check that every class is in both subsets.
      dtype: the batches' dtype.

    Raises:
      ValueError: `x`, `y` or `sample_weight` of different lengths, or bad arguments.
    """

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False,
                 sample_weight=None, seed=None, data_format=None, save_to_dir=None,
                 save_prefix="", save_format="png", subset=None, ignore_class_split=False,
                 dtype=None):
        self.data_format = data_format or image_data_format()
        self.dtype = dtype or floatx()
        if y is not None and len(x) != len(y):
            raise ValueError("`x` (images tensor) and `y` (labels) should have the same length. "
                             f"Found: x.shape = {np.asarray(x).shape}, "
                             f"y.shape = {np.asarray(y).shape}")
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError("`x` (images tensor) and `sample_weight` should have the same "
                             f"length. Found: x.shape = {np.asarray(x).shape}, "
                             f"sample_weight.shape = {np.asarray(sample_weight).shape}")
        if subset is not None:
            if subset not in {"training", "validation"}:
                raise ValueError(f"Invalid subset name: {subset}; expected \"training\" or "
                                 "\"validation\".")
            split = int(len(x) * image_data_generator._validation_split)
            if y is not None and not ignore_class_split and not np.array_equal(
                    np.unique(y[:split]), np.unique(y[split:])):
                raise ValueError("Training and validation subsets have different number of "
                                 "classes after the split. If your numpy arrays are sorted by "
                                 "the label, you might want to shuffle them.")
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x = x[part]
            y = None if y is None else y[part]
            sample_weight = None if sample_weight is None else sample_weight[part]
        self.x = np.asarray(x, dtype=self.dtype)
        if self.x.ndim != 4:
            raise ValueError("Input data in `NumpyArrayIterator` should have rank 4. You passed "
                             f"an array with shape {self.x.shape}")
        axis = 3 if self.data_format == "channels_last" else 1
        if self.x.shape[axis] not in {1, 3, 4}:
            warnings.warn(f'NumpyArrayIterator is set to use the data format convention '
                          f'"{self.data_format}" (channels on axis {axis}), i.e. expected '
                          f"either 1, 3, or 4 channels on axis {axis}. However, it was passed "
                          f"an array with shape {self.x.shape} ({self.x.shape[axis]} channels).",
                          stacklevel=2)
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        batch = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        gen = self.image_data_generator
        for i, j in enumerate(index_array):
            x = self.x[j]
            params = gen.get_random_transform(x.shape)
            batch[i] = gen.standardize(gen.apply_transform(x.astype(self.dtype), params))
        if self.y is None:
            return batch
        out = (batch, self.y[index_array])
        return out if self.sample_weight is None else out + (self.sample_weight[index_array],)


def _list_files(directory: str, follow_links: bool) -> list[str]:
    found = []
    for root, _, files in os.walk(directory, followlinks=follow_links):
        for name in sorted(files):
            if name.lower().endswith(tuple("." + f for f in _FORMATS)):
                found.append(os.path.join(root, name))
    return sorted(found)


@keras_export("keras.preprocessing.image.DirectoryIterator")
class DirectoryIterator(Iterator):
    """The iterator `ImageDataGenerator.flow_from_directory` returns: augmented batches of
    the images in `directory`'s class subdirectories (one subdirectory per class).

    Args:
      directory: the root directory.
      image_data_generator: the `ImageDataGenerator` whose transformations apply.
      target_size: the (height, width) images are resized to.
      color_mode: "rgb", "rgba" or "grayscale".
      classes: optional list of class subdirectory names (default: all, sorted).
      class_mode: "categorical" (one-hot), "binary", "sparse" (ints), "input" (the images
        themselves, for autoencoders) or None (no labels).
      batch_size: the batch size.
      shuffle: whether to shuffle each epoch.
      seed: the shuffling and augmentation seed.
      data_format: "channels_last" or "channels_first".
      save_to_dir: optional directory to save the augmented images to.
      save_prefix: their file-name prefix.
      save_format: their format.
      follow_links: whether to follow symbolic links.
      subset: "training" or "validation" with the generator's `validation_split`.
      interpolation: the resampling method used to resize.
      keep_aspect_ratio: whether to centre-crop to the target's aspect ratio first.
      dtype: the batches' dtype.

    Raises:
      ValueError: an unknown `color_mode`, `class_mode` or `subset`.
    """

    def __init__(self, directory, image_data_generator, target_size=(256, 256),
                 color_mode="rgb", classes=None, class_mode="categorical", batch_size=32,
                 shuffle=True, seed=None, data_format=None, save_to_dir=None, save_prefix="",
                 save_format="png", follow_links=False, subset=None, interpolation="nearest",
                 keep_aspect_ratio=False, dtype=None):
        if color_mode not in {"rgb", "rgba", "grayscale"}:
            raise ValueError(f"Invalid color mode: {color_mode}; expected \"rgb\", \"rgba\", or "
                             "\"grayscale\".")
        if class_mode not in {"categorical", "binary", "sparse", "input", None}:
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of "
                             "\"categorical\", \"binary\", \"sparse\", \"input\" or None.")
        if subset is not None and subset not in {"validation", "training"}:
            raise ValueError(f"Invalid subset name: {subset};expected \"training\" or "
                             "\"validation\"")
        self.directory, self.image_data_generator = directory, image_data_generator
        self.target_size, self.color_mode = tuple(target_size), color_mode
        self.data_format = data_format or image_data_format()
        self.dtype = dtype or floatx()
        self.class_mode, self.interpolation = class_mode, interpolation
        self.keep_aspect_ratio = keep_aspect_ratio
        depth = {"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode]
        self.image_shape = self.target_size + (depth,) if self.data_format == "channels_last" \
            else (depth,) + self.target_size
        if not classes:
            classes = sorted(d for d in os.listdir(directory)
                             if os.path.isdir(os.path.join(directory, d)))
        self.class_indices = dict(zip(classes, range(len(classes))))
        split = image_data_generator._validation_split if subset else 0.0
        filenames, labels = [], []
        for name in classes:
            files = _list_files(os.path.join(directory, name), follow_links)
            cut = int(len(files) * split)
            files = files[:cut] if subset == "validation" else files[cut:]
            filenames += [os.path.relpath(f, directory) for f in files]
            labels += [self.class_indices[name]] * len(files)
        self.filenames, self.classes = filenames, np.array(labels, dtype="int32")
        self.num_classes, self.samples = len(classes), len(filenames)
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        return [os.path.join(self.directory, f) for f in self.filenames]

    @property
    def labels(self):
        return self.classes

    def _get_batches_of_transformed_samples(self, index_array):
        batch = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        gen = self.image_data_generator
        paths = self.filepaths
        for i, j in enumerate(index_array):
            img = load_img(paths[j], color_mode=self.color_mode, target_size=self.target_size,
                           interpolation=self.interpolation,
                           keep_aspect_ratio=self.keep_aspect_ratio)
            x = img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            params = gen.get_random_transform(x.shape)
            batch[i] = gen.standardize(gen.apply_transform(x, params))
        if self.class_mode == "input":
            return batch, batch.copy()
        if self.class_mode is None:
            return batch
        y = self.classes[index_array]
        if self.class_mode == "sparse":
            return batch, y.astype(self.dtype)
        if self.class_mode == "binary":
            return batch, y.astype(self.dtype)
        return batch, np.eye(self.num_classes, dtype=self.dtype)[y]


@keras_export("keras.preprocessing.image.ImageDataGenerator")
class ImageDataGenerator:
    """Keras 1/2's real-time image augmentation and normalization: `flow(x, y)` and
    `flow_from_directory(path)` give iterators of augmented batches for `fit`.

    New code should prefer the preprocessing layers (`RandomFlip`, `RandomRotation`, ...)
    or `tf.data`; this class keeps older programs working.

    Args:
      featurewise_center: whether to subtract the dataset mean (from `fit(x)`).
      samplewise_center: whether to subtract each sample's mean.
      featurewise_std_normalization: whether to divide by the dataset std (from `fit`).
      samplewise_std_normalization: whether to divide each sample by its std.
      zca_whitening: whether to apply ZCA whitening (from `fit`).
      zca_epsilon: the epsilon of the ZCA whitening.
      rotation_range: the largest random rotation, in degrees.
      width_shift_range: the horizontal shift: a fraction of the width (float < 1), a
        number of pixels (int >= 1) or a list of allowed values.
      height_shift_range: likewise, vertically.
      brightness_range: optional (low, high) range of brightness factors.
      shear_range: the largest shear angle, in degrees.
      zoom_range: a float z (the range [1 - z, 1 + z]) or a (low, high) pair.
      channel_shift_range: the largest random shift added to every channel.
      fill_mode: how points outside the image are filled: "nearest" (the default),
        "constant" (`cval`), "reflect" or "wrap".
      cval: the value for "constant".
      horizontal_flip: whether to flip half of the images horizontally.
      vertical_flip: whether to flip half of the images vertically.
      rescale: optional factor multiplied in before any other transformation.
      preprocessing_function: optional function applied to each image after the
        augmentation.
      data_format: "channels_last" or "channels_first" (default
        `keras.config.image_data_format()`).
      validation_split: the fraction of images reserved for `subset="validation"`.
      interpolation_order: the spline order of the geometric transforms.
      dtype: the dtype of the generated arrays (default floatx).

    Example:

    >>> gen = tf.keras.preprocessing.image.ImageDataGenerator(horizontal_flip=True)
    >>> x_batch, y_batch = next(gen.flow(np.zeros((4, 8, 8, 3)), np.arange(4), batch_size=2))
    >>> x_batch.shape
    (2, 8, 8, 3)
    """

    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-06, rotation_range=0, width_shift_range=0.0,
                 height_shift_range=0.0, brightness_range=None, shear_range=0.0, zoom_range=0.0,
                 channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None,
                 data_format=None, validation_split=0.0, interpolation_order=1, dtype=None):
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening, self.zca_epsilon = zca_whitening, zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.shear_range, self.channel_shift_range = shear_range, channel_shift_range
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale, self.preprocessing_function = rescale, preprocessing_function
        self.dtype = dtype or floatx()
        self.interpolation_order = interpolation_order
        data_format = data_format or image_data_format()
        if data_format not in {"channels_last", "channels_first"}:
            raise ValueError('`data_format` should be `"channels_last"` (channel after row and '
                             'column) or `"channels_first"` (channel before row and column). '
                             f"Received: {data_format}")
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = \
            (1, 2, 3) if data_format == "channels_first" else (3, 1, 2)
        if validation_split and not 0 < validation_split < 1:
            raise ValueError("`validation_split` must be strictly between 0 and 1. Received: "
                             f"{validation_split}")
        self._validation_split = validation_split
        self.mean = self.std = self.zca_whitening_matrix = None
        if isinstance(zoom_range, (float, int)):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2 and all(isinstance(v, (float, int)) for v in zoom_range):
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError("`zoom_range` should be a float or a tuple or list of two floats. "
                             f"Received: {zoom_range}")
        if brightness_range is not None and (not isinstance(brightness_range, (tuple, list))
                                             or len(brightness_range) != 2):
            raise ValueError("`brightness_range should be tuple or list of two floats. "
                             f"Received: {brightness_range}")
        self.brightness_range = brightness_range
        if zca_whitening:
            raise NotImplementedError("ImageDataGenerator(zca_whitening=True) is not "
                                      "supported by ndflow")

    # -- iterators ---------------------------------------------------------------------------
    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             save_to_dir=None, save_prefix="", save_format="png", ignore_class_split=False,
             subset=None):
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle,
                                  sample_weight=sample_weight, seed=seed,
                                  data_format=self.data_format, subset=subset,
                                  ignore_class_split=ignore_class_split, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb",
                            classes=None, class_mode="categorical", batch_size=32, shuffle=True,
                            seed=None, save_to_dir=None, save_prefix="", save_format="png",
                            follow_links=False, subset=None, interpolation="nearest",
                            keep_aspect_ratio=False):
        return DirectoryIterator(directory, self, target_size=target_size,
                                 color_mode=color_mode, classes=classes, class_mode=class_mode,
                                 batch_size=batch_size, shuffle=shuffle, seed=seed,
                                 data_format=self.data_format, follow_links=follow_links,
                                 subset=subset, interpolation=interpolation,
                                 keep_aspect_ratio=keep_aspect_ratio, dtype=self.dtype)

    # -- per-image work ----------------------------------------------------------------------
    def standardize(self, x):
        """The generator's normalization of one image (in place where it can be)."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        if self.featurewise_center:
            if self.mean is None:
                warnings.warn("This ImageDataGenerator specifies `featurewise_center`, but it "
                              "hasn't been fit on any training data. Fit it first by calling "
                              "`.fit(numpy_data)`.", stacklevel=2)
            else:
                x -= self.mean
        if self.featurewise_std_normalization:
            if self.std is None:
                warnings.warn("This ImageDataGenerator specifies "
                              "`featurewise_std_normalization`, but it hasn't been fit on any "
                              "training data. Fit it first by calling `.fit(numpy_data)`.",
                              stacklevel=2)
            else:
                x /= self.std + 1e-6
        return x

    def get_random_transform(self, img_shape, seed=None):
        """A dict of this image's random transform parameters."""
        row, col = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) \
            if self.rotation_range else 0
        tx = self._shift(self.height_shift_range, img_shape[row])
        ty = self._shift(self.width_shift_range, img_shape[col])
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range \
            else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift = np.random.uniform(-self.channel_shift_range, self.channel_shift_range) \
            if self.channel_shift_range != 0 else None
        brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1]) \
            if self.brightness_range is not None else None
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
                "channel_shift_intensity": channel_shift, "brightness": brightness}

    @staticmethod
    def _shift(shift_range, size):
        """Keras' draw: a float range is uniform in [-r, r]; an int (pixels) or a list is a
        choice from it with a random sign; below 1 the value is a fraction of `size`."""
        if not shift_range:
            return 0
        if isinstance(shift_range, (float, np.floating)):
            value = np.random.uniform(-shift_range, shift_range)
        else:
            value = np.random.choice(shift_range)
            value *= np.random.choice([-1, 1])
        return value * size if np.max(shift_range) < 1 else value

    def apply_transform(self, x, transform_parameters):
        """One image transformed by the given parameters."""
        p = transform_parameters
        row, col, channel = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0),
                                   p.get("shear", 0), p.get("zx", 1), p.get("zy", 1),
                                   row_axis=row, col_axis=col, channel_axis=channel,
                                   fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], channel)
        if p.get("flip_horizontal", False):
            x = np.flip(x, col)
        if p.get("flip_vertical", False):
            x = np.flip(x, row)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x, seed=None):
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None):
        """Per-channel mean and std of `x` (rank 4) for featurewise normalization."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to `.fit()` should have rank 4. Got array with shape: "
                             f"{x.shape}")
        if seed is not None:
            np.random.seed(seed)
        if augment:
            x = np.concatenate([np.stack([self.random_transform(img) for img in x])
                                for _ in range(rounds)])
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        axes = (0, self.row_axis, self.col_axis)
        if self.featurewise_center:
            self.mean = np.mean(x, axis=axes).reshape(shape)
            x = x - self.mean
        if self.featurewise_std_normalization:
            self.std = np.std(x, axis=axes).reshape(shape)
