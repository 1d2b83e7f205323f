"""Training with Keras `fit` and inference, each timed in images per second.

Progress lines keep the container's format and add the loss and the learning rate:

    global_step: 20 images_per_sec: 412.7 loss: 6.9182 lr: 0.0002
    epoch: 0 time_taken: 51.2

A final `Summary:` line gives the mean speed after the warm-up steps.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import zipfile

import ndflow as tf

from . import common, image_processing
from .cmdline import latest_checkpoint, print_args, train_files
from .resnet_model import resnet

keras = tf.keras

WARMUP_STEPS = 2     # steps left out of the summary's mean (tracing, first allocations)
# Passed to load_model: ndflow's schedule deserialization does not consult the
# register_keras_serializable registry yet (TensorFlow's Keras does).
CUSTOM_OBJECTS = {"PiecewiseConstantDecayWithWarmup": common.PiecewiseConstantDecayWithWarmup}


class StepTimer:
    """Per-step times and a progress line every `display_every` steps."""

    def __init__(self, batch_size: int, display_every: int, label: str):
        self.batch_size, self.display_every, self.label = batch_size, display_every, label
        self.durations: list[float] = []
        self.window_start = self.window_steps = None

    def begin_window(self):
        self.window_start, self.window_steps = time.perf_counter(), 0

    def step_done(self, step: int, duration: float, extra: str = "") -> None:
        self.durations.append(duration)
        self.window_steps += 1
        if step % self.display_every == 0:
            now = time.perf_counter()
            rate = self.batch_size * self.window_steps / max(now - self.window_start, 1e-9)
            print(f"{self.label}: {step} images_per_sec: {rate:.1f}{extra}", flush=True)
            self.window_start, self.window_steps = now, 0

    def summary(self, what: str) -> str:
        n = len(self.durations)
        if n == 0:
            return f"Summary: {what}: no steps were run"
        skip = min(WARMUP_STEPS, n - 1)
        timed = self.durations[skip:]
        rate = self.batch_size * len(timed) / max(sum(timed), 1e-9)
        steps = f"steps {skip + 1}-{n}" if len(timed) > 1 else f"step {n}"
        return (f"Summary: {what}: {rate:.1f} images/s (mean of {steps}, after {skip} warm-up "
                f"step{'s' * (skip != 1)}); {n} steps in {sum(self.durations):.1f} s")


class _ProgressCallback(keras.callbacks.Callback):
    """The container's `_ProfileKerasFitCallback`, with the loss and the learning rate."""

    def __init__(self, timer: StepTimer):
        super().__init__()
        self.timer = timer
        self.global_steps = 0

    def on_train_begin(self, logs=None):
        self.global_steps = int(self.model.optimizer.iterations.numpy())

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_start = time.perf_counter()
        self.timer.begin_window()

    def on_train_batch_begin(self, batch, logs=None):
        self.global_steps += 1
        self.batch_start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        loss = float((logs or {}).get("loss", float("nan")))   # waits for the step
        duration = time.perf_counter() - self.batch_start
        extra = ""
        if self.global_steps % self.timer.display_every == 0:
            lr = float(self.model.optimizer.learning_rate.numpy())
            extra = f" loss: {loss:.4f} lr: {lr:.6g}"
        self.timer.step_done(self.global_steps, duration, extra)

    def on_epoch_end(self, epoch, logs=None):
        print(f"epoch: {epoch} time_taken: {time.perf_counter() - self.epoch_start:.1f}",
              flush=True)


class _SavedNotice(keras.callbacks.Callback):
    """One line per checkpoint, after ModelCheckpoint has written it."""

    def __init__(self, log_dir: str):
        super().__init__()
        self.log_dir = log_dir

    def on_epoch_end(self, epoch, logs=None):
        path = os.path.join(self.log_dir, f"model-{epoch + 1:02d}.keras")
        if os.path.isfile(path):
            print(f"Saved checkpoint for epoch {epoch + 1}: {path}", flush=True)


def _from_input(args, error) -> bool:
    """Whether an error out of `fit` came from reading --data_dir: a corrupt record (a shard
    past those counted up front), or an image the input pipeline's map could not decode."""
    return args.data_dir is not None and (
        isinstance(error, tf.errors.DataLossError)
        or "Error in user-defined function passed to" in error.message)


