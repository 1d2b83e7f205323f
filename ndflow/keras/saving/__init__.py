"""Keras 3's saving (`tf.keras.models.save_model/load_model/model_from_json`,
`Model.save/save_weights/load_weights`) in Keras' own formats: `.weights.h5` files and
`.keras` archives, readable by Keras 3 and read from Keras 3's files."""

from ndflow.keras.saving import (  # noqa: F401 - importing a module declares its exports
    checkpoint_tracking,
    keras_archive,
    keras_operations,
    saving_api,
    weights_h5,
)
