"""TF_CPP_VMODULE turns on the runtime's verbose lines per module, as in TensorFlow."""

import re

import ndflow as tf


def _compile_a_function():
    @tf.function
    def f(x):
        return tf.nn.relu(x * 2.0 + 1.0)

    return f(tf.ones([2])).numpy()


def test_vmodule_plan_and_pipeline_lines(monkeypatch, capfd):
    monkeypatch.setenv("TF_CPP_VMODULE", "plan=1,pipeline=1")
    _compile_a_function()
    err = capfd.readouterr().err
    assert re.search(r"\] Compiled plan: \d+ kernels, 1 feeds, 1 fetches", err)
    assert re.search(r"\] Graph pass prune: (\d+) -> \1 nodes", err)


def test_quiet_by_default(monkeypatch, capfd):
    monkeypatch.delenv("TF_CPP_VMODULE", raising=False)
    monkeypatch.delenv("TF_CPP_MIN_VLOG_LEVEL", raising=False)
    monkeypatch.delenv("TF_CPP_MAX_VLOG_LEVEL", raising=False)
    _compile_a_function()
    assert "Compiled plan" not in capfd.readouterr().err