def _fail(message: str) -> None:
    """A bad-input error found after parsing (it needed the data): argparse's form."""
    print(f"{os.path.basename(sys.argv[0]) or 'resnet.py'}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _device_line(policy: str | None = None) -> str:
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        where = f"GPU ({len(gpus)} visible, using 1)"
    else:
        flags = common.cpu_flags()
        features = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
        where = f"CPU ({os.cpu_count()} cores; {', '.join(features) or 'no AVX2'})"
    return f"Running on {where}" + (f" with the Keras dtype policy {policy}" if policy else "")


def _set_precision(args) -> tuple[str, bool]:
    have_gpu = bool(tf.config.list_physical_devices("GPU"))
    policy, scale_loss, notice = common.choose_precision(args.precision, have_gpu,
                                                         common.cpu_has_bf16_units())
    if notice:
        print(notice)
    keras.mixed_precision.set_global_policy(policy)
    print(_device_line(policy))
    return policy, scale_loss


def _dali_notice(args) -> None:
    if args.dali_mode or args.data_idx_dir:
        print("Notice: DALI is not available with ndflow: --dali_mode/--data_idx_dir are "
              "ignored, and tf.data reads and decodes the TFRecords")


def _policies(config) -> set[str]:
    """The dtype policy names of a saved model's layers."""
    found = set()
    if isinstance(config, dict):
        if config.get("class_name") in ("DTypePolicy", "FloatDTypePolicy"):
            found.add((config.get("config") or {}).get("name"))
        for value in config.values():
            found |= _policies(value)
    elif isinstance(config, list):
        for value in config:
            found |= _policies(value)
    return found


def load_checkpoint(path: str, compile: bool = True):
    """`load_model` with the schedule's class. A mixed_float16 checkpoint loads under the
    mixed_float16 global policy: ndflow saves the LossScaleOptimizer's inner optimizer as the
    compiled one (TensorFlow saves the LossScaleOptimizer) and wraps it again only when the
    loaded model's policy is mixed_float16; under another global policy the model gets a bare
    SGD, and the optimizer's saved state is skipped."""
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    scaled = "mixed_float16" in _policies(config.get("config"))
    previous = keras.mixed_precision.global_policy()
    if scaled:
        keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        return keras.models.load_model(path, custom_objects=CUSTOM_OBJECTS, compile=compile)
    finally:
        keras.mixed_precision.set_global_policy(previous)


def _compile(model, optimizer, use_xla: bool) -> None:
    top1 = keras.metrics.SparseTopKCategoricalAccuracy(k=1, name="top1")
    top5 = keras.metrics.SparseTopKCategoricalAccuracy(k=5, name="top5")
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy",
                  metrics=[top1, top5], jit_compile=bool(use_xla))


def _export(model, export_dir: str) -> None:
    """A SavedModel (signature `serving_default`, endpoint `serve`), written beside the target
    and moved into place, so a failed export leaves no half-written directory."""
    target = os.path.abspath(export_dir)
    partial = f"{target}.partial-{os.getpid()}"
    try:
        model.export(partial, verbose=False)
        if os.path.isdir(target):
            shutil.rmtree(target)       # empty, or a SavedModel (checked with the flags)
        os.replace(partial, target)
    finally:
        if os.path.isdir(partial):
            shutil.rmtree(partial)
    print(f"The model is saved to {export_dir}")


