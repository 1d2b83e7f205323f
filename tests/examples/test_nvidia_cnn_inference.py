"""nvidia-examples/cnn/inference.py (issue 56): a SavedModel exported as resnet.py exports it,
run as it is, converted by TF-TRT's converter (FP32, FP16, INT8 calibrated) and run by ONNX
Runtime, each timed at several batch sizes with its top-1 accuracy against the model as it is.

The default pass uses a tiny Keras model (convolution, batch norm, pooling, dense, softmax:
what the converter folds and the exporter converts in ResNet), trained in a second to tell the
generated ImageNet-format set's classes apart (a colour each) so that its predictions are
confident and its accuracy means something, then exported as resnet.py exports; the slow pass
runs the script on ResNet-18 exported by resnet.py.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

ROOT = Path(__file__).resolve().parents[2]
CNN = ROOT / "nvidia-examples" / "cnn"
INFERENCE = CNN / "inference.py"

sys.path.insert(0, str(CNN))
from nvutils import cmdline, image_processing, runner  # noqa: E402


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


inference_script = _load("nvidia_cnn_inference", INFERENCE)
make_imagenet_tfrecords = _load("nvidia_cnn_make_tfrecords_inf", CNN / "make_imagenet_tfrecords.py")

NUM_CLASSES = 10
RATE = re.compile(r"^(native|TF-TRT FP32|TF-TRT FP16|TF-TRT INT8|ONNX Runtime): batch (\d+): "
                  r"([\d.]+) images/s \(mean of (\d+) iterations after (\d+) warm-up; "
                  r"[\d.]+ ms per batch\)$", re.M)
ACCURACY = re.compile(r"^(native|TF-TRT FP32|TF-TRT FP16|TF-TRT INT8|ONNX Runtime): accuracy: "
                      r"(.*)$", re.M)
VERSUS = re.compile(r"^top-1 ([\d.]+)% on (\d+) images, delta ([+-][\d.]+) points; agrees "
                    r"with native on (\d+)/(\d+)$")
NUM_VALID = 16
# INT8's tolerance on the trained model: its top-1 class is the FP32 model's on all images
# but at most one, and its accuracy within one image (6.25 points of 16) of the FP32 model's.
INT8_MAX_DISAGREEMENTS = 1
INT8_MAX_DELTA = 100 / NUM_VALID


def _training_images(count: int, size: int):
    """Images as make_imagenet_tfrecords.py draws them (a colour per class under noise),
    normalized as the input pipeline normalizes, with 0-based labels."""
    rng = np.random.default_rng(0)
    labels = np.arange(count) % NUM_CLASSES
    colours = np.stack([np.random.default_rng(label + 1).integers(0, 256, 3)
                        for label in labels])
    raw = np.clip(colours[:, None, None, :] + rng.normal(0, 40, (count, size, size, 3)), 0, 255)
    means = np.array(image_processing.CHANNEL_MEANS)
    return ((raw - means) / np.array(image_processing.CHANNEL_STDS)).astype(np.float32), labels


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """A tiny image classifier, trained, exported as resnet.py exports (Model.export, NHWC
    float32 images in, probabilities out); its batch norms' statistics are not the identity."""
    keras = tf.keras
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("float32")    # whatever an earlier test left
    try:
        return _train_and_export(keras, tmp_path_factory.mktemp("model") / "saved_model")
    finally:
        keras.mixed_precision.set_global_policy(previous)


def _train_and_export(keras, path):
    keras.utils.set_random_seed(0)
    images = keras.Input((32, 32, 3), name="images")
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", use_bias=False, name="conv1")(images)
    bn = keras.layers.BatchNormalization(epsilon=1e-5, name="bn_conv1")
    x = keras.layers.ReLU()(bn(x))
    x = keras.layers.MaxPooling2D(3, strides=2, padding="same")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(NUM_CLASSES, name="fc")(x)
    model = keras.Model(images, keras.layers.Softmax(name="probs")(x))
    model.compile(keras.optimizers.Adam(0.05), "sparse_categorical_crossentropy")
    model.fit(*_training_images(128, 32), batch_size=32, epochs=30, verbose=0)
    assert np.abs(bn.moving_mean.numpy()).max() > 0.01
    runner._export(model, str(path))
    return path


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data")
    make_imagenet_tfrecords.main(["--out_dir", str(path), "--train", "16", "--validation",
                                  str(NUM_VALID), "--num_classes", str(NUM_CLASSES),
                                  "--min_size", "32",
                                  "--max_size", "48"])
    return path


