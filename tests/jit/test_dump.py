"""`XLA_FLAGS=--xla_dump_to=DIR` (ndflow/jit/dump.py): every cluster compiled writes its
graph specialized to the signature (GraphDef text that parses back, static shapes) and the
function and fused kernels it became (Python source that compiles); an unwritable directory
warns once and the compiled function still runs."""

from __future__ import annotations

import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import ndflow as tf
from ndflow.jit import flags as flags_module


@pytest.fixture
def dump_to(monkeypatch):
    def set_dir(path):
        monkeypatch.setenv("XLA_FLAGS", f"--xla_dump_to={path}")
        flags_module.reset_xla_flags_for_test()
    yield set_dir
    monkeypatch.delenv("XLA_FLAGS")
    flags_module.reset_xla_flags_for_test()


def _step():
    @tf.function(jit_compile=True)
    def f(x):
        h = tf.nn.relu(x) * 2.0 + 1.0
        return tf.reduce_sum(tf.tanh(h - tf.reduce_mean(h, axis=1, keepdims=True)), axis=1)
    return f


def test_each_compiled_cluster_is_dumped(dump_to, tmp_path):
    dump_to(tmp_path / "dumps")
    f = _step()
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    got = f(tf.constant(x)).numpy()
    h = np.maximum(x, 0) * 2 + 1
    np.testing.assert_allclose(got, np.tanh(h - h.mean(1, keepdims=True)).sum(1),
                               rtol=1e-5, atol=1e-6)
    f(tf.constant(np.ones((3, 5), np.float32)))          # a second signature: a second module
    names = sorted(os.listdir(tmp_path / "dumps"))
    assert len(names) == 4 and all(n.startswith("module_000") for n in names)
    before = [n for n in names if n.endswith(".before_optimizations.txt")]
    kernels = [n for n in names if n.endswith(".ndflow_kernels.py")]
    assert len(before) == len(kernels) == 2
    text = (tmp_path / "dumps" / before[0]).read_text()
    assert text.startswith("# ndflow cluster ") and "float32[4, 6]" in text.splitlines()[0]
    gd = text_format.Parse(text, graph_pb2.GraphDef())    # GraphDef text ('#' lines: comments)
    assert {"Relu", "Tanh", "Sum"} <= {n.op for n in gd.node}
    source = (tmp_path / "dumps" / kernels[0]).read_text()
    compile(source, kernels[0], "exec")                  # the dump is valid Python
    assert "def run(" in source and "# -- fused kernel 0: fusion(" in source


def test_an_unwritable_directory_warns_once_and_compiles(dump_to, tmp_path, capfd):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    dump_to(blocker / "dumps")
    f = _step()
    for n in (2, 3):
        assert f(tf.constant(np.ones((n, 4), np.float32))).shape == (n,)
    err = capfd.readouterr().err
    assert err.count("cannot write the compiled clusters there") == 1
