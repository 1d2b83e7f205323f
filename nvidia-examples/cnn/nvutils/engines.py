"""inference.py's engines and measurements: a SavedModel exported by resnet.py run as it is
(`native`), converted by TF-TRT's converter (`tf.experimental.tensorrt.Converter`, ndflow's
TrtGraphConverterV2 on ONNX Runtime) at each precision (`TF-TRT FP32`, `TF-TRT FP16`,
`TF-TRT INT8`), and exported to ONNX with `ndflow.onnx.export` and run by an ONNX Runtime
InferenceSession (`ONNX Runtime`).

Each engine is timed at each batch size on one batch of images (validation images, or the
container's synthetic batch), warm-up iterations first, then the mean of the timed ones:

  TF-TRT FP32: batch 8: 1234.5 images/s (mean of 20 iterations after 5 warm-up; 6.5 ms per batch)

and gives its top-1 accuracy on the validation images, with the difference from the native
model's (percentage points) and on how many images its top-1 class is the native model's:

  TF-TRT INT8: accuracy: top-1 75.00% on 16 images, delta -6.25 points; agrees with native on 15/16
"""

from __future__ import annotations

import os
import shutil
import time

import numpy as np

import ndflow as tf

from . import common, image_processing
from .cmdline import INFERENCE_OUTPUTS, print_args, train_files
from .runner import _device_line, _fail

NATIVE = "native"
ORT = "ONNX Runtime"
PREFERRED_PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider",
                       "CPUExecutionProvider")


class Engine:
    """A name and a function from a float32 NHWC batch (NumPy) to class scores (NumPy)."""

    def __init__(self, name: str, predict):
        self.name, self.predict = name, predict
        self.rates: dict[int, float] = {}
        self.top1: np.ndarray | None = None        # predicted classes on the eval images


# ---------------------------------------------------------------- the model


class Model:
    """The SavedModel's signature: one NHWC float32 image input, one [batch, classes] output."""

    def __init__(self, path: str, key: str):
        flag = "argument --input_saved_model_dir"
        try:
            self.loaded = tf.saved_model.load(path)
        except Exception as e:  # a damaged SavedModel raises assorted errors
            message = (getattr(e, "message", None) or str(e)).splitlines()[0]
            _fail(f"{flag}: {path!r} could not be loaded ({type(e).__name__}: {message})")
        signatures = getattr(self.loaded, "signatures", None) or {}
        if key not in signatures:
            _fail(f"argument --input_signature_key: the SavedModel in {path!r} has no "
                  f"signature {key!r} (it has: {', '.join(sorted(signatures)) or 'none'})")
        self.signature = signatures[key]
        args, kwargs = self.signature.structured_input_signature
        specs = dict(kwargs) if kwargs else {}
        shape = next(iter(specs.values())).shape if len(specs) == 1 and not args else None
        if (shape is None or shape.rank != 4 or shape[3] != 3 or shape[1] is None
                or shape[2] is None or next(iter(specs.values())).dtype != tf.float32):
            _fail(f"{flag}: the signature {key!r} of {path!r} takes "
                  f"{', '.join(f'{n}: {s.dtype.name}{s.shape}' for n, s in specs.items())}; "
                  f"inference.py needs one input of float32 NHWC images of a fixed size "
                  f"(resnet.py --export_dir writes one)")
        self.input_name = next(iter(specs))
        self.height, self.width = shape[1], shape[2]
        outputs = self.signature.structured_outputs
        keys = [k for k, s in (outputs.items() if isinstance(outputs, dict) else ())
                if getattr(s, "shape", None) is not None and s.shape.rank == 2]
        if len(keys) != 1:
            _fail(f"{flag}: the signature {key!r} of {path!r} has no single [batch, classes] "
                  f"output (it has: {outputs})")
        self.output_key = keys[0]

    def call(self, fn):
        """A NumPy batch -> NumPy scores function over a signature-like callable."""
        name, key = self.input_name, self.output_key
        return lambda x: fn(**{name: x})[key].numpy()


# ---------------------------------------------------------------- data


def _valid_files(args) -> list[str]:
    return train_files(args.data_dir, "validation") if args.data_dir else []


