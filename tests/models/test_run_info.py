"""The MNIST examples' start line: the device and the precision the run really trains in."""

import pytest

from ndflow.core import optimizer_options
from ndflow.core.build_info import cpu_model_and_flags
from ndflow.models.image.mnist import run_info
from ndflow.passes.amp import device as amp_device


@pytest.mark.parametrize("gpu,bf16,want", [
    (None, False, "float32: mixed precision was asked for, but the rewrite is inactive here "
                  "(there is no GPU, and this CPU has no bf16 units"),
    (None, True, "mixed precision: the graph rewrite runs the allowed ops in bfloat16 on the CPU"),
    (amp_device.GpuProperties((6, 1)), False, "(the GPU's compute capability is below 7.0"),
    (amp_device.GpuProperties((8, 0)), False, "in float16 on the GPU"),
    # a real GPU: the examples' unplaced ops run on the CPU, which the float16 rewrite skips
    (amp_device.GpuProperties((8, 0), virtual=False), False,
     "rewrite is inactive here (it converts the ops on the GPU, these run on the CPU"),
    (amp_device.GpuProperties((8, 0), virtual=False), True, "in bfloat16 on the CPU"),
])
def test_mixed_precision_says_what_really_happens(monkeypatch, gpu, bf16, want):
    monkeypatch.setattr(amp_device, "detect_gpu", lambda: gpu)
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: bf16)
    assert want in run_info.precision_description("float32", True)
    assert run_info.precision_description("float32", False) == "float32; mixed precision off"


@pytest.fixture
def no_explicit_options():
    """An explicit tf.config option wins over the environment: start from none (another
    test may have left one set) and put them back afterwards."""
    saved = (dict(optimizer_options._options), optimizer_options._jit,
             optimizer_options._graph_rewrite_enabled,
             optimizer_options._non_mixed_precision_session_created)
    optimizer_options.reset()
    yield
    optimizer_options.reset()
    optimizer_options._options.update(saved[0])
    (optimizer_options._jit, optimizer_options._graph_rewrite_enabled,
     optimizer_options._non_mixed_precision_session_created) = saved[1:]
    optimizer_options._bump()


def test_mixed_precision_request_is_read_from_the_environment(monkeypatch, no_explicit_options):
    monkeypatch.setattr(amp_device, "detect_gpu", lambda: None)
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: False)
    monkeypatch.delenv("TF_ENABLE_AUTO_MIXED_PRECISION", raising=False)
    assert run_info.precision_description("float32").endswith("mixed precision off")
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    assert "rewrite is inactive" in run_info.precision_description("float32")


def test_the_line_names_the_cpu_and_its_features(monkeypatch):
    monkeypatch.setattr(run_info.devices, "gpu_count", lambda: 0)
    monkeypatch.setattr(amp_device, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: False)
    line = run_info.run_line("float32", False)
    assert line.startswith(f"Training on CPU: {cpu_model_and_flags()[0]} (")
    assert "avx2, fma; no bf16 units) in float32; mixed precision off." in line
