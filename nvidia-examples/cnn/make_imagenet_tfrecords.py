#!/usr/bin/env python
"""Writes a small data set in ImageNet's TFRecord format, for trying the real input path
(`resnet.py --data_dir DIR`) without ImageNet: shards named as TensorFlow's
build_imagenet_data.py names them (train-00000-of-00004, validation-00000-of-00002, ...),
each record a tf.train.Example with ImageNet's features:

    image/encoded        JPEG bytes (RGB, random sizes)
    image/format         b"JPEG"
    image/height, image/width, image/channels
    image/class/label    1-based class (0 is ImageNet's 'background')
    image/class/synset   b"n%08d" (a stand-in synset id)

The images are random noise over a per-class colour, so a network can learn them a little.

    python make_imagenet_tfrecords.py --out_dir /tmp/tiny_imagenet --train 64 --validation 16
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out_dir", required=True, help="directory to write the shards to")
    p.add_argument("--train", type=_positive_int, default=64, help="training images")
    p.add_argument("--validation", type=_positive_int, default=16, help="validation images")
    p.add_argument("--train_shards", type=_positive_int, default=4)
    p.add_argument("--validation_shards", type=_positive_int, default=2)
    p.add_argument("--num_classes", type=_positive_int, default=1000,
                   help="labels are drawn from 1..num_classes")
    p.add_argument("--min_size", type=_positive_int, default=40, help="smallest image side")
    p.add_argument("--max_size", type=_positive_int, default=96, help="largest image side")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.min_size > args.max_size:
        p.error(f"--min_size {args.min_size} is larger than --max_size {args.max_size}")
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        p.error(f"argument --out_dir: {args.out_dir!r} exists and is not a directory")
    return args


def _example(tf, image: np.ndarray, label: int):
    def feature(values, kind):
        if kind == "bytes":
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    encoded = tf.io.encode_jpeg(tf.constant(image), quality=90).numpy()
    height, width, channels = image.shape
    return tf.train.Example(features=tf.train.Features(feature={
        "image/encoded": feature([encoded], "bytes"),
        "image/format": feature([b"JPEG"], "bytes"),
        "image/height": feature([height], "int"),
        "image/width": feature([width], "int"),
        "image/channels": feature([channels], "int"),
        "image/class/label": feature([label], "int"),
        "image/class/synset": feature([b"n%08d" % label], "bytes"),
    }))


def write_split(tf, out_dir: str, split: str, count: int, shards: int, args,
                rng: np.random.Generator) -> list[str]:
    shards = min(shards, count)
    per_shard = -(-count // shards)
    paths, written = [], 0
    for shard in range(shards):
        path = os.path.join(out_dir, f"{split}-{shard:05d}-of-{shards:05d}")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(min(per_shard, count - written)):
                label = int(rng.integers(1, args.num_classes + 1))
                height, width = rng.integers(args.min_size, args.max_size + 1, size=2)
                colour = np.random.default_rng(label).integers(0, 256, 3)
                noise = rng.normal(0, 40, (height, width, 3))
                image = np.clip(colour + noise, 0, 255).astype(np.uint8)
                writer.write(_example(tf, image, label).SerializeToString())
                written += 1
        paths.append(path)
    return paths


def main(argv=None) -> int:
    args = parse_args(argv)
    import ndflow as tf

    os.makedirs(args.out_dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    for split, count, shards in (("train", args.train, args.train_shards),
                                 ("validation", args.validation, args.validation_shards)):
        paths = write_split(tf, args.out_dir, split, count, shards, args, rng)
        print(f"{split}: {count} images in {len(paths)} shards ({os.path.basename(paths[0])}, "
              f"...)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
