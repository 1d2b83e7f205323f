"""`tf.keras.datasets`: mnist, fashion_mnist, cifar10 and cifar100 read from their original
archives in Keras' cache (`$KERAS_HOME/datasets`, default `~/.keras/datasets`)."""

from ndflow.keras.datasets import cifar10, cifar100, fashion_mnist, mnist  # noqa: F401
