"""A DCGAN trained by a custom `tf.function` loop (issue 54), as TensorFlow's DCGAN tutorial
writes it: a generator (Dense 7x7x256, BatchNorm, LeakyReLU, Conv2DTranspose 128/64/1) and a
discriminator (Conv2D 64/128 stride 2, LeakyReLU, Dropout, Dense 1) on 28x28 images, two
GradientTapes, two Adam optimizers, batch 64; ndflow against TensorFlow 2.21 in the same run.

    python benchmarks/models/dcgan_loop.py [--rounds 2] [--epochs 3]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

NOISE, BATCH, BATCHES = 100, 64, 10


def flops() -> float:
    b = BATCH
    # a transposed convolution multiplies each input pixel by the whole filter: its FLOPs
    # count the input's pixels (7x7, 7x7, 14x14), not the strided output's
    gen = (2 * b * NOISE * 7 * 7 * 256 + 2 * b * 7 * 7 * 256 * 5 * 5 * 128
           + 2 * b * 7 * 7 * 128 * 5 * 5 * 64 + 2 * b * 14 * 14 * 64 * 5 * 5 * 1)
    disc = (2 * b * 14 * 14 * 64 * 5 * 5 * 1 + 2 * b * 7 * 7 * 128 * 5 * 5 * 64
            + 2 * b * 7 * 7 * 128)
    # generator forward once, discriminator forward twice (real, fake); gradients ~2x each
    return 3 * gen + 3 * 2 * disc


def bytes_moved() -> float:
    params = (NOISE * 7 * 7 * 256 + 5 * 5 * 256 * 128 + 5 * 5 * 128 * 64 + 5 * 5 * 64
              + 5 * 5 * 64 + 5 * 5 * 64 * 128 + 7 * 7 * 128)
    return 7 * 4 * params


def setup(tf, jit: bool = False) -> harness.LoopWorkload:
    import numpy as np
    keras, layers = tf.keras, tf.keras.layers
    keras.utils.set_random_seed(1)
    generator = keras.Sequential([
        keras.Input((NOISE,)), layers.Dense(7 * 7 * 256, use_bias=False),
        layers.BatchNormalization(), layers.LeakyReLU(), layers.Reshape((7, 7, 256)),
        layers.Conv2DTranspose(128, 5, strides=1, padding="same", use_bias=False),
        layers.BatchNormalization(), layers.LeakyReLU(),
        layers.Conv2DTranspose(64, 5, strides=2, padding="same", use_bias=False),
        layers.BatchNormalization(), layers.LeakyReLU(),
        layers.Conv2DTranspose(1, 5, strides=2, padding="same", use_bias=False,
                               activation="tanh")])
    discriminator = keras.Sequential([
        keras.Input((28, 28, 1)), layers.Conv2D(64, 5, strides=2, padding="same"),
        layers.LeakyReLU(), layers.Dropout(0.3),
        layers.Conv2D(128, 5, strides=2, padding="same"), layers.LeakyReLU(),
        layers.Dropout(0.3), layers.Flatten(), layers.Dense(1)])
    cross_entropy = keras.losses.BinaryCrossentropy(from_logits=True)
    gen_opt, disc_opt = keras.optimizers.Adam(1e-4), keras.optimizers.Adam(1e-4)
    rng = np.random.default_rng(0)
    batches = [(tf.constant(rng.uniform(-1, 1, (BATCH, 28, 28, 1)).astype("float32")),
                tf.constant(rng.standard_normal((BATCH, NOISE)).astype("float32")))
               for _ in range(BATCHES)]

    @tf.function(jit_compile=jit)
    def train_step(images, noise):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated = generator(noise, training=True)
            real_output = discriminator(images, training=True)
            fake_output = discriminator(generated, training=True)
            gen_loss = cross_entropy(tf.ones_like(fake_output), fake_output)
            disc_loss = (cross_entropy(tf.ones_like(real_output), real_output)
                         + cross_entropy(tf.zeros_like(fake_output), fake_output))
        gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
        disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
        gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
        disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
        return gen_loss + disc_loss

    return harness.LoopWorkload(train_step, batches)


def run(tf, args) -> dict:
    return harness.measure(tf, setup(tf, bool(args.jit)), args.epochs)


if __name__ == "__main__":
    harness.main(__file__, __doc__, run, flops(), bytes_moved())
