"""Routine for decoding the CIFAR-10 binary file format (the tutorial's cifar10_input.py).

Records are read with `tf.data.FixedLengthRecordDataset` (the replacement of the original's
FixedLengthRecordReader + input queues): 1 label byte, then 3072 bytes of a 32x32 RGB image
stored channel-major. Training images are distorted — random 24x24 crop, random left-right
flip, random brightness and contrast — and standardized per image; evaluation images are
the central 24x24 crop, standardized.

`locate_data(data_dir)` finds `<data_dir>/cifar-10-batches-bin`, extracts the tarball if it
is there, and otherwise says so and writes (once) a small generated dataset in the same
format under `<data_dir>/generated-digits-batches-bin` (see generated_data.py).
"""

from __future__ import annotations

import os
import sys
import tarfile

import ndflow as tf
from ndflow.core import errors
from ndflow.models.image.cifar10 import generated_data

# Images are cropped to this size (the original CIFAR images are 32x32). Changing it changes
# the model's architecture (the first fully connected layer's input).
IMAGE_SIZE = 24

NUM_CLASSES = 10
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 50000
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = 10000

HEIGHT, WIDTH, DEPTH = 32, 32, 3
LABEL_BYTES = 1  # 2 for CIFAR-100
IMAGE_BYTES = HEIGHT * WIDTH * DEPTH
RECORD_BYTES = LABEL_BYTES + IMAGE_BYTES

BATCHES_DIR = "cifar-10-batches-bin"
GENERATED_DIR = "generated-digits-batches-bin"
TARBALL = "cifar-10-binary.tar.gz"
DATA_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
TRAIN_FILES = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
EVAL_FILES = ("test_batch.bin",)


def locate_data(data_dir: str, quiet: bool = False) -> str:
    """The directory holding the binary batches: the real CIFAR-10 one when present (or
    extractable from the tarball in `data_dir`), else a generated stand-in."""
    real = os.path.join(data_dir, BATCHES_DIR)
    if os.path.isdir(real):
        return real
    tarball = os.path.join(data_dir, TARBALL)
    if os.path.isfile(tarball):
        try:
            with tarfile.open(tarball, "r:gz") as tar:
                tar.extractall(data_dir, filter="data")
        except (tarfile.TarError, OSError, EOFError) as e:
            raise errors.DataLossError(None, None, f"Cannot extract {tarball}: {e}") from e
        return real
    generated = os.path.join(data_dir, GENERATED_DIR)
    if not quiet:
        print(f"CIFAR-10 is not available: no {real} (expected {', '.join(TRAIN_FILES)} and "
              f"{EVAL_FILES[0]}) and no {tarball}; download {DATA_URL} into {data_dir} to "
              f"train on it.\nUsing a small generated dataset in CIFAR-10's binary format "
              f"instead (the bundled digits in 32x32 colour): {generated}", file=sys.stderr)
    if not all(os.path.isfile(os.path.join(generated, f)) for f in TRAIN_FILES + EVAL_FILES):
        generated_data.write_batches(generated)
    return generated


def check_files(filenames) -> int:
    """Raises NotFoundError for a missing file and DataLossError for a file that is not a
    whole number of records; returns the number of records in all the files."""
    total = 0
    for f in filenames:
        if not tf.io.gfile.exists(f):
            raise errors.NotFoundError(None, None, f"Failed to find file: {f} (CIFAR-10 "
                                                   f"binary batches expected there)")
        size = tf.io.gfile.stat(f).length
        if size == 0 or size % RECORD_BYTES:
            raise errors.DataLossError(None, None, f"{f} is {size} bytes, not a whole number "
                                                   f"of {RECORD_BYTES}-byte CIFAR-10 records "
                                                   f"(truncated or not CIFAR-10 binary)")
        total += size // RECORD_BYTES
    return total


def read_cifar10(record):
    """One record (a string of RECORD_BYTES bytes) -> (uint8 image [32, 32, 3], int32
    label [1])."""
    record_bytes = tf.io.decode_raw(record, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [LABEL_BYTES]), tf.int32)
    depth_major = tf.reshape(
        tf.strided_slice(record_bytes, [LABEL_BYTES], [RECORD_BYTES]), [DEPTH, HEIGHT, WIDTH])
    image = tf.transpose(depth_major, [1, 2, 0])
    label.set_shape([1])
    return image, label


def _distort(record):
    image, label = read_cifar10(record)
    image = tf.cast(image, tf.float32)
    image = tf.image.random_crop(image, [IMAGE_SIZE, IMAGE_SIZE, 3])
    image = tf.image.random_flip_left_right(image)
    # These are not commutative; the original applies them in this order.
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    image = tf.image.per_image_standardization(image)
    image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
    return image, label


def _central(record):
    image, label = read_cifar10(record)
    image = tf.cast(image, tf.float32)
    image = tf.image.resize_with_crop_or_pad(image, IMAGE_SIZE, IMAGE_SIZE)
    image = tf.image.per_image_standardization(image)
    image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
    return image, label


def _batched(ds, batch_size: int):
    return ds.batch(batch_size, drop_remainder=True).map(
        lambda images, labels: (images, tf.reshape(labels, [batch_size]))).prefetch(2)


def distorted_dataset(data_dir: str, batch_size: int, quiet: bool = False):
    """Endless dataset of distorted training batches ([batch, 24, 24, 3] float32, [batch]
    int32) from the five training files in `data_dir` (a `cifar-10-batches-bin`)."""
    filenames = [os.path.join(data_dir, f) for f in TRAIN_FILES]
    num_records = check_files(filenames)
    # The original shuffles through a queue holding 40% of an epoch (less if the files
    # hold fewer records: the generated data).
    min_queue_examples = min(int(NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN * 0.4), num_records)
    if not quiet:
        print(f"Filling queue with {min_queue_examples} CIFAR images before starting to train.")
    ds = tf.data.FixedLengthRecordDataset(filenames, RECORD_BYTES)
    ds = ds.shuffle(min_queue_examples).repeat()
    ds = ds.map(_distort, num_parallel_calls=tf.data.AUTOTUNE)
    return _batched(ds, batch_size)


def eval_dataset(eval_data: bool, data_dir: str, batch_size: int):
    """Endless dataset of central-crop batches of the test files (`eval_data`) or the
    training files, in file order."""
    filenames = [os.path.join(data_dir, f) for f in (EVAL_FILES if eval_data else TRAIN_FILES)]
    check_files(filenames)
    ds = tf.data.FixedLengthRecordDataset(filenames, RECORD_BYTES).repeat()
    return _batched(ds.map(_central, num_parallel_calls=tf.data.AUTOTUNE), batch_size)


def _get_next(ds):
    images, labels = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    tf.compat.v1.summary.image("images", images)
    return images, labels


def distorted_inputs(data_dir: str, batch_size: int):
    """Graph tensors of the next distorted training batch: images [batch, 24, 24, 3] float32,
    labels [batch] int32."""
    return _get_next(distorted_dataset(data_dir, batch_size))


def inputs(eval_data: bool, data_dir: str, batch_size: int):
    """Graph tensors of the next evaluation batch (test data when `eval_data`)."""
    return _get_next(eval_dataset(eval_data, data_dir, batch_size))
