"""`tf.keras.optimizers`: Keras 3 optimizers (SGD, Adam, RMSprop, AdamW, Adadelta, Adafactor,
Adagrad, Adamax, Ftrl, Lamb, Lion, Muon, Nadam, ScheduleFreeAdamW, MultiOptimizer), their
schedules and their (de)serialization. The public names are declared in the modules
(`keras_export`)."""

from ndflow.keras.optimizers import (  # noqa: F401 - importing a module declares its exports
    adadelta,
    adafactor,
    adagrad,
    adam,
    adamax,
    adamw,
    base_optimizer,
    ftrl,
    lamb,
    legacy_names,
    lion,
    multi_optimizer,
    muon,
    nadam,
    rmsprop,
    schedule_free_adamw,
    schedules,
    serialization,
    sgd,
)