def _count(files: list[str], flag: str) -> int:
    try:
        return common.get_num_records(files)
    except tf.errors.DataLossError as e:
        _fail(f"argument --{flag}: a corrupt TFRecord file: {e.message}")


def timing_batch(args, model: Model) -> np.ndarray:
    """One batch of the largest batch size: the first validation images (repeated when there
    are fewer), or the container's synthetic batch."""
    size, h, w = max(args.batch_size), model.height, model.width
    files = _valid_files(args)
    if not files:
        return next(iter(image_processing.fake_image_set(size, h, w, with_label=False))).numpy()
    batch = next(iter(image_processing.image_set(files, size, h, w, with_label=False,
                                                 drop_remainder=False))).numpy()
    return np.resize(batch, (size, h, w, 3)) if len(batch) < size else batch


def eval_batches(args, model: Model, timed: np.ndarray):
    """(images, labels or None) batches to measure accuracy and agreement on: the validation
    images (--num_eval_images of them), else the synthetic timing batch without labels."""
    files = _valid_files(args)
    if not files:
        yield timed, None
        return
    left = args.num_eval_images or float("inf")
    for images, labels in image_processing.image_set(files, max(args.batch_size), model.height,
                                                     model.width, drop_remainder=False):
        n = int(min(left, images.shape[0]))
        yield images.numpy()[:n], labels.numpy()[:n]
        left -= n
        if left <= 0:
            return


def calibration_input_fn(args, model: Model):
    """TF-TRT's calibration input_fn: batches of images, (batch,) tuples, --num_calib_inputs
    images in all, from the train-* records of --calib_data_dir (or --data_dir), else
    synthetic; and a line saying what it reads."""
    directory = args.calib_data_dir or args.data_dir
    batch = min(max(args.batch_size), args.num_calib_inputs)
    h, w = model.height, model.width
    if directory:
        files = train_files(directory, "train")
        flag = "calib_data_dir" if args.calib_data_dir else "data_dir"
        available = _count(files, flag)
        if available == 0:
            _fail(f"argument --{flag}: the train-* files of {directory!r} hold no records to "
                  f"calibrate INT8 with")
        count = min(args.num_calib_inputs, available)
        source = f"{count} images of {directory} (train-*)" + (
            f"; only {available} there, not --num_calib_inputs {args.num_calib_inputs}"
            if available < args.num_calib_inputs else "")
        make = lambda: image_processing.image_set(files, batch, h, w, with_label=False,
                                                  drop_remainder=False)
    else:
        count = args.num_calib_inputs
        source = f"{count} synthetic images (no --calib_data_dir or --data_dir)"
        make = lambda: image_processing.fake_image_set(batch, h, w, with_label=False)

    def input_fn():
        left = count
        for images in make():
            n = min(left, int(images.shape[0]))
            yield (images[:n],)
            left -= n
            if left <= 0:
                return
    return input_fn, source


# ---------------------------------------------------------------- the engines


def _first_line(e: Exception) -> str:
    return ((getattr(e, "message", None) or str(e)).strip().splitlines() or [""])[0]


def _quantized_segments(converter) -> int:
    return sum(any(node.op_type == "QuantizeLinear" for node in seg.model.graph.node)
               for seg in converter.segments)


