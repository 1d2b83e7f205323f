"""A small DCGAN-style GAN trained with Keras on the bundled digits, with switches for mixed
precision and loss scaling (the mixed-precision guide's GAN walkthrough).

    python -m ndflow.models.gan.train [--precision float32|mixed_float16|mixed_bfloat16]
        [--loss_scaling none|dynamic|fixed:N] [--epochs 10] [--batch_size 64]
        [--log_dir DIR] [--self_test]

A generator (dense -> 7x7x64, two strided transposed convolutions to 28x28x1, tanh) and a
discriminator (two strided convolutions, dense logit) trained by a subclassed `Model` whose
`train_step` takes one step on each with its own Adam optimizer, as Keras' DCGAN example
does. `--precision` sets the Keras global dtype policy before the models are built; the
last layer of each model stays float32 (the guide's advice: outputs and losses in float32).
`--loss_scaling` wraps both optimizers in `tf.keras.mixed_precision.LossScaleOptimizer`
(`dynamic`, or `fixed:N` for a constant scale N) and `train_step` scales each loss and
unscales its gradients by hand; `none` trains without.

Each epoch prints the mean discriminator and generator losses (fit's one line per epoch) and
appends them, with the loss scales, to `<log_dir>/losses.csv` (a CSVLogger), so runs with and
without loss scaling can be compared. `--self_test` trains briefly on generated images and
checks that the losses are finite and the CSV is written.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

import ndflow as tf
from ndflow.data.digits import load_digits

keras = tf.keras
LATENT_DIM = 32
IMAGE_SIZE = 28
SEED = 20
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")


def build_generator(latent_dim: int = LATENT_DIM) -> keras.Sequential:
    return keras.Sequential([
        keras.Input((latent_dim,)),
        keras.layers.Dense(7 * 7 * 64),
        keras.layers.LeakyReLU(negative_slope=0.2),
        keras.layers.Reshape((7, 7, 64)),
        keras.layers.Conv2DTranspose(64, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(negative_slope=0.2),
        keras.layers.Conv2DTranspose(32, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(negative_slope=0.2),
        # The output layer computes in float32 whatever the policy.
        keras.layers.Conv2D(1, 5, padding="same", activation="tanh", dtype="float32"),
    ], name="generator")


def build_discriminator() -> keras.Sequential:
    return keras.Sequential([
        keras.Input((IMAGE_SIZE, IMAGE_SIZE, 1)),
        keras.layers.Conv2D(32, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(negative_slope=0.2),
        keras.layers.Conv2D(64, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(negative_slope=0.2),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(1, dtype="float32"),  # the logit, in float32
    ], name="discriminator")


class GAN(keras.Model):
    """Both models and a `train_step` that updates the discriminator, then the generator."""

    def __init__(self, discriminator, generator, latent_dim: int = LATENT_DIM):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn
        self.d_loss_metric = keras.metrics.Mean(name="d_loss")
        self.g_loss_metric = keras.metrics.Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_metric, self.g_loss_metric]

    def _step(self, model, optimizer, loss_of):
        """One optimizer step on `model`'s weights; the loss scaled and the gradients
        unscaled when `optimizer` is a LossScaleOptimizer."""
        scaling = isinstance(optimizer, keras.mixed_precision.LossScaleOptimizer)
        with tf.GradientTape() as tape:
            loss = loss_of()
            scaled_loss = optimizer.get_scaled_loss(loss) if scaling else loss
        variables = model.trainable_weights
        grads = tape.gradient(scaled_loss, variables)
        if scaling:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    def train_step(self, real_images):
        batch_size = tf.shape(real_images)[0]
        # The discriminator: generated images labelled 1, real ones 0 (with label noise).
        latent = tf.random.normal((batch_size, self.latent_dim))
        combined = tf.concat([self.generator(latent), real_images], axis=0)
        labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * tf.random.uniform(tf.shape(labels))
        d_loss = self._step(self.discriminator, self.d_optimizer, lambda: self.loss_fn(
            labels, self.discriminator(combined, training=True)))
        # The generator: fool the discriminator into saying "real" (0).
        latent = tf.random.normal((batch_size, self.latent_dim))
        misleading = tf.zeros((batch_size, 1))
        g_loss = self._step(self.generator, self.g_optimizer, lambda: self.loss_fn(
            misleading, self.discriminator(self.generator(latent, training=True))))
        self.d_loss_metric.update_state(d_loss)
        self.g_loss_metric.update_state(g_loss)
        logs = {"d_loss": self.d_loss_metric.result(), "g_loss": self.g_loss_metric.result()}
        for name, opt in (("d_loss_scale", self.d_optimizer), ("g_loss_scale", self.g_optimizer)):
            if isinstance(opt, keras.mixed_precision.LossScaleOptimizer):
                logs[name] = tf.identity(opt.loss_scale)
        return logs


def parse_loss_scaling(value: str):
    """'none' -> None, 'dynamic' -> 'dynamic', 'fixed:N' -> N (a float >= 1)."""
    if value in ("none", "dynamic"):
        return None if value == "none" else value
    kind, _, number = value.partition(":")
    try:
        scale = float(number)
    except ValueError:
        scale = float("nan")
    if kind != "fixed" or not math.isfinite(scale) or scale < 1:
        raise argparse.ArgumentTypeError(
            f"--loss_scaling must be none, dynamic or fixed:N with N >= 1, got {value!r}")
    return scale


def make_optimizer(loss_scaling):
    opt = keras.optimizers.Adam(learning_rate=2e-4, beta_1=0.5)
    if loss_scaling is None:
        return opt
    if loss_scaling == "dynamic":
        return keras.mixed_precision.LossScaleOptimizer(opt, dynamic=True)
    return keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False,
                                                    initial_scale=loss_scaling)


def load_images(self_test: bool) -> np.ndarray:
    """(N, 28, 28, 1) float32 in [-1, 1]: all 1797 bundled digits, or 32 generated images
    (bright squares at random places) with `self_test`."""
    if self_test:
        rng = np.random.default_rng(SEED)
        images = np.full((32, IMAGE_SIZE, IMAGE_SIZE, 1), -1.0, np.float32)
        for img, (r, c) in zip(images, rng.integers(4, 16, (32, 2))):
            img[r:r + 8, c:c + 8] = 1.0
        return images
    splits = load_digits()
    raw = np.concatenate([splits.train.images, splits.validation.images, splits.test.images])
    return (raw.astype(np.float32) / 127.5 - 1.0)[..., None]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--precision", choices=PRECISIONS, default="float32",
                   help="the Keras global dtype policy")
    p.add_argument("--loss_scaling", type=parse_loss_scaling, default=None,
                   help="none (default), dynamic, or fixed:N")
    p.add_argument("--epochs", type=int, default=None, help="default 10 (1 with --self_test)")
    p.add_argument("--batch_size", type=int, default=None,
                   help="default 64 (16 with --self_test)")
    p.add_argument("--log_dir", default=None,
                   help="where losses.csv goes (default a directory under the current one)")
    p.add_argument("--self_test", action="store_true",
                   help="a short run on generated images")
    return p.parse_args(argv)


def main(argv=None):
    """Trains; returns the History (per-epoch d_loss, g_loss and loss scales)."""
    args = parse_args(argv)
    epochs = args.epochs or (1 if args.self_test else 10)
    batch_size = args.batch_size or (16 if args.self_test else 64)
    log_dir = args.log_dir or os.path.join(
        "gan_logs", f"{args.precision}-{_scaling_name(args.loss_scaling)}")
    os.makedirs(log_dir, exist_ok=True)
    csv_path = os.path.join(log_dir, "losses.csv")
    # Python's random (Keras 3's initializer seeds), NumPy's and TF's seeds at once
    keras.utils.set_random_seed(SEED)
    keras.mixed_precision.set_global_policy(args.precision)
    images = load_images(args.self_test)
    gan = GAN(build_discriminator(), build_generator())
    gan.compile(d_optimizer=make_optimizer(args.loss_scaling),
                g_optimizer=make_optimizer(args.loss_scaling),
                loss_fn=keras.losses.BinaryCrossentropy(from_logits=True))
    print(f"GAN on {len(images)} {'generated' if args.self_test else 'digit'} images: "
          f"policy {args.precision}, loss scaling {_scaling_name(args.loss_scaling)}, "
          f"{epochs} epochs of batch {batch_size}")
    history = gan.fit(images, batch_size=batch_size, epochs=epochs, verbose=2,
                      callbacks=[keras.callbacks.CSVLogger(csv_path)])
    print(f"Losses per epoch written to {csv_path}")
    sys.stdout.flush()
    if args.self_test:
        losses = history.history["d_loss"] + history.history["g_loss"]
        assert all(math.isfinite(v) for v in losses), f"non-finite losses: {losses}"
        assert os.path.getsize(csv_path) > 0, f"{csv_path} is empty"
        print("Self-test passed.")
    return history


def _scaling_name(loss_scaling) -> str:
    if loss_scaling is None or loss_scaling == "dynamic":
        return loss_scaling or "none"
    return f"fixed:{loss_scaling:g}"


if __name__ == "__main__":
    main()
