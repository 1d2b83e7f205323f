"""Fixtures shared by the pass tests."""

from __future__ import annotations

import pytest

import ndflow as tf
from ndflow.kernels import momentum_numba


@pytest.fixture(params=["numba", "aten"])
def kernel_path(request, monkeypatch):
    """Runs a test on both paths of the momentum kernels: numba's one pass, and ATen's ops."""
    if request.param == "aten":
        monkeypatch.setattr(momentum_numba, "applies", lambda var: False)
    elif momentum_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    return request.param


@pytest.fixture
def ungrouped():
    """Switches the grouping of optimizer updates off (the rest of the remapper unchanged):
    its pass by name; on again after the test."""
    def off():
        tf.config.optimizer.set_experimental_options({"grouped_updates": False})
    yield off
    tf.config.optimizer.set_experimental_options({"grouped_updates": True})