def tftrt_engine(args, model: Model, precision: str, out_dir: str | None,
                 calibration=None) -> Engine | None:
    """The SavedModel converted by TrtGraphConverterV2 at `precision` (saved to out_dir and
    loaded back when there is one, as TF-TRT's examples run the saved result); None, with
    one line saying why, where the conversion is not available here. INT8 calibrates with
    `calibration`, calibration_input_fn's (input_fn, description)."""
    name = f"TF-TRT {precision}"
    params = tf.experimental.tensorrt.ConversionParams(precision_mode=precision)
    start = time.perf_counter()
    try:
        converter = tf.experimental.tensorrt.Converter(
            input_saved_model_dir=args.input_saved_model_dir,
            input_saved_model_signature_key=args.input_signature_key,
            conversion_params=params)
        if precision == "INT8":
            input_fn, source = calibration
            converted = converter.convert(calibration_input_fn=input_fn)
        else:
            converted = converter.convert()
        if out_dir:
            path = os.path.join(out_dir, precision)
            converter.save(path)
            converted = tf.saved_model.load(path).signatures[args.input_signature_key]
    except Exception as e:  # the converter, its engine or quantizer missing or failing here
        print(f"{name}: not available here: {type(e).__name__}: {_first_line(e)}",
              flush=True)
        return None
    segments = len(converter.segments)
    left = len(converter.ops_left_in_ndflow)
    print(f"{name}: converted in {time.perf_counter() - start:.1f} s: {segments} engine "
          f"segment{'s' * (segments != 1)} (ONNX Runtime), {left} op{'s' * (left != 1)} left "
          f"in ndflow" + (f"; saved as {os.path.join(args.output_saved_model_dir, precision)}"
                          if out_dir else ""), flush=True)
    if precision == "FP16":
        print(f"Notice: {name}: the engines keep FP32 arithmetic (ndflow's converter builds "
              f"no float16 ONNX Runtime engines; providers here: {', '.join(_providers())}), "
              f"so this engine's figures are FP32 engines'", flush=True)
    if precision == "INT8":
        print(f"{name}: calibrated on {source}; {_quantized_segments(converter)} of "
              f"{segments} segments quantized to int8 (the others keep FP32)", flush=True)
    return Engine(name, model.call(converted))


def _providers() -> list[str]:
    import onnxruntime
    have = set(onnxruntime.get_available_providers())
    return [p for p in PREFERRED_PROVIDERS if p in have]


def onnxruntime_engine(args, model: Model, out_dir: str | None) -> Engine | None:
    """The signature exported by ndflow.onnx.export (tf2onnx's role), run by an ONNX Runtime
    InferenceSession; None, with one line saying why, where it is not available."""
    start = time.perf_counter()
    path = os.path.join(out_dir, "model.onnx") if out_dir else None
    try:
        import onnxruntime

        import ndflow.onnx
        proto = ndflow.onnx.export(model.signature, path)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(proto.SerializeToString(), options,
                                               providers=_providers())
    except Exception as e:
        print(f"{ORT}: not available here: {type(e).__name__}: {_first_line(e)}", flush=True)
        return None
    input_name = session.get_inputs()[0].name
    outputs = [o.name for o in session.get_outputs()]
    output = model.output_key if model.output_key in outputs else outputs[0]
    print(f"{ORT}: exported to ONNX (opset {proto.opset_import[0].version}, "
          f"{len(proto.graph.node)} nodes) in {time.perf_counter() - start:.1f} s"
          + (f", saved as {os.path.join(args.output_saved_model_dir, 'model.onnx')}"
             if path else "")
          + f"; ONNX Runtime {onnxruntime.__version__}, providers "
          f"{', '.join(session.get_providers())}", flush=True)
    return Engine(ORT, lambda x: session.run([output], {input_name: x})[0])


# ---------------------------------------------------------------- measuring


def time_engine(engine: Engine, images: np.ndarray, args) -> None:
    """images/s at each batch size: warm-up iterations, then the mean of the timed ones."""
    warmup, iterations = args.num_warmup_iterations, args.num_iterations
    for size in args.batch_size:
        x = np.ascontiguousarray(images[:size])
        durations = []
        for _ in range(warmup + iterations):
            start = time.perf_counter()
            engine.predict(x)                         # NumPy out: the result is there
            durations.append(time.perf_counter() - start)
        timed = durations[warmup:]
        rate = size * len(timed) / max(sum(timed), 1e-9)
        engine.rates[size] = rate
        print(f"{engine.name}: batch {size}: {rate:.1f} images/s (mean of {iterations} "
              f"iterations after {warmup} warm-up; {1000 * sum(timed) / len(timed):.2f} ms "
              f"per batch)", flush=True)


def evaluate(engine: Engine, batches, native: Engine, labels) -> str:
    """The accuracy line of an engine over `batches()`'s images; sets engine.top1."""
    engine.top1 = np.concatenate([np.argmax(engine.predict(x), axis=-1) for x, _ in batches()])
    n = len(engine.top1)
    same = ""
    if native is not None and native is not engine:
        agree = int(np.sum(engine.top1 == native.top1))
        same = f"agrees with {NATIVE} on {agree}/{n}"
    if labels is None:
        text = "n/a (synthetic images, no labels)" + (f"; {same}" if same else "")
    else:
        accuracy = 100 * float(np.mean(engine.top1 == labels))
        text = f"top-1 {accuracy:.2f}% on {n} images"
        if same:
            delta = accuracy - 100 * float(np.mean(native.top1 == labels))
            text += f", delta {delta:+.2f} points; {same}"
        else:
            text += " (the reference)"
    return f"{engine.name}: accuracy: {text}"


