"""`tf.keras.optimizers`: Keras 3 optimizers (SGD, Adam, RMSprop), their schedules and their
(de)serialization. The public names are declared in the modules (`keras_export`)."""

from ndflow.keras.optimizers import (  # noqa: F401 - importing a module declares its exports
    adam,
    base_optimizer,
    rmsprop,
    schedules,
    serialization,
    sgd,
)