def run_main(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert inference_script.main(list(argv)) == 0
    return capsys.readouterr().out


def _rates(out: str) -> dict:
    return {(engine, int(batch)): (float(rate), int(n), int(warmup))
            for engine, batch, rate, n, warmup in RATE.findall(out)}


# ---------------------------------------------------------------- end to end


def test_three_engines_at_three_batch_sizes_with_accuracy(saved_model, data_dir, tmp_path,
                                                          capsys):
    out_dir = tmp_path / "converted"
    out = run_main(capsys, "--input_saved_model_dir", str(saved_model), "--data_dir",
                   str(data_dir), "--output_saved_model_dir", str(out_dir), "-b", "32", "1", "8",
                   "--num_iterations", "2", "--num_warmup_iterations", "1",
                   "--num_calib_inputs", "12")
    engines = ["native", "TF-TRT FP32", "TF-TRT FP16", "TF-TRT INT8", "ONNX Runtime"]
    rates = _rates(out)
    assert sorted(rates) == sorted((e, b) for e in engines for b in (1, 8, 32))
    assert all(rate > 0 and (n, warmup) == (2, 1) for rate, n, warmup in rates.values())
    # each engine's lines in order: batch 1, 8, 32, then its accuracy
    assert [(e, int(b)) for e, b, *_ in RATE.findall(out)] == \
        [(e, b) for e in engines for b in (1, 8, 32)]

    accuracy = dict(ACCURACY.findall(out))
    assert list(accuracy) == engines
    native = re.fullmatch(r"top-1 ([\d.]+)% on 16 images \(the reference\)", accuracy["native"])
    assert native and float(native.group(1)) >= 75          # the model has learnt the set
    for engine in ("TF-TRT FP32", "TF-TRT FP16", "ONNX Runtime"):     # FP32 arithmetic
        top1, n, delta, agree, of = VERSUS.fullmatch(accuracy[engine]).groups()
        assert (top1, n, delta, agree, of) == (native.group(1), "16", "+0.00", "16", "16")
    top1, n, delta, agree, of = VERSUS.fullmatch(accuracy["TF-TRT INT8"]).groups()
    assert int(of) - int(agree) <= INT8_MAX_DISAGREEMENTS
    assert abs(float(delta)) <= INT8_MAX_DELTA

    assert "TF-TRT FP32: converted in " in out and "1 engine segment (ONNX Runtime), 0 ops " \
        "left in ndflow" in out
    assert re.search(r"^Notice: TF-TRT FP16: the engines keep FP32 arithmetic", out, re.M)
    assert re.search(rf"^TF-TRT INT8: calibrated on 12 images of {re.escape(str(data_dir))} "
                     r"\(train-\*\); 1 of 1 segments quantized to int8", out, re.M)
    assert re.search(r"^ONNX Runtime: exported to ONNX \(opset 17, \d+ nodes\)", out, re.M)
    assert "Images: 16 validation images of " in out

    summary = out[out.index("Summary: images/s at batch 1, 8, 32; top-1 on 16 validation "
                            "images"):].splitlines()
    assert summary[1].split() == ["engine", "batch", "1", "batch", "8", "batch", "32", "top-1",
                                  "delta", "agree"]
    assert [line.split()[0] for line in summary[2:7]] == \
        ["native", "TF-TRT", "TF-TRT", "TF-TRT", "ONNX"]
    assert summary[3].split()[-2:] == ["+0.00", "16/16"]

    # the converted SavedModels and the ONNX model, moved into place; nothing partial left
    assert sorted(os.listdir(out_dir)) == ["FP16", "FP32", "INT8", "model.onnx"]
    assert not list(tmp_path.glob("*.partial-*"))
    assert f"Converted models saved to {out_dir}: FP16, FP32, INT8, model.onnx" in out
    x = np.random.default_rng(1).normal(size=(3, 32, 32, 3)).astype(np.float32)
    want = tf.saved_model.load(str(saved_model)).signatures["serving_default"](images=x)
    want = want["output_0"].numpy()
    got = tf.saved_model.load(str(out_dir / "FP32")).signatures["serving_default"](images=x)
    np.testing.assert_allclose(got["output_0"].numpy(), want, rtol=1e-5, atol=1e-6)

    # the same command again replaces its own output directory
    out = run_main(capsys, "--input_saved_model_dir", str(saved_model), "--data_dir",
                   str(data_dir), "--output_saved_model_dir", str(out_dir), "-b", "2",
                   "--precision", "fp32", "--num_iterations", "1", "--num_warmup_iterations",
                   "0")
    assert sorted(os.listdir(out_dir)) == ["FP32", "model.onnx"]


def test_synthetic_images_have_no_accuracy_and_an_unavailable_engine_is_one_line(
        saved_model, capsys, monkeypatch):
    """Without --data_dir: the synthetic batch, accuracy n/a, agreement still measured, INT8
    calibrated on synthetic images. A precision that cannot be built here (the quantizer
    missing) is one line, and the other engines run."""
    out = run_main(capsys, "--input_saved_model_dir", str(saved_model), "--precision", "INT8",
                   "-b", "1", "4", "--num_iterations", "1", "--num_calib_inputs", "4")
    assert sorted({e for e, _ in _rates(out)}) == ["ONNX Runtime", "TF-TRT INT8", "native"]
    accuracy = dict(ACCURACY.findall(out))
    assert accuracy["native"] == "n/a (synthetic images, no labels)"
    assert accuracy["ONNX Runtime"] == "n/a (synthetic images, no labels); agrees with native " \
        "on 4/4"
    assert re.fullmatch(r"n/a \(synthetic images, no labels\); agrees with native on [34]/4",
                        accuracy["TF-TRT INT8"])
    assert "TF-TRT INT8: calibrated on 4 synthetic images (no --calib_data_dir or --data_dir)" \
        in out
    assert "Images: synthetic (one random batch, repeated; no accuracy)" in out
    assert "Summary: images/s at batch 1, 4; top-1 n/a (synthetic images)" in out

    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)   # import fails
    out = run_main(capsys, "--input_saved_model_dir", str(saved_model), "--precision", "FP32",
                   "INT8", "-b", "2", "--num_iterations", "1", "--num_calib_inputs", "2")
    lines = [line for line in out.splitlines() if line.startswith("TF-TRT INT8")]
    assert len(lines) == 1 and lines[0].startswith("TF-TRT INT8: not available here: "
                                                   "ImportError: INT8 calibration needs")
    assert sorted({e for e, _ in _rates(out)}) == ["ONNX Runtime", "TF-TRT FP32", "native"]


