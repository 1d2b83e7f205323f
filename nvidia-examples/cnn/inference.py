#!/usr/bin/env python
"""Inference at images per second with a SavedModel exported by resnet.py: the model as it
is, converted by TF-TRT's converter (TrtGraphConverterV2, `tf.experimental.tensorrt.Converter`)
at FP32, FP16 and INT8 (calibrated), and exported to ONNX and run by ONNX Runtime; each timed
at batch 1, 8 and 32, with its top-1 accuracy against the model as it is. The TensorFlow
container's TF-TRT image classification example, written for ndflow (`import ndflow as tf`).

    python resnet.py --layers 50 --data_dir /data/imagenet -i 90 -u epoch --export_dir sm
    python inference.py --input_saved_model_dir sm --data_dir /data/imagenet \\
        --output_saved_model_dir sm_converted --precision FP32 FP16 INT8 --batch_size 1 8 32

Flags: `python inference.py --help` and README.md.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nvutils.cmdline import parse_inference_cmdline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = parse_inference_cmdline(argv)
    from nvutils.engines import run
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