def train(args) -> int:
    print_args(args)
    _dali_notice(args)
    policy, scale_loss = _set_precision(args)
    batch_size = args.batch_size
    size = args.image_size

    if args.data_dir is not None:
        train_set = train_files(args.data_dir, "train")
        valid_set = train_files(args.data_dir, "validation")
        try:
            num_train = common.get_num_records(train_set)
            num_valid = common.get_num_records(valid_set)
        except tf.errors.DataLossError as e:
            _fail(f"argument --data_dir: a corrupt TFRecord file: {e.message}")
        if num_train < batch_size:
            _fail(f"argument -b/--batch_size: {batch_size} is more than the {num_train} "
                  f"training images in {args.data_dir!r}")
    else:
        num_train, num_valid = common.SYNTHETIC_TRAIN_SAMPLES, 0

    full_epoch = num_train // batch_size
    if args.iter_unit == "batch" and args.num_iter > full_epoch:
        print(f"Notice: -i {args.num_iter} batches is more than an epoch; training "
              f"{full_epoch} (one epoch of {num_train} images)")
    if args.iter_unit == "epoch":
        nstep_per_epoch, nstep_valid = full_epoch, num_valid // batch_size
    else:
        nstep_per_epoch, nstep_valid = min(args.num_iter, full_epoch), \
            min(10, num_valid // batch_size)

    initial_epoch, checkpoint = latest_checkpoint(args.log_dir)
    # batch: each run trains -i more batches as one epoch; epoch: up to epoch -i in all.
    num_epochs = initial_epoch + 1 if args.iter_unit == "batch" else args.num_iter
    if checkpoint:
        model = load_checkpoint(checkpoint)
        optimizer = model.optimizer
        policy = model.get_layer("conv1").dtype_policy.name   # the checkpoint's, not --precision
        print(f"Restored from {checkpoint} (epoch {initial_epoch}, step "
              f"{int(optimizer.iterations.numpy())})")
        if model.name != f"resnet{args.layers}_v1_5":
            _fail(f"argument --layers: {args.layers}, but the checkpoint in {args.log_dir!r} "
                  f"is {model.name}")
        if model.input_shape[1] != size:
            _fail(f"argument --image_size: {size}, but the checkpoint in {args.log_dir!r} "
                  f"takes {model.input_shape[1]}x{model.input_shape[2]} images")
    else:
        if args.log_dir:
            print("Initializing from scratch.")
        model = resnet(args.layers, image_processing.NUM_CLASSES, size, args.image_format)
        lr_schedule = common.create_lr_schedule(batch_size, num_train)
        optimizer = keras.optimizers.SGD(learning_rate=lr_schedule, momentum=common.MOMENTUM)
        if scale_loss:
            optimizer = keras.mixed_precision.LossScaleOptimizer(
                optimizer, initial_scale=common.LOSS_SCALE)
    _compile(model, optimizer, args.use_xla)

    if args.data_dir is not None:
        train_input = image_processing.image_set(train_set, batch_size, size, size,
                                                 training=True)
        valid_params = {}
        if nstep_valid:
            valid_params = {"validation_data": image_processing.image_set(
                valid_set, batch_size, size, size, training=False),
                "validation_steps": nstep_valid, "validation_freq": 1}
    else:
        train_input = image_processing.fake_image_set(batch_size, size, size)
        valid_params = {}

    timer = StepTimer(batch_size, args.display_every, "global_step")
    callbacks = [_ProgressCallback(timer)]
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
        callbacks.append(keras.callbacks.ModelCheckpoint(
            os.path.join(args.log_dir, "model-{epoch:02d}.keras"), save_weights_only=False,
            save_best_only=False))
        callbacks.append(_SavedNotice(args.log_dir))
    if args.tensorboard_dir:
        callbacks.append(keras.callbacks.TensorBoard(log_dir=args.tensorboard_dir))

    if initial_epoch >= num_epochs:
        print(f"Nothing to train: the checkpoint is at epoch {initial_epoch} of {num_epochs}")
    else:
        try:
            model.fit(train_input, epochs=num_epochs, initial_epoch=initial_epoch,
                      steps_per_epoch=nstep_per_epoch, callbacks=callbacks, verbose=2,
                      shuffle=False, **valid_params)
        except KeyboardInterrupt:
            print("Keyboard interrupt")
        except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as e:
            if not _from_input(args, e):
                raise
            print(f"{os.path.basename(sys.argv[0]) or 'resnet.py'}: error: reading --data_dir "
                  f"{args.data_dir!r}: {e.message.splitlines()[0]} (a corrupt record or an "
                  f"image that is not a JPEG; the checkpoints saved so far are kept)",
                  file=sys.stderr)
            return 1
        print(timer.summary(f"ResNet-{args.layers} v1.5 training, batch {batch_size}, "
                            f"{size}x{size}, {policy}"))

    if args.export_dir:
        _export(model, args.export_dir)
    return 0


def _load_for_inference(args):
    """(a function from an image batch to probabilities, the image size, where it came from)."""
    if args.export_dir:
        loaded = tf.saved_model.load(args.export_dir)
        spec = loaded.signatures["serving_default"].structured_input_signature[1]
        shape = next(iter(spec.values())).shape
        return loaded.serve, shape[1], f"the SavedModel in {args.export_dir}", loaded
    _, path = latest_checkpoint(args.log_dir)
    model = load_checkpoint(path, compile=False)
    serve = tf.function(lambda x: model(x, training=False), jit_compile=bool(args.use_xla))
    return serve, model.input_shape[1], f"the checkpoint {path}", model


def predict(args) -> int:
    print_args(args)
    _dali_notice(args)
    print(_device_line())
    serve, size, source, _keep = _load_for_inference(args)
    if size is None:
        size = args.image_size or 224
    elif args.image_size is not None and size != args.image_size:
        print(f"Notice: the model takes {size}x{size} images (--image_size {args.image_size} "
              f"is not used)")
    print(f"Inference with {source}")
    batch_size = args.batch_size
    valid_set = train_files(args.data_dir, "validation") if args.data_dir else []
    if valid_set:
        images = image_processing.image_set(valid_set, batch_size, size, size,
                                            with_label=False).repeat()
    else:
        images = image_processing.fake_image_set(batch_size, size, size, with_label=False)

    timer = StepTimer(batch_size, args.display_every, "predict_step")
    timer.begin_window()
    count, batches = 0, iter(images)
    for step in range(1, args.num_iter + 1):
        start = time.perf_counter()
        probs = serve(next(batches)).numpy()     # waits for the result
        timer.step_done(step, time.perf_counter() - start)
        count += probs.shape[0]
    print(timer.summary(f"inference, batch {batch_size}, {size}x{size}"))
    print(f"The loaded model predicts {count} images.")
    return 0
