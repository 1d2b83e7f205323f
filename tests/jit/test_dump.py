"""A compiled cluster as text (ndflow/jit/dump.py, ndflow/jit/compiler_ir.py).

`XLA_FLAGS=--xla_dump_to=DIR`: every cluster compiled writes its graph specialized to the
signature (GraphDef text that parses back, static shapes) and the function and fused kernels
it became (Python source that compiles); an unwritable directory warns once and the compiled
function still runs. `experimental_get_compiler_ir`: the same stages for a jit_compile=True
function and a signature, without running it, the serialized stages their bytes, and
TensorFlow's errors (not jit_compile, an unknown stage, a shape not static)."""

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
    assert "def run(" in source and "# -- fused kernel 0: " in source


def test_an_unwritable_directory_warns_once_and_compiles(dump_to, tmp_path, capfd):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    dump_to(blocker / "dumps")
    f = _step()
    for n in (2, 3):
        assert f(tf.constant(np.ones((n, 4), np.float32))).shape == (n,)
    err = capfd.readouterr().err
    assert err.count("cannot write the compiled clusters there") == 1


# -- tf.function(jit_compile=True).experimental_get_compiler_ir ------------------------------

def test_compiler_ir_stages_without_running_the_function():
    v = tf.Variable(np.ones(6, np.float32))

    @tf.function(jit_compile=True)
    def f(x):
        v.assign_add(tf.ones(6))
        return tf.reduce_sum(tf.nn.relu(x * 2.0 + 1.0), axis=1)

    ir = f.experimental_get_compiler_ir(tf.TensorSpec([4, 6], tf.float32))
    hlo = ir(stage="hlo")
    # a module per cluster (the variable's update stays outside them), each GraphDef text
    modules = ["# ndflow cluster " + m for m in hlo.split("# ndflow cluster ")[1:]]
    (main,) = [m for m in modules if "compiled for float32[4, 6]" in m.splitlines()[0]]
    gd = text_format.Parse(main, graph_pb2.GraphDef())
    assert {"Mul", "AddV2", "Relu", "Sum"} <= {n.op for n in gd.node}
    optimized = ir(stage="optimized_hlo")
    compile(optimized, "optimized", "exec")
    assert "def run(" in optimized and "# -- fused kernel 0: " in optimized
    graph = ir(stage="optimized_hlo_dot")
    assert graph.startswith('digraph "') and "subgraph cluster_0" in graph
    assert ir(stage="hlo_serialized") == hlo.encode()
    assert ir(stage="optimized_hlo_serialized") == optimized.encode()
    np.testing.assert_array_equal(v.numpy(), np.ones(6))   # nothing ran


def test_compiler_ir_errors_are_tensorflows():
    @tf.function
    def plain(x):
        return x + 1.0

    with pytest.raises(ValueError, match="Compiler IR can only be returned for functions "
                                         "marked with 'jit_compile=True'"):
        plain.experimental_get_compiler_ir(tf.ones([2]))

    @tf.function(jit_compile=True)
    def f(x):
        return tf.nn.relu(x) * 3.0

    with pytest.raises(ValueError, match="Invalid stage selected: 'hlo_text'. Valid values "
                                         "are: 'hlo', 'hlo_serialized', 'optimized_hlo'"):
        f.experimental_get_compiler_ir(tf.ones([2]))(stage="hlo_text")
    with pytest.raises(ValueError, match=r"Only support static input shape but got inputs = "
                                         r"\[<tf.Tensor 'x:0' shape=\(None, 3\)"):
        f.experimental_get_compiler_ir(tf.TensorSpec([None, 3], tf.float32))()
