"""Keras' process-wide settings, one source of truth for `tf.keras.backend` and
`tf.keras.config` (floatx, epsilon, image_data_format, the fit caps and feature flags).
A module without ndflow imports, so layers, policies and the trainer can all read it."""

from __future__ import annotations

import os

SETTINGS = {
    "floatx": "float32",
    "epsilon": 1e-7,
    "image_data_format": "channels_last",
    "traceback_filtering": True,
    "flash_attention": None,    # None: Keras decides per call; True/False forced
    # Keras reads the caps from the environment too, for running scripts quickly
    "max_epochs": int(os.environ["KERAS_MAX_EPOCHS"]) if os.environ.get("KERAS_MAX_EPOCHS")
    else None,
    "max_steps_per_epoch": int(os.environ["KERAS_MAX_STEPS_PER_EPOCH"])
    if os.environ.get("KERAS_MAX_STEPS_PER_EPOCH") else None,
}


def floatx() -> str:
    return SETTINGS["floatx"]


def image_data_format() -> str:
    return SETTINGS["image_data_format"]
