#!/usr/bin/env python
"""ResNet v1.5 training and inference at images per second: the TensorFlow container's
nvidia-examples/cnn/resnet.py, written for ndflow (`import ndflow as tf`).

    python resnet.py --layers 50 -b 64 -i 100                     # synthetic data
    python resnet.py --data_dir /data/imagenet -b 256 -i 90 -u epoch --log_dir ckpt
    python resnet.py --predict --export_dir saved -b 64 -i 20

Flags: `python resnet.py --help` and README.md.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nvutils  # noqa: E402

DEFAULTS = {
    "layers": 50,
    "image_size": 224,
    "image_format": "channels_last",
    "data_dir": None,
    "data_idx_dir": None,
    "batch_size": 256,
    "num_iter": 300,
    "iter_unit": "batch",
    "log_dir": None,
    "export_dir": None,
    "tensorboard_dir": None,
    "display_every": 10,
    "precision": "fp16",
    "dali_mode": None,
    "use_xla": False,
    "predict": False,
}


def main(argv: list[str] | None = None) -> int:
    args = nvutils.parse_cmdline(DEFAULTS, argv)
    return nvutils.predict(args) if args.predict else nvutils.train(args)


if __name__ == "__main__":
    sys.exit(main())
