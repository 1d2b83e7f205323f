"""The container's TF32 / cuDNN switches reach ATen's backends (ndflow/runtime/math_modes.py).

Without a GPU the GPU-only switches are checked through the settings they make: ATen's
per-backend values (`torch.backends.*.fp32_precision`, `cudnn.benchmark`, ...) after applying.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import config
from ndflow.runtime import math_modes
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext

SWITCHES = ["TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32", "TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32",
            "TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32", "TF_DISABLE_CUBLAS_TENSOR_OP_MATH",
            "TF_DISABLE_CUDNN_TENSOR_OP_MATH", "TF_CUDNN_USE_AUTOTUNE",
            "CUDA_DEVICE_MAX_CONNECTIONS", "TF_AUTOTUNE_THRESHOLD", "TF_ENABLE_WINOGRAD_NONFUSED"]


@pytest.fixture(autouse=True)
def clean_switches(monkeypatch):
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    yield
    monkeypatch.undo()
    math_modes.reset_for_test()  # the process's settings from its own environment again


def _settings(monkeypatch, **env) -> dict:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    math_modes.apply()
    return math_modes.aten_settings()


def test_defaults_are_the_containers_full_float32_with_autotuning(monkeypatch):
    s = _settings(monkeypatch)
    assert [s[k] for k in ("cuda.matmul", "mkldnn.matmul", "cudnn.conv", "mkldnn.conv",
                           "cudnn.rnn")] == ["ieee"] * 5
    assert s["cudnn.benchmark"] is True
    assert s["fp16_reduced_precision_reduction"] is True
    assert s["bf16_reduced_precision_reduction"] is True
    assert tf.config.experimental.tensor_float_32_execution_enabled() is False


def test_cublas_switch_allows_tf32_in_matmuls_only(monkeypatch):
    s = _settings(monkeypatch, TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32="1")
    assert (s["cuda.matmul"], s["mkldnn.matmul"]) == ("tf32", "tf32")
    assert (s["cudnn.conv"], s["mkldnn.conv"], s["cudnn.rnn"]) == ("ieee", "ieee", "ieee")
    assert math_modes.applied().matmul_tf32 is True


def test_cudnn_switches_allow_tf32_in_convolutions_and_rnns(monkeypatch):
    s = _settings(monkeypatch, TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32="true")
    assert (s["cudnn.conv"], s["mkldnn.conv"], s["cudnn.rnn"]) == ("tf32", "tf32", "ieee")
    assert s["cuda.matmul"] == "ieee"
    s = _settings(monkeypatch, TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32="1")
    assert s["cudnn.rnn"] == "tf32"


def test_disable_switches_win(monkeypatch):
    s = _settings(monkeypatch, TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32="1",
                  TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32="1",
                  TF_DISABLE_CUBLAS_TENSOR_OP_MATH="1", TF_DISABLE_CUDNN_TENSOR_OP_MATH="1")
    assert (s["cuda.matmul"], s["mkldnn.matmul"], s["cudnn.conv"]) == ("ieee", "ieee", "ieee")
    assert s["fp16_reduced_precision_reduction"] is False
    assert s["bf16_reduced_precision_reduction"] is False


def test_autotune_switch_is_cudnn_benchmark_mode(monkeypatch):
    assert _settings(monkeypatch, TF_CUDNN_USE_AUTOTUNE="0")["cudnn.benchmark"] is False
    assert _settings(monkeypatch, TF_CUDNN_USE_AUTOTUNE="1")["cudnn.benchmark"] is True


def test_explicit_tf32_call_wins_over_the_enable_switches(monkeypatch):
    monkeypatch.setenv("TF_DISABLE_CUDNN_TENSOR_OP_MATH", "1")
    tf.config.experimental.enable_tensor_float_32_execution(True)
    s = math_modes.aten_settings()
    assert (s["cuda.matmul"], s["cudnn.rnn"], s["cudnn.conv"]) == ("tf32", "tf32", "ieee")
    assert tf.config.experimental.tensor_float_32_execution_enabled() is True
    monkeypatch.setenv("TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32", "1")
    tf.config.experimental.enable_tensor_float_32_execution(False)
    assert math_modes.aten_settings()["cuda.matmul"] == "ieee"
    assert tf.config.experimental.tensor_float_32_execution_enabled() is False


@pytest.mark.parametrize("name,value,match", [
    ("TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32", "yes", "into bool"),
    ("TF_DISABLE_CUDNN_TENSOR_OP_MATH", "2", "into bool"),
    ("TF_CUDNN_USE_AUTOTUNE", "on", "into bool"),
    ("CUDA_DEVICE_MAX_CONNECTIONS", "eight", "into int"),
    ("CUDA_DEVICE_MAX_CONNECTIONS", "0", "at least 1"),
    ("CUDA_DEVICE_MAX_CONNECTIONS", "33", "at most 32"),
])
def test_malformed_switch_is_a_value_error_naming_it(monkeypatch, name, value, match):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=rf"{name}.*{match}|{match}.*{name}"):
        math_modes.apply()


def test_validated_only_switches_parse_as_tensorflow(monkeypatch):
    monkeypatch.setenv("TF_AUTOTUNE_THRESHOLD", "-3")
    monkeypatch.setenv("TF_ENABLE_WINOGRAD_NONFUSED", "0")
    assert config.autotune_threshold() == 1  # TF raises it to at least 1
    assert config.get(config.TF_ENABLE_WINOGRAD_NONFUSED) is False
    assert {"TF_AUTOTUNE_THRESHOLD", "TF_ENABLE_WINOGRAD_NONFUSED"} == set(config.PARSED_ONLY)
    monkeypatch.setenv("TF_AUTOTUNE_THRESHOLD", "x")
    with pytest.raises(ValueError, match="TF_AUTOTUNE_THRESHOLD"):
        config.snapshot()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU would run the matmul in TF32")
def test_cpu_float32_results_do_not_change_without_tf32_units(monkeypatch):
    """oneDNN's tf32 mode on a CPU without TF32 units computes in full float32."""
    g = tf.Graph()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 48, 48)).astype(np.float32)
    with g.as_default():
        y = tf.matmul(tf.constant(a), tf.constant(b))
    _settings(monkeypatch)
    full = Plan(g, [], [y], [], RuntimeContext()).run([])[0].numpy()
    _settings(monkeypatch, TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32="1")
    tf32 = Plan(g, [], [y], [], RuntimeContext()).run([])[0].numpy()
    np.testing.assert_allclose(full, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(full, tf32)


@pytest.mark.slow  # a fresh interpreter: CI's slow pass runs it
def test_applied_once_at_first_use_from_the_environment():
    probe = ("import ndflow as tf; from ndflow.runtime import math_modes as m; "
             "before = m.applied(); tf.constant(1.0) + 1.0; "
             "print(before, m.applied().matmul_tf32, m.aten_settings()['cuda.matmul'])")
    env = {"TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["None", "True", "tf32"]


@pytest.mark.skipif(not torch.cuda.is_available()
                    or torch.cuda.get_device_capability() < (8, 0),
                    reason="TF32 needs an NVIDIA GPU of compute capability 8.0 or newer")
def test_tf32_switch_changes_gpu_matmul_precision(monkeypatch):
    """TensorFlow's own example: 1.0001 rounds to 1.0 in TF32, so the sum of 1024 products
    is 1024.0 with TF32 and about 1024.1 without (1024 float32 1.0001s, 1024.1025, summed in
    float32 by cuBLAS: within 0.05 of it)."""
    def product() -> float:
        with tf.device("/GPU:0"):
            x = tf.fill((1024, 1024), 1.0001)
            return float(tf.matmul(x, tf.fill((1024, 1024), 1.0))[0, 0].numpy())
    _settings(monkeypatch)
    assert product() == pytest.approx(1024 * float(np.float32(1.0001)), abs=0.05)
    _settings(monkeypatch, TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32="1")
    assert product() == 1024.0
