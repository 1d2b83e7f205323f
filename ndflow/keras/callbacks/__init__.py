"""`tf.keras.callbacks`: Keras 3's callbacks, one per module (this package is the namespace, so
it imports modules only; their classes are exported by `keras_export`)."""

from ndflow.keras.callbacks import (  # noqa: F401 - their exports
    backup_and_restore,
    callback,
    callback_list,
    csv_logger,
    early_stopping,
    history,
    horovod_callbacks,
    lambda_callback,
    learning_rate_scheduler,
    model_checkpoint,
    monitor_callback,
    progbar_logger,
    reduce_lr_on_plateau,
    remote_monitor,
    swap_ema_weights,
    tensorboard,
    terminate_on_nan,
)
