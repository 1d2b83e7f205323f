"""`tf.keras.datasets`: mnist, fashion_mnist, cifar10, cifar100, imdb, reuters, boston_housing
and california_housing read from their original
archives in Keras' cache (`$KERAS_HOME/datasets`, default `~/.keras/datasets`)."""

from ndflow.keras.datasets import (  # noqa: F401
    boston_housing,
    california_housing,
    cifar10,
    cifar100,
    fashion_mnist,
    imdb,
    mnist,
    reuters,
)
