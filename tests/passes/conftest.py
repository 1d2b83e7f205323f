"""Fixtures shared by the pass tests."""

from __future__ import annotations

import pytest

from ndflow.kernels import momentum_numba


@pytest.fixture(params=["numba", "aten"])
def kernel_path(request, monkeypatch):
    """Runs a test on both paths of the momentum kernels: numba's one pass, and ATen's ops."""
    if request.param == "aten":
        monkeypatch.setattr(momentum_numba, "applies", lambda var: False)
    elif momentum_numba._callback() is None:
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    return request.param
