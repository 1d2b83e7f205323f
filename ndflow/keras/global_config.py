"""Keras' process-wide settings, one source of truth for `tf.keras.backend` and
`tf.keras.config` (floatx, epsilon, image_data_format, the fit caps and feature flags).
It imports only ndflow's core, so layers, policies and the trainer can all read it."""

from __future__ import annotations

from ndflow.core import config

SETTINGS = {
    "floatx": "float32",
    "epsilon": 1e-7,
    "image_data_format": "channels_last",
    "traceback_filtering": True,
    "flash_attention": None,    # None: Keras decides per call; True/False forced
    # Keras reads the caps from the environment too, for running scripts quickly
    "max_epochs": config.get(config.KERAS_MAX_EPOCHS),
    "max_steps_per_epoch": config.get(config.KERAS_MAX_STEPS_PER_EPOCH),
}


def floatx() -> str:
    return SETTINGS["floatx"]


def image_data_format() -> str:
    return SETTINGS["image_data_format"]
