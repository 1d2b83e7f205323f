"""What the container's scripts share: the learning-rate schedule, the precision a machine
gets for `--precision fp16`, and counting TFRecords."""

from __future__ import annotations

import ndflow as tf

keras = tf.keras

NUM_CLASSES = 1000
# The container's stand-in sizes when it trains on synthetic data.
SYNTHETIC_TRAIN_SAMPLES = 1281982
SYNTHETIC_VALID_SAMPLES = 5000

MOMENTUM = 0.9
LOSS_SCALE = 128.0           # the container's initial (and, in TF 2.x, fixed) loss scale
BASE_LEARNING_RATE = 0.1     # for a global batch of 256, scaled linearly with the batch
BASE_LR_BATCH_SIZE = 256
LR_SCHEDULE = [              # (multiplier, epoch to start): 5 warm-up epochs, then steps
    (1.0, 5), (0.1, 30), (0.01, 60), (0.001, 80),
]


# keras.utils.register_keras_serializable (TF 2.21 has it in keras.saving too; ndflow does
# not expose the public keras.saving namespace yet)
@keras.utils.register_keras_serializable(package="nvutils")
class PiecewiseConstantDecayWithWarmup(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up from 0 to `rescaled_lr` over `warmup_steps`, then the piecewise constant
    `lr_values` (lr_values[i] after step_boundaries[i - 1])."""

    def __init__(self, rescaled_lr, step_boundaries, lr_values, warmup_steps, name=None):
        super().__init__()
        if len(step_boundaries) != len(lr_values) - 1:
            raise ValueError("step_boundaries must have one element less than lr_values")
        self.rescaled_lr = float(rescaled_lr)
        self.step_boundaries = [int(b) for b in step_boundaries]
        self.lr_values = [float(v) for v in lr_values]
        self.warmup_steps = int(warmup_steps)
        self.name = name

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = self.rescaled_lr * step / float(max(self.warmup_steps, 1))
        lr = tf.constant(self.lr_values[0], tf.float32)
        for boundary, value in zip(self.step_boundaries, self.lr_values[1:]):
            lr = tf.where(step > float(boundary), tf.constant(value, tf.float32), lr)
        return tf.where(step < float(self.warmup_steps), warmup, lr)

    def get_config(self):
        return {"rescaled_lr": self.rescaled_lr, "step_boundaries": self.step_boundaries,
                "lr_values": self.lr_values, "warmup_steps": self.warmup_steps,
                "name": self.name}


def create_lr_schedule(batch_size: int, epoch_size: int) -> PiecewiseConstantDecayWithWarmup:
    """The container's schedule for a (global) batch and an epoch of `epoch_size` images."""
    steps_per_epoch = max(epoch_size // batch_size, 1)
    rescaled_lr = BASE_LEARNING_RATE * batch_size / BASE_LR_BATCH_SIZE
    return PiecewiseConstantDecayWithWarmup(
        rescaled_lr,
        step_boundaries=[steps_per_epoch * epoch for _, epoch in LR_SCHEDULE[1:]],
        lr_values=[rescaled_lr * multiplier for multiplier, _ in LR_SCHEDULE],
        warmup_steps=steps_per_epoch * LR_SCHEDULE[0][1])


def cpu_flags() -> frozenset:
    """The CPU's feature flags, read from /proc/cpuinfo as ndflow reads them (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_has_bf16_units(flags: frozenset | None = None) -> bool:
    return bool((cpu_flags() if flags is None else flags) & {"avx512_bf16", "amx_bf16"})


def choose_precision(precision: str, have_gpu: bool, bf16_units: bool):
    """(Keras policy name, whether to scale the loss, a notice or None) for --precision.

    fp16 is Keras mixed precision: float16 (with loss scaling) on a GPU, bfloat16 on a CPU
    with bf16 units (bfloat16 has float32's exponent range, so Keras scales no loss), and
    float32 elsewhere, where half-precision kernels would be emulated and slower."""
    if precision == "fp32":
        return "float32", False, None
    if have_gpu:
        return "mixed_float16", True, None
    if bf16_units:
        return "mixed_bfloat16", False, None
    return "float32", False, ("Notice: --precision fp16 needs a GPU or a CPU with bf16 units "
                              "(avx512_bf16 / amx_bf16); none here, so training runs in float32")


def count_records(filename: str) -> int:
    """The records of one TFRecord file; a corrupt one is a DataLossError naming the file."""
    try:
        return sum(1 for _ in tf.data.TFRecordDataset(filename))
    except tf.errors.DataLossError as e:
        raise tf.errors.DataLossError(None, None, f"{filename}: {e.message}") from None


def get_num_records(filenames: list[str], exact_up_to: int = 32) -> int:
    """The records of a sharded set: counted when it has at most `exact_up_to` files, else the
    container's estimate (every shard but the last holds as many records as the first, as
    ImageNet's 1024 + 128 shards do to within one), which reads two files, not 140 GB."""
    if len(filenames) <= exact_up_to:
        return sum(count_records(f) for f in filenames)
    return count_records(filenames[0]) * (len(filenames) - 1) + count_records(filenames[-1])
