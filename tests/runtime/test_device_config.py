"""tf.config.experimental.set_memory_growth / get_memory_growth as TF 2.21's context records
them (tensorflow/python/eager/context.py): GPUs only, None until set."""

import pytest

import ndflow as tf
from ndflow.core import devices
from ndflow.runtime import device_config

CPU = tf.config.PhysicalDevice("/physical_device:CPU:0", "CPU")
GPU0 = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")


def test_memory_growth_on_the_cpu_is_tensorflows_error():
    # TF 2.21: set_memory_growth(cpu, True/False) -> ValueError("Cannot set memory growth on
    # non-GPU and non-Pluggable devices"); get_memory_growth(cpu) -> KeyError(cpu)
    for enable in (True, False):
        with pytest.raises(ValueError, match="^Cannot set memory growth on non-GPU and "
                                             "non-Pluggable devices$"):
            tf.config.experimental.set_memory_growth(CPU, enable)
    with pytest.raises(KeyError):
        tf.config.experimental.get_memory_growth(CPU)
    # TF 2.21, for a GPU the process does not have: ValueError("Unrecognized device: ...")
    missing = tf.config.PhysicalDevice("/physical_device:GPU:7", "GPU")
    for call in (lambda: tf.config.experimental.set_memory_growth(missing, True),
                 lambda: tf.config.experimental.get_memory_growth(missing)):
        with pytest.raises(ValueError, match=r"^Unrecognized device: PhysicalDevice\(name="
                                             r"'/physical_device:GPU:7', device_type='GPU'\)$"):
            call()


def test_memory_growth_of_a_gpu_is_none_until_set(monkeypatch):
    monkeypatch.setattr(devices, "gpu_count", lambda: 1)
    monkeypatch.setattr(device_config, "_memory_growth", {})
    monkeypatch.setattr(device_config, "_initialized", False)
    assert tf.config.experimental.get_memory_growth(GPU0) is None
    tf.config.experimental.set_memory_growth(GPU0, True)
    assert tf.config.experimental.get_memory_growth(GPU0) is True
    monkeypatch.setattr(device_config, "_initialized", True)
    tf.config.experimental.set_memory_growth(GPU0, True)   # unchanged: no error
    with pytest.raises(RuntimeError, match="Physical devices cannot be modified after being "
                                           "initialized"):
        tf.config.experimental.set_memory_growth(GPU0, False)