def summary(engines: list[Engine], args, labels) -> list[str]:
    sizes = args.batch_size
    width = max(len(e.name) for e in engines)
    head = f"  {'engine':<{width}}" + "".join(f"{f'batch {b}':>11}" for b in sizes)
    head += f"{'top-1':>9}{'delta':>9}{'agree':>9}"
    lines = [f"Summary: images/s at batch {', '.join(map(str, sizes))}; top-1 "
             + ("n/a (synthetic images)" if labels is None else
                f"on {len(labels)} validation images") + f", delta and agreement against "
             f"{NATIVE}", head]
    native = engines[0]
    for e in engines:
        row = f"  {e.name:<{width}}" + "".join(f"{e.rates[b]:>11.1f}" for b in sizes)
        if labels is None:
            top1, delta = "n/a", "n/a"
        else:
            accuracy = 100 * float(np.mean(e.top1 == labels))
            top1 = f"{accuracy:.2f}%"
            delta = "-" if e is native else \
                f"{accuracy - 100 * float(np.mean(native.top1 == labels)):+.2f}"
        agree = f"{int(np.sum(e.top1 == native.top1))}/{len(e.top1)}"
        lines.append(row + f"{top1:>9}{delta:>9}{agree:>9}")
    return lines


# ---------------------------------------------------------------- the script


def _replace_dir(partial: str, target: str) -> None:
    if os.path.isdir(target):
        # empty, or a previous run's FP32/ FP16/ INT8/ model.onnx (checked with the flags)
        if set(os.listdir(target)) <= set(INFERENCE_OUTPUTS):
            shutil.rmtree(target)
    os.replace(partial, target)


def run(args) -> int:
    print_args(args)
    print(_device_line(), flush=True)
    model = Model(args.input_saved_model_dir, args.input_signature_key)
    files = _valid_files(args)
    if files:
        available = _count(files, "data_dir")
        if available == 0:
            _fail(f"argument --data_dir: the validation-* files of {args.data_dir!r} hold no "
                  f"records")
    print(f"Model: {args.input_saved_model_dir}, signature {args.input_signature_key!r}: "
          f"{model.input_name} [batch, {model.height}, {model.width}, 3] -> "
          f"{model.output_key}", flush=True)
    # the calibration data checked before anything is converted or written
    calibration = calibration_input_fn(args, model) if "INT8" in args.precision else None
    images = timing_batch(args, model)
    print("Images: " + (f"{available} validation images of {args.data_dir}" if files else
                        "synthetic (one random batch, repeated; no accuracy)"), flush=True)

    target = args.output_saved_model_dir
    partial = f"{os.path.abspath(target)}.partial-{os.getpid()}" if target else None
    try:
        if partial:
            os.makedirs(partial)
        engines = [Engine(NATIVE, model.call(model.signature))]
        for precision in args.precision:
            engine = tftrt_engine(args, model, precision, partial, calibration)
            if engine is not None:
                engines.append(engine)
        engine = onnxruntime_engine(args, model, partial)
        if engine is not None:
            engines.append(engine)

        # read again for each engine (ImageNet's validation set does not fit in memory)
        batches = lambda: eval_batches(args, model, images)
        labels = [y for _, y in batches()]
        labels = None if labels[0] is None else np.concatenate(labels)
        for engine in engines:
            time_engine(engine, images, args)
            print(evaluate(engine, batches, engines[0], labels), flush=True)
        for line in summary(engines, args, labels):
            print(line)
        if partial:
            _replace_dir(partial, target)
            written = sorted(os.listdir(target))
            print(f"Converted models saved to {target}: {', '.join(written)}")
    finally:
        if partial and os.path.isdir(partial):
            shutil.rmtree(partial)
    return 0
