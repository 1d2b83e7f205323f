"""The container's command line for its CNN scripts, checked before anything is built or
written: a bad value is one argparse error line (exit status 2), and no directory is created.

This module imports neither ndflow nor NumPy, so `--help` and bad input answer at once.
"""

from __future__ import annotations

import argparse
import glob
import os

LAYERS = (18, 34, 50, 101, 152)
MIN_IMAGE_SIZE = 32          # the network downsamples 32 times


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def _image_size(text: str) -> int:
    value = _positive_int(text)
    if value < MIN_IMAGE_SIZE:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_IMAGE_SIZE} (the network "
                                         f"downsamples {MIN_IMAGE_SIZE}x), not {value}")
    return value


def _layers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in LAYERS:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(map(str, LAYERS))})")
    return value


def build_parser(defaults: dict) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="ResNet v1.5 training and inference at images per second (the TensorFlow "
                    "container's nvidia-examples/cnn, on ndflow).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    d = defaults.get
    p.add_argument("--layers", type=_layers, default=d("layers", 50), metavar="{18,34,50,101,152}",
                   help="ResNet depth: 18 and 34 use basic blocks, 50, 101 and 152 bottlenecks")
    p.add_argument("--image_format", choices=["channels_last", "channels_first"],
                   default=d("image_format", "channels_last"),
                   help="the layout the network computes in (the input is NHWC either way)")
    p.add_argument("--image_size", type=_image_size, default=None,
                   help=f"height and width of the network's input images (training: "
                        f"{d('image_size', 224)}; --predict: the model's own)")
    p.add_argument("--data_dir", default=d("data_dir"),
                   help="directory of ImageNet TFRecord files (tf.train.Example protos) named "
                        "train-* and validation-*; without it, synthetic images generated "
                        "on the device (one batch, repeated)")
    p.add_argument("--data_idx_dir", default=d("data_idx_dir"),
                   help="DALI's index files (accepted; DALI is absent: tf.data reads the "
                        "TFRecords)")
    p.add_argument("-b", "--batch_size", type=_positive_int, default=d("batch_size", 256),
                   help="size of each minibatch")
    p.add_argument("-i", "--num_iter", type=_positive_int, default=d("num_iter", 300),
                   help="number of batches or epochs to run")
    p.add_argument("-u", "--iter_unit", choices=["epoch", "batch"],
                   default=d("iter_unit", "batch"),
                   help="whether --num_iter counts batches or epochs")
    p.add_argument("--log_dir", default=d("log_dir"),
                   help="directory for a checkpoint each epoch (model-NN.keras); a run with "
                        "the same --log_dir resumes from the latest")
    p.add_argument("--export_dir", default=d("export_dir"),
                   help="directory to write a SavedModel to at the end of training (read by "
                        "--predict)")
    p.add_argument("--tensorboard_dir", default=d("tensorboard_dir"),
                   help="directory for TensorBoard logs")
    p.add_argument("--display_every", type=_positive_int, default=d("display_every", 10),
                   help="how often (in batches) to print a progress line")
    p.add_argument("--precision", choices=["fp32", "fp16"], default=d("precision", "fp16"),
                   help="fp16: Keras mixed precision (float16 with loss scaling on a GPU, "
                        "bfloat16 on a CPU with bf16 units, else float32)")
    p.add_argument("--dali_mode", choices=["CPU", "GPU"], default=d("dali_mode"), nargs="?",
                   const="GPU", help="accepted; DALI is absent: tf.data reads the TFRecords")
    p.add_argument("--dali_threads", type=_positive_int, default=d("dali_threads", 4),
                   help="accepted with --dali_mode")
    p.add_argument("--use_xla", action="store_true", default=d("use_xla", False),
                   help="compile the training (or inference) step: jit_compile=True")
    p.add_argument("--predict", action="store_true", default=d("predict", False),
                   help="inference at images per second with the model of --export_dir (a "
                        "SavedModel) or else the latest checkpoint of --log_dir")
    return p


def train_files(data_dir: str, split: str) -> list[str]:
    return sorted(glob.glob(os.path.join(data_dir, f"{split}-*")))


def latest_checkpoint(log_dir: str | None) -> tuple[int, str | None]:
    """(epoch, path) of the newest `model-NN.keras` in log_dir, or (0, None)."""
    best = (0, None)
    if log_dir and os.path.isdir(log_dir):
        for name in os.listdir(log_dir):
            stem, ext = os.path.splitext(name)
            if ext == ".keras" and stem.startswith("model-") and stem[6:].isdigit():
                best = max(best, (int(stem[6:]), os.path.join(log_dir, name)),
                           key=lambda t: t[0])
    return best


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Errors argparse cannot see by itself: paths and flag combinations."""
    if args.data_dir is not None:
        if not os.path.isdir(args.data_dir):
            p.error(f"argument --data_dir: no such directory: {args.data_dir!r}")
        if not args.predict and not train_files(args.data_dir, "train"):
            p.error(f"argument --data_dir: {args.data_dir!r} holds no TFRecord files named "
                    f"train-* (ImageNet's train-00000-of-01024, ...)")
    if args.data_idx_dir is not None and not os.path.isdir(args.data_idx_dir):
        p.error(f"argument --data_idx_dir: no such directory: {args.data_idx_dir!r}")
    for flag in ("log_dir", "export_dir", "tensorboard_dir"):
        path = getattr(args, flag)
        if path is not None and os.path.exists(path) and not os.path.isdir(path):
            p.error(f"argument --{flag}: {path!r} exists and is not a directory")
    if (not args.predict and args.export_dir and os.path.isdir(args.export_dir)
            and os.listdir(args.export_dir)
            and not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb"))):
        p.error(f"argument --export_dir: {args.export_dir!r} holds files that are not a "
                f"SavedModel; name a new or empty directory")
    if args.predict:
        if args.export_dir:
            if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")):
                p.error(f"argument --export_dir: {args.export_dir!r} holds no SavedModel "
                        f"(saved_model.pb); train with --export_dir first")
        elif args.log_dir:
            if latest_checkpoint(args.log_dir)[1] is None:
                p.error(f"argument --log_dir: {args.log_dir!r} holds no checkpoint "
                        f"(model-NN.keras); train with --log_dir first")
        else:
            p.error("--predict needs --export_dir (a SavedModel) or --log_dir (checkpoints)")


def parse_cmdline(defaults: dict, argv: list[str] | None = None) -> argparse.Namespace:
    """The parsed and checked flags; exits with status 2 and one error line on bad input."""
    p = build_parser(defaults)
    args = p.parse_args(argv)
    _check(p, args)
    if args.image_size is None and not args.predict:
        args.image_size = defaults.get("image_size", 224)
    return args


def print_args(args: argparse.Namespace) -> None:
    print("Script arguments:")
    for flag, value in vars(args).items():
        print(f"  --{flag}={value}")
