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


# ---------------------------------------------------------------- inference.py

PRECISIONS = ("FP32", "FP16", "INT8")
# What inference.py writes into --output_saved_model_dir: a converted SavedModel per
# precision and the ONNX model; a directory holding only these is a previous run's output.
INFERENCE_OUTPUTS = (*PRECISIONS, "model.onnx")


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _precision(text: str) -> str:
    if text.upper() not in PRECISIONS:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(PRECISIONS)})")
    return text.upper()


def build_inference_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Inference at images per second with a SavedModel exported by resnet.py "
                    "--export_dir: the model as it is, converted by TF-TRT's converter "
                    "(tf.experimental.tensorrt.Converter) at each --precision, and exported "
                    "to ONNX and run by ONNX Runtime; top-1 accuracy against the model as it "
                    "is (the TensorFlow container's TF-TRT image classification example, "
                    "on ndflow).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--input_saved_model_dir", required=True,
                   help="the SavedModel to run and convert (resnet.py --export_dir)")
    p.add_argument("--output_saved_model_dir", default=None,
                   help="where to write the converted SavedModels (FP32/, FP16/, INT8/) and "
                        "model.onnx; a new or empty directory, or one this script wrote "
                        "before (replaced). Without it nothing is written")
    p.add_argument("--input_signature_key", default="serving_default",
                   help="the SavedModel signature to run")
    p.add_argument("--data_dir", default=None,
                   help="directory of ImageNet TFRecord files: validation-* give the accuracy "
                        "and the timed images; without it, synthetic images and no accuracy")
    p.add_argument("--calib_data_dir", default=None,
                   help="directory whose train-* TFRecords calibrate INT8; without it "
                        "--data_dir's, and synthetic images without either")
    p.add_argument("--precision", type=_precision, nargs="+", default=list(PRECISIONS),
                   metavar="{FP32,FP16,INT8}", help="TF-TRT precision modes to convert to")
    p.add_argument("-b", "--batch_size", type=_positive_int, nargs="+", default=[1, 8, 32],
                   help="batch sizes to time each engine at")
    p.add_argument("--num_iterations", type=_positive_int, default=20,
                   help="timed iterations per engine and batch size")
    p.add_argument("--num_warmup_iterations", type=_non_negative_int, default=5,
                   help="iterations run before the timed ones and left out of the mean")
    p.add_argument("--num_calib_inputs", type=_positive_int, default=64,
                   help="images INT8 calibration runs through the model")
    p.add_argument("--num_eval_images", type=_positive_int, default=None,
                   help="validation images to measure top-1 accuracy on (default: all)")
    return p


def _check_inference(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    src = args.input_saved_model_dir
    if not os.path.isdir(src):
        p.error(f"argument --input_saved_model_dir: no such directory: {src!r}")
    if not os.path.isfile(os.path.join(src, "saved_model.pb")):
        p.error(f"argument --input_saved_model_dir: {src!r} holds no SavedModel "
                f"(saved_model.pb); export one with resnet.py --export_dir")
    out = args.output_saved_model_dir
    if out is not None:
        if os.path.exists(out) and not os.path.isdir(out):
            p.error(f"argument --output_saved_model_dir: {out!r} exists and is not a "
                    f"directory")
        if os.path.isdir(out):
            if os.path.samefile(out, src):
                p.error("argument --output_saved_model_dir: it is --input_saved_model_dir")
            if set(os.listdir(out)) - set(INFERENCE_OUTPUTS):
                p.error(f"argument --output_saved_model_dir: {out!r} holds files this script "
                        f"did not write; name a new or empty directory")
    for flag, split in (("data_dir", "validation"), ("calib_data_dir", "train")):
        path = getattr(args, flag)
        if path is None:
            continue
        if not os.path.isdir(path):
            p.error(f"argument --{flag}: no such directory: {path!r}")
        if flag == "calib_data_dir" and "INT8" not in args.precision:
            continue
        if not train_files(path, split):
            p.error(f"argument --{flag}: {path!r} holds no TFRecord files named {split}-* "
                    f"(ImageNet's {split}-00000-of-{1024 if split == 'train' else 128:05d}, "
                    f"...)")
    if (args.calib_data_dir is None and args.data_dir is not None and "INT8" in args.precision
            and not train_files(args.data_dir, "train")):
        p.error(f"argument --data_dir: {args.data_dir!r} holds no TFRecord files named "
                f"train-* to calibrate INT8 with; name them with --calib_data_dir")
    args.precision = list(dict.fromkeys(args.precision))        # in order, once each
    args.batch_size = sorted(set(args.batch_size))


def parse_inference_cmdline(argv: list[str] | None = None) -> argparse.Namespace:
    """inference.py's flags, checked: one argparse error and exit status 2 on bad input."""
    p = build_inference_parser()
    args = p.parse_args(argv)
    _check_inference(p, args)
    return args
