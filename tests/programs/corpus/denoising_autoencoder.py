# Source: keras-team/keras-io, examples/vision/autoencoder.py ("Convolutional Autoencoder For
#   Image Denoising", Santiago L. Valdarrama, 2021/03/01),
#   https://github.com/keras-team/keras-io/blob/master/examples/vision/autoencoder.py
#   License: Apache-2.0.
# Changed: synthetic_data.mnist_load_data() (512 train / 128 test 28x28 uint8 images) stands
#   in for mnist.load_data(); epochs 50 -> 2 and 100 -> 2; display() (matplotlib, not
#   installed here) is left out with its calls; the code runs in main(), which returns both
#   fits' last epochs and the mean absolute error of the final denoised test predictions.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F401, I001
import numpy as np
import tensorflow as tf

from tensorflow.keras.models import Model
from tensorflow.keras.layers import Conv2D, MaxPooling2D, Input, UpSampling2D

from synthetic_data import mnist_load_data


def preprocess(dataset):
    """
    Normalizes the supplied dataset and reshapes it into the appropriate format.
    """

    dataset = dataset.astype("float32") / 255.0
    dataset = np.reshape(dataset, (len(dataset), 28, 28, 1))
    return dataset


def noise(dataset):
    """
    Adds random noise to each image in the supplied dataset.
    """

    noise_factor = 0.4
    noisy_dataset = dataset + noise_factor * np.random.normal(
        loc=0.0, scale=1.0, size=dataset.shape
    )

    return np.clip(noisy_dataset, 0.0, 1.0)


def main():
    # We only need images from the dataset. We will never use the target values so
    # we aren't going to load them.
    (train_dataset, _), (test_dataset, _) = mnist_load_data(n_train=512, n_test=128)

    # Normalize and reshape the data
    train_dataset = preprocess(train_dataset)
    test_dataset = preprocess(test_dataset)

    # Create a copy of the datasets with added noise
    noisy_train_dataset = noise(train_dataset)
    noisy_test_dataset = noise(test_dataset)

    input = Input(shape=(28, 28, 1))

    # Encoder
    x = Conv2D(32, (3, 3), activation="relu", padding="same")(input)
    x = MaxPooling2D((2, 2), padding="same")(x)
    x = Conv2D(32, (3, 3), activation="relu", padding="same")(x)
    x = MaxPooling2D((2, 2), padding="same")(x)

    # Decoder
    x = Conv2D(32, (3, 3), activation="relu", padding="same")(x)
    x = UpSampling2D((2, 2))(x)
    x = Conv2D(32, (3, 3), activation="relu", padding="same")(x)
    x = UpSampling2D((2, 2))(x)
    x = Conv2D(1, (3, 3), activation="sigmoid", padding="same")(x)

    # Autoencoder
    autoencoder = Model(input, x)
    autoencoder.compile(optimizer="adam", loss="binary_crossentropy")
    autoencoder.summary()

    first = autoencoder.fit(
        x=train_dataset,
        y=train_dataset,
        epochs=2,
        batch_size=128,
        shuffle=True,
        validation_data=(test_dataset, test_dataset),
    )

    predictions = autoencoder.predict(test_dataset)

    second = autoencoder.fit(
        x=noisy_train_dataset,
        y=train_dataset,
        epochs=2,
        batch_size=128,
        shuffle=True,
        validation_data=(noisy_test_dataset, test_dataset),
    )

    predictions = autoencoder.predict(noisy_test_dataset)
    return {"clean_loss": first.history["loss"][-1],
            "clean_val_loss": first.history["val_loss"][-1],
            "denoise_loss": second.history["loss"][-1],
            "denoise_val_loss": second.history["val_loss"][-1],
            "denoised_test_mae": float(np.mean(np.abs(predictions - test_dataset)))}
