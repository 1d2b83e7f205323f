# Source: fchollet/deep-learning-with-python-notebooks, chapter17_image-generation.ipynb
#   (Deep Learning with Python, 3rd edition, F. Chollet & M. Watson), section "Implementing
#   a VAE with Keras", https://github.com/fchollet/deep-learning-with-python-notebooks
#   License: MIT.
# Changed: KERAS_BACKEND "jax" -> "tensorflow" (the README's backend choice);
#   synthetic_data.mnist_load_data() (384 + 128 learnable 28x28 digits) stands in for
#   keras.datasets.mnist.load_data(); epochs 30 -> 3; the latent-space grid is decoded with
#   n = 4 instead of 30 and its plt calls are left out (no matplotlib here); the code runs in
#   main(), which returns the fit's last epoch and the decoded grid's mean.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001
import os

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras
from keras import layers

from synthetic_data import mnist_load_data


def main():
    latent_dim = 2

    image_inputs = keras.Input(shape=(28, 28, 1))
    x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(
        image_inputs
    )
    x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(16, activation="relu")(x)
    z_mean = layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
    encoder = keras.Model(image_inputs, [z_mean, z_log_var], name="encoder")

    encoder.summary(line_length=80)

    from keras import ops

    class Sampler(keras.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = keras.random.SeedGenerator()
            self.built = True

        def call(self, z_mean, z_log_var):
            batch_size = ops.shape(z_mean)[0]
            z_size = ops.shape(z_mean)[1]
            epsilon = keras.random.normal(
                (batch_size, z_size), seed=self.seed_generator
            )
            return z_mean + ops.exp(0.5 * z_log_var) * epsilon

    latent_inputs = keras.Input(shape=(latent_dim,))
    x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
    x = layers.Reshape((7, 7, 64))(x)
    x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(
        x
    )
    x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(
        x
    )
    decoder_outputs = layers.Conv2D(1, 3, activation="sigmoid", padding="same")(x)
    decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")

    decoder.summary(line_length=80)

    class VAE(keras.Model):
        def __init__(self, encoder, decoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder = encoder
            self.decoder = decoder
            self.sampler = Sampler()
            self.reconstruction_loss_tracker = keras.metrics.Mean(
                name="reconstruction_loss"
            )
            self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

        def call(self, inputs):
            return self.encoder(inputs)

        def compute_loss(self, x, y, y_pred, sample_weight=None, training=True):
            original = x
            z_mean, z_log_var = y_pred
            reconstruction = self.decoder(self.sampler(z_mean, z_log_var))

            reconstruction_loss = ops.mean(
                ops.sum(
                    keras.losses.binary_crossentropy(x, reconstruction), axis=(1, 2)
                )
            )
            kl_loss = -0.5 * (
                1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var)
            )
            total_loss = reconstruction_loss + ops.mean(kl_loss)

            self.reconstruction_loss_tracker.update_state(reconstruction_loss)
            self.kl_loss_tracker.update_state(kl_loss)
            return total_loss

    import numpy as np

    (x_train, _), (x_test, _) = mnist_load_data(n_train=384, n_test=128)
    mnist_digits = np.concatenate([x_train, x_test], axis=0)
    mnist_digits = np.expand_dims(mnist_digits, -1).astype("float32") / 255

    vae = VAE(encoder, decoder)
    vae.compile(optimizer=keras.optimizers.Adam())
    history = vae.fit(mnist_digits, epochs=3, batch_size=128)

    n = 4
    digit_size = 28
    figure = np.zeros((digit_size * n, digit_size * n))

    grid_x = np.linspace(-1, 1, n)
    grid_y = np.linspace(-1, 1, n)[::-1]

    for i, yi in enumerate(grid_y):
        for j, xi in enumerate(grid_x):
            z_sample = np.array([[xi, yi]])
            x_decoded = vae.decoder.predict(z_sample)
            digit = x_decoded[0].reshape(digit_size, digit_size)
            figure[
                i * digit_size : (i + 1) * digit_size,
                j * digit_size : (j + 1) * digit_size,
            ] = digit
    return {"grid_mean": float(figure.mean()),
            **{k: v[-1] for k, v in history.history.items()}}
