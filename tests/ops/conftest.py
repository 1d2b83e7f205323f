"""One driver for the op case tables, and the convolution tuner's fixtures.

A test module that defines `CASES`, a list of `OpCase`s (tests/ops/harness.py), gets four
tests parametrized over its cases: test_forward, test_shape_inference, test_gradient and
test_pipeline (`pytest tests/ops/test_nn_ops.py::test_gradient[relu]`). `GRADIENT_CASES`,
when a module defines it, narrows the gradient checks (by default: the cases whose `grad` is
set). A new op's test is one entry in its family's table.
"""

from __future__ import annotations

import pytest

from ndflow.core import core_monitor
from ndflow.kernels import autotune
from ndflow.kernels.autotune import NCHW
from tests.ops.harness import (
    OpCase,
    check_forward,
    check_gradients,
    check_pipeline,
    check_shapes,
)

CHECKS = {"test_forward": (check_forward, "CASES"),
          "test_shape_inference": (check_shapes, "CASES"),
          "test_gradient": (check_gradients, "GRADIENT_CASES"),
          "test_pipeline": (check_pipeline, "CASES")}


def _case_table(module) -> list | None:
    cases = getattr(module, "CASES", None)
    if isinstance(cases, list) and cases and all(isinstance(c, OpCase) for c in cases):
        return cases
    return None


def _driver(name, check):
    def test(case):
        check(case)
    test.__name__ = test.__qualname__ = name
    test.op_case_table = CHECKS[name][1]
    return test


def pytest_collectstart(collector):
    # Before the module's names are collected: give a module with a case table the drivers.
    if not isinstance(collector, pytest.Module):
        return
    try:
        module = collector.obj
    except Exception:  # noqa: BLE001 - collection reports the import error itself
        return
    if _case_table(module) is not None:
        for name, (check, _) in CHECKS.items():
            setattr(module, name, _driver(name, check))


def pytest_generate_tests(metafunc):
    table = getattr(metafunc.function, "op_case_table", None)
    if table is None:
        return
    cases = _case_table(metafunc.module)
    if table == "GRADIENT_CASES":
        cases = getattr(metafunc.module, table, [c for c in cases if c.grad])
    ids = [c.id for c in cases]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"{metafunc.module.__name__}: case ids used twice: {duplicated}")
    metafunc.parametrize("case", cases, ids=ids)


@pytest.fixture
def ready_to_time(monkeypatch):
    """The core monitor has seen the machine's load (else nothing is timed: see
    test_conv_autotune.py), and leaves every thread (a busy machine would cap the count
    between a convolution and its gradients, whose choices are then kept under two
    counts)."""
    monkeypatch.setattr(core_monitor, "ready_to_time", lambda threads: True)
    monkeypatch.setattr(core_monitor, "decide", lambda current, others, cores: None)
    monkeypatch.setattr(core_monitor.STATE, "cap", None)


@pytest.fixture
def tuner(monkeypatch):
    """Tunes every convolution and makes the algorithm named by `tuner.algorithm` the fastest
    (when it is a candidate; else all tie and the default stays)."""
    class Force:
        algorithm = NCHW
    monkeypatch.setattr(autotune, "MIN_FLOPS", 0)

    def timed(run, algorithm, credit=None):
        return (0.001 if algorithm == Force.algorithm else 0.002), run(algorithm)
    monkeypatch.setattr(autotune, "_timed", timed)
    monkeypatch.delenv("TF_CUDNN_USE_AUTOTUNE", raising=False)
    autotune.clear()
    yield Force
    autotune.clear()
