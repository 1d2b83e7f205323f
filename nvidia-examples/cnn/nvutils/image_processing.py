"""Input pipelines: synthetic images made on the device (one batch, repeated, as the container
makes them), and tf.data over ImageNet TFRecords (tf.train.Example protos with
`image/encoded` JPEG bytes and a 1-based `image/class/label`, as TensorFlow's
build_imagenet_data.py writes them).

Both give float32 NHWC images normalized with ImageNet's channel means and deviations (the
container's DALI normalization), and 0-based int32 labels.
"""

from __future__ import annotations

import ndflow as tf

NUM_CLASSES = 1000
CHANNEL_MEANS = (123.68, 116.78, 103.94)
CHANNEL_STDS = (58.4, 57.12, 57.3)
EVAL_CROP_FRACTION = 0.8       # the container's central crop for validation
SHUFFLE_BUFFER = 10000
NUM_READERS = 10
AUTOTUNE = tf.data.AUTOTUNE


def normalize(images):
    means = tf.constant(CHANNEL_MEANS, tf.float32)
    stds = tf.constant(CHANNEL_STDS, tf.float32)
    return (tf.cast(images, tf.float32) - means) / stds


def fake_image_set(batch_size: int, height: int, width: int, with_label: bool = True,
                   num_classes: int = NUM_CLASSES):
    """One random batch, generated where ops run by default (the GPU when there is one) and
    repeated forever: the pipeline costs nothing, so the step's speed is the model's."""
    images = tf.random.truncated_normal([batch_size, height, width, 3], mean=112.0,
                                        stddev=70.0, dtype=tf.float32, name="fake_images")
    images = normalize(tf.clip_by_value(images, 0.0, 255.0))
    if not with_label:
        return tf.data.Dataset.from_tensors(images).repeat()
    labels = tf.random.uniform([batch_size], minval=0, maxval=num_classes, dtype=tf.int32,
                               name="fake_labels")
    return tf.data.Dataset.from_tensors((images, labels)).repeat()


_FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string, default_value=""),
    "image/class/label": tf.io.FixedLenFeature([1], tf.int64, default_value=[-1]),
}


def parse_record(record):
    """(JPEG bytes, 0-based label): ImageNet's TFRecords keep label 0 for 'background'."""
    obj = tf.io.parse_single_example(record, _FEATURES)
    return obj["image/encoded"], tf.cast(obj["image/class/label"][0], tf.int32) - 1


def preprocess(encoded, height: int, width: int, training: bool):
    """Decode; training: a random crop of 5-100% of the area and aspect ratio 3/4-4/3, and a
    random horizontal flip; validation: the central 80%. Then a bilinear resize to
    height x width and the normalization."""
    image = tf.io.decode_jpeg(encoded, channels=3)
    if training:
        begin, size, _ = tf.image.sample_distorted_bounding_box(
            tf.shape(image), bounding_boxes=tf.zeros([1, 0, 4]), min_object_covered=0.1,
            aspect_ratio_range=[0.75, 1.33], area_range=[0.05, 1.0], max_attempts=100,
            use_image_if_no_bounding_boxes=True)
        image = tf.slice(image, begin, size)
        image = tf.image.random_flip_left_right(image)
    else:
        image = tf.image.central_crop(image, EVAL_CROP_FRACTION)
    image = tf.image.resize(image, [height, width], method="bilinear")
    image.set_shape([height, width, 3])
    return normalize(image)


def image_set(filenames: list[str], batch_size: int, height: int, width: int,
              training: bool = False, with_label: bool = True, drop_remainder: bool = True):
    """Batches from TFRecord shards: files read in parallel and interleaved, shuffled and
    repeated for training, decoded and augmented in parallel, prefetched. Validation keeps
    the records' order; `drop_remainder=False` keeps its last, smaller batch."""
    ds = tf.data.Dataset.from_tensor_slices(filenames)
    if training:
        ds = ds.shuffle(len(filenames))
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=min(NUM_READERS, len(filenames)),
                       num_parallel_calls=AUTOTUNE, deterministic=not training)
    if training:
        ds = ds.shuffle(SHUFFLE_BUFFER).repeat()

    def load(record):
        encoded, label = parse_record(record)
        image = preprocess(encoded, height, width, training)
        return (image, label) if with_label else image

    ds = ds.map(load, num_parallel_calls=AUTOTUNE, deterministic=not training)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    return ds.prefetch(AUTOTUNE)
