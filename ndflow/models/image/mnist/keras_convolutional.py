"""The MNIST example's LeNet-5-like model as a Keras program: `Sequential`, `compile`, `fit`.

The model of convolutional.py (2x conv 5x5 SAME + ReLU + max-pool 2, dense 512 + dropout 0.5,
dense 10; L2 weight decay 5e-4 on the dense layers; SGD with momentum 0.9 and a learning rate
of 0.01 decayed by 0.95 every epoch) written with `tf.keras.Sequential`, trained with
`model.fit(..., validation_data=...)` and its progress bar, then evaluated on the test split.

    python -m ndflow.models.image.mnist.keras_convolutional [--epochs N] [--batch_size 64]
        [--amp] [--self_test] [--data_dir DIR] [--logdir DIR] [--checkpoint_dir DIR]

Data as in the other MNIST examples: MNIST from `--data_dir` (downloaded when online), else
the bundled UCI digits (offline), or generated data with `--self_test`. `--amp` is the user
guide's one-line rewrite, `opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
opt)` before `compile`: `fit`'s training graph is rewritten to float16 on a GPU (bfloat16 on
a CPU with bf16 units; on other CPUs the rewrite warns and leaves float32) and the loss is
scaled dynamically.

`--logdir` adds Keras' TensorBoard callback (`logdir/train`, `logdir/validation`: epoch
scalars, weight histograms, the graph `fit` runs). `--checkpoint_dir` saves a TensorFlow
checkpoint (`tf.train.Checkpoint` of the model, its optimizer and the epoch, kept by a
`CheckpointManager`) after every epoch, numbered by the optimizer's step; a rerun with the
same directory restores the latest one and continues from the epoch and step it saved.
"""

from __future__ import annotations

import argparse

import ndflow as tf
from ndflow.models.image.mnist.dataset import IMAGE_SIZE, NUM_CHANNELS, NUM_LABELS, load
from ndflow.models.image.mnist.model import (
    BATCH_SIZE,
    DIGITS_NUM_EPOCHS,
    EVAL_BATCH_SIZE,
    NUM_EPOCHS,
    SEED,
    num_epochs_for,
)
from ndflow.models.image.mnist.run_info import run_line

keras = tf.keras
# The example's `5e-4 * (l2_loss(fc1) + l2_loss(fc2) + ...)` with l2_loss(w) = sum(w**2) / 2.
WEIGHT_DECAY = 5e-4 / 2


def build_model() -> keras.Sequential:
    """The example's model; it outputs logits (the loss applies the softmax)."""
    def l2():
        return keras.regularizers.L2(WEIGHT_DECAY)

    return keras.Sequential([
        keras.Input((IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS)),
        keras.layers.Conv2D(32, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2, padding="same"),
        keras.layers.Conv2D(64, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2, padding="same"),
        keras.layers.Flatten(),
        keras.layers.Dense(512, activation="relu", kernel_regularizer=l2(),
                           bias_regularizer=l2()),
        keras.layers.Dropout(0.5, seed=SEED),
        keras.layers.Dense(NUM_LABELS, kernel_regularizer=l2(), bias_regularizer=l2()),
    ], name="mnist_cnn")


def make_optimizer(steps_per_epoch: int, amp: bool = False):
    """SGD with momentum, the learning rate decayed once per epoch; with `amp`, wrapped by the
    mixed-precision graph rewrite (which also turns the rewrite on)."""
    schedule = keras.optimizers.schedules.ExponentialDecay(
        0.01, decay_steps=steps_per_epoch, decay_rate=0.95, staircase=True)
    opt = keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)
    if amp:
        opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    return opt


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=None,
                   help=f"default {NUM_EPOCHS} on MNIST, {DIGITS_NUM_EPOCHS} on the digits, "
                        "1 with --self_test")
    p.add_argument("--batch_size", type=int, default=BATCH_SIZE)
    p.add_argument("--amp", action="store_true",
                   help="the mixed-precision graph rewrite (with dynamic loss scaling)")
    p.add_argument("--self_test", action="store_true",
                   help="train on generated data (expects 100%% test accuracy)")
    p.add_argument("--data_dir", default=None,
                   help="directory of the four MNIST .gz files (default ~/.ndflow/datasets/mnist)")
    p.add_argument("--verbose", type=int, choices=(0, 1, 2), default=1,
                   help="fit's verbosity: 1 a progress bar, 2 one line per epoch, 0 silent")
    p.add_argument("--logdir", default=None,
                   help="write TensorBoard logs (scalars, histograms, graph) here")
    p.add_argument("--checkpoint_dir", default=None,
                   help="save a checkpoint here after each epoch; resume from the latest one")
    return p.parse_args(argv)