def test_num_eval_images_and_a_corrupt_validation_file(saved_model, data_dir, tmp_path,
                                                       capsys):
    out = run_main(capsys, "--input_saved_model_dir", str(saved_model), "--data_dir",
                   str(data_dir), "--precision", "FP32", "-b", "4", "--num_iterations", "1",
                   "--num_warmup_iterations", "0", "--num_eval_images", "5")
    accuracy = dict(ACCURACY.findall(out))
    assert re.fullmatch(r"top-1 [\d.]+% on 5 images \(the reference\)", accuracy["native"])
    assert VERSUS.fullmatch(accuracy["TF-TRT FP32"]).group(2, 3, 4) == ("5", "+0.00", "5")

    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    for f in data_dir.iterdir():
        (corrupt / f.name).write_bytes(f.read_bytes())
    data = bytearray((corrupt / "validation-00001-of-00002").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (corrupt / "validation-00001-of-00002").write_bytes(bytes(data))
    out_dir = tmp_path / "out"
    with pytest.raises(SystemExit) as e:
        inference_script.main(["--input_saved_model_dir", str(saved_model), "--data_dir",
                               str(corrupt), "--output_saved_model_dir", str(out_dir)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error: argument --data_dir: a corrupt TFRecord file: " in err
    assert "validation-00001-of-00002: corrupted record at " in err
    assert not out_dir.exists() and not list(tmp_path.glob("*.partial-*"))

    no_records = tmp_path / "no_records"
    no_records.mkdir()
    (no_records / "train-00000-of-00001").write_bytes(b"")
    with pytest.raises(SystemExit) as e:
        inference_script.main(["--input_saved_model_dir", str(saved_model), "--data_dir",
                               str(data_dir), "--calib_data_dir", str(no_records),
                               "--output_saved_model_dir", str(out_dir)])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"error: argument --calib_data_dir: the train-* files of {str(no_records)!r} hold no "
        f"records to calibrate INT8 with")
    assert not out_dir.exists() and not list(tmp_path.glob("*.partial-*"))


# ---------------------------------------------------------------- bad input


def parse(*argv: str):
    return cmdline.parse_inference_cmdline(list(argv))


def test_defaults_and_values(saved_model):
    args = parse("--input_saved_model_dir", str(saved_model))
    assert args.precision == ["FP32", "FP16", "INT8"] and args.batch_size == [1, 8, 32]
    assert (args.num_iterations, args.num_warmup_iterations, args.num_calib_inputs) == (20, 5, 64)
    assert args.data_dir is args.output_saved_model_dir is args.num_eval_images is None
    args = parse("--input_saved_model_dir", str(saved_model), "--precision", "int8", "fp32",
                 "INT8", "-b", "32", "1", "32")
    assert args.precision == ["INT8", "FP32"] and args.batch_size == [1, 32]


@pytest.mark.parametrize("argv, message", [
    (["--input_saved_model_dir", "/no/such/dir"],
     "argument --input_saved_model_dir: no such directory: '/no/such/dir'"),
    ([], "the following arguments are required: --input_saved_model_dir"),
    (["-b", "0"], "argument -b/--batch_size: must be a positive integer, not 0"),
    (["-b", "8", "-2"], "argument -b/--batch_size: must be a positive integer, not -2"),
    (["--batch_size", "eight"], "argument -b/--batch_size: invalid int value: 'eight'"),
    (["--precision", "FP8"], "argument --precision: invalid choice: 'FP8' (choose from FP32, "
                             "FP16, INT8)"),
    (["--num_iterations", "0"], "argument --num_iterations: must be a positive integer"),
    (["--num_warmup_iterations", "-1"], "argument --num_warmup_iterations: must be 0 or more"),
    (["--num_calib_inputs", "0"], "argument --num_calib_inputs: must be a positive integer"),
    (["--data_dir", "/no/such/data"], "argument --data_dir: no such directory"),
])
def test_bad_flags_are_one_argparse_error(argv, message, saved_model, capsys):
    if argv and argv[0] != "--input_saved_model_dir":
        argv = ["--input_saved_model_dir", str(saved_model), *argv]
    with pytest.raises(SystemExit) as e:
        parse(*argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert ": error: " in err[-1] and message in err[-1]


def test_bad_directories(saved_model, data_dir, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()

    def error(*argv):
        with pytest.raises(SystemExit) as e:
            parse(*argv)
        assert e.value.code == 2
        return capsys.readouterr().err.strip().splitlines()[-1]

    assert "argument --input_saved_model_dir: " + repr(str(empty)) + " holds no SavedModel " \
        "(saved_model.pb)" in error("--input_saved_model_dir", str(empty))
    src = ["--input_saved_model_dir", str(saved_model)]
    assert "argument --data_dir: " + repr(str(empty)) + " holds no TFRecord files named " \
        "validation-*" in error(*src, "--data_dir", str(empty))
    # INT8 calibrates on train-* files; a directory of validation files only needs another
    valid_only = tmp_path / "valid_only"
    valid_only.mkdir()
    (valid_only / "validation-00000-of-00001").write_bytes(
        (data_dir / "validation-00000-of-00002").read_bytes())
    assert "holds no TFRecord files named train-* to calibrate INT8 with; name them with " \
        "--calib_data_dir" in error(*src, "--data_dir", str(valid_only))
    assert parse(*src, "--data_dir", str(valid_only), "--precision", "FP32").data_dir
    assert "argument --calib_data_dir: " + repr(str(empty)) + " holds no TFRecord files named " \
        "train-*" in error(*src, "--data_dir", str(data_dir), "--calib_data_dir", str(empty))
    (empty / "notes.txt").write_text("mine")
    assert "holds files this script did not write; name a new or empty directory" in \
        error(*src, "--output_saved_model_dir", str(empty))
    assert "exists and is not a directory" in \
        error(*src, "--output_saved_model_dir", str(empty / "notes.txt"))
    assert "it is --input_saved_model_dir" in \
        error(*src, "--output_saved_model_dir", str(saved_model))


class _NotAnImageModel(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.ones((4, 2), np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def __call__(self, x):
        return {"y": tf.matmul(x, self.w)}


def test_models_it_cannot_run_are_one_error_and_nothing_is_written(tmp_path, capsys):
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "saved_model.pb").write_bytes(b"not a SavedModel")
    other = tmp_path / "other"
    module = _NotAnImageModel()
    tf.saved_model.save(module, str(other), signatures=module.__call__.get_concrete_function())
    out_dir = tmp_path / "out"
    for model, message in [
            (corrupt, f"argument --input_saved_model_dir: {str(corrupt)!r} could not be "
                      f"loaded (DataLossError: "),
            (other, "inference.py needs one input of float32 NHWC images of a fixed size")]:
        with pytest.raises(SystemExit) as e:
            inference_script.main(["--input_saved_model_dir", str(model),
                                   "--output_saved_model_dir", str(out_dir)])
        assert e.value.code == 2
        assert message in capsys.readouterr().err.strip().splitlines()[-1]
        assert not out_dir.exists() and not list(tmp_path.glob("*.partial-*"))
    with pytest.raises(SystemExit):
        inference_script.main(["--input_saved_model_dir", str(other),
                               "--input_signature_key", "predict"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(f"error: argument --input_signature_key: the SavedModel in "
                        f"{str(other)!r} has no signature 'predict' (it has: serving_default)")


def test_script_bad_flag_exits_2_and_writes_nothing(tmp_path):
    """The script's own process: one error line, status 2, no output directory."""
    proc = subprocess.run([sys.executable, str(INFERENCE), "--input_saved_model_dir",
                           str(tmp_path / "missing"), "--output_saved_model_dir",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=60,
                          cwd=str(ROOT))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1] == (
        "inference.py: error: argument --input_saved_model_dir: no such directory: "
        f"{str(tmp_path / 'missing')!r}")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- ResNet-18 (slow)


@pytest.mark.slow
def test_resnet18_from_resnet_py(tmp_path):
    """The container's workflow: resnet.py trains a step and exports; inference.py runs the
    SavedModel through the three engines on the generated TFRecord set."""
    data, export = tmp_path / "data", tmp_path / "export"
    make_imagenet_tfrecords.main(["--out_dir", str(data), "--train", "16", "--validation",
                                  "16", "--num_classes", str(NUM_CLASSES)])
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run([sys.executable, str(CNN / "resnet.py"), "--layers", "18",
                           "--image_size", "32", "-b", "8", "-i", "1", "--precision", "fp32",
                           "--export_dir", str(export)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = subprocess.run([sys.executable, str(INFERENCE), "--input_saved_model_dir",
                           str(export), "--data_dir", str(data), "--num_iterations", "3",
                           "--num_warmup_iterations", "1", "--num_calib_inputs", "16"],
                          capture_output=True, text=True, timeout=600, env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert len(_rates(out)) == 15
    accuracy = dict(ACCURACY.findall(out))
    for engine in ("TF-TRT FP32", "TF-TRT FP16", "ONNX Runtime"):
        assert VERSUS.fullmatch(accuracy[engine]).group(3, 4) == ("+0.00", "16")
    # (one step from random weights: near-uniform probabilities, so INT8's top-1 classes may
    # differ from FP32's on many images; the tolerance is checked on the trained tiny model)
    assert VERSUS.fullmatch(accuracy["TF-TRT INT8"]).group(5) == "16"