class EpochCheckpoint(keras.callbacks.Callback):
    """Saves `tf.train.Checkpoint(model, optimizer, epoch)` after each epoch, numbered by the
    optimizer's step; `restore()` (before fit) returns the epoch to continue from."""

    def __init__(self, model, directory: str, max_to_keep: int = 3):
        super().__init__()
        self.epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer,
                                              epoch=self.epoch)
        self.manager = tf.train.CheckpointManager(self.checkpoint, directory, max_to_keep)

    def restore(self) -> int:
        latest = self.manager.latest_checkpoint
        if latest is None:
            return 0
        self.checkpoint.restore(latest).expect_partial()
        print(f"Restored {latest}: continuing at epoch {int(self.epoch.numpy()) + 1}, "
              f"step {_step(self.model)}")
        return int(self.epoch.numpy())

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.assign(epoch + 1)
        path = self.manager.save(checkpoint_number=_step(self.model))
        if self.params.get("verbose"):
            print(f"Saved checkpoint {path}")


def _step(model) -> int:
    return int(model.optimizer.iterations.numpy())


def train(d, epochs: int, batch_size: int = BATCH_SIZE, amp: bool = False, verbose: int = 1,
          logdir: str | None = None, checkpoint_dir: str | None = None, callbacks=()):
    """Builds, compiles and fits the model on `d` (dataset.Data), writing TensorBoard logs to
    `logdir` and resuming from / saving checkpoints to `checkpoint_dir` when given; returns
    (model, test loss, test accuracy)."""
    # Python's random (Keras 3's initializer seeds), NumPy's (fit's shuffling) and TF's
    keras.utils.set_random_seed(SEED)
    steps_per_epoch = -(-d.train_labels.shape[0] // batch_size)
    model = build_model()
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=make_optimizer(steps_per_epoch, amp), metrics=["accuracy"])
    if verbose:
        model.summary()
    callbacks, initial_epoch = list(callbacks), 0
    if logdir:
        callbacks.append(keras.callbacks.TensorBoard(logdir, histogram_freq=1, write_graph=True))
    if checkpoint_dir:
        saver = EpochCheckpoint(model, checkpoint_dir)
        saver.set_model(model)
        initial_epoch = saver.restore()
        callbacks.append(saver)
    if initial_epoch < epochs:
        model.fit(d.train_data, d.train_labels, batch_size=batch_size, epochs=epochs,
                  initial_epoch=initial_epoch, callbacks=callbacks,
                  validation_data=(d.validation_data, d.validation_labels), verbose=verbose)
    loss, accuracy = model.evaluate(d.test_data, d.test_labels, batch_size=EVAL_BATCH_SIZE,
                                    verbose=min(verbose, 1))
    return model, loss, accuracy


def main(argv=None) -> float:
    """Trains and returns the test accuracy (0..1)."""
    args = parse_args(argv)
    d = load(args.data_dir, args.self_test, EVAL_BATCH_SIZE)
    epochs = num_epochs_for(args.epochs, args.self_test, d.source)
    print(run_line("float32", args.amp or None))
    _, loss, accuracy = train(d, epochs, args.batch_size, args.amp, args.verbose, args.logdir,
                              args.checkpoint_dir)
    print(f"Test loss: {loss:.4f}, test accuracy: {100 * accuracy:.1f}% "
          f"({d.test_labels.shape[0]} {d.source} images)")
    if args.self_test:
        assert accuracy == 1.0, f"expected 100% test accuracy, got {100 * accuracy:.2f}%"
    return accuracy


if __name__ == "__main__":
    main()
