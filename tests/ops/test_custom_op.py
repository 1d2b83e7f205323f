"""Custom ops registered from Python (`ndflow.custom_op.register_op`): eager, tf.function,
Sessions, GraphDef round trips, the mixed-precision lists, gradients against finite
differences, the output checks, and the REGISTER_OP text parser."""

from __future__ import annotations

import ctypes.util
from pathlib import Path

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow import custom_op
from ndflow.core import dtypes
from ndflow.passes.amp.auto_mixed_precision import auto_mixed_precision
from ndflow.passes.amp.lists import Mode
from ndflow.passes.pass_config import PassConfig
from ndflow.passes.pass_context import PassContext

ZERO_OUT_SPEC = '''
    // TensorFlow's "Create an op" guide, copied as is
    REGISTER_OP("NdflowTestZeroOut")
        .Attr("T: {half, float, int32}")
        .Input("to_zero: T")
        .Output("zeroed: T")
        .SetShapeFn(::tensorflow::shape_inference::UnchangedShape)
        .Doc(R"doc(Zeroes all but the first element.)doc");
'''


@custom_op.register_op(ZERO_OUT_SPEC)
def zero_out(to_zero):
    out = torch.zeros_like(to_zero)
    out.view(-1)[:1] = to_zero.reshape(-1)[:1]
    return out


def _cube_grad(op, grad):
    x = op.inputs[0]
    return [grad * 3.0 * op.get_attr("scale") * x * x]


# y = scale * x**3, its gradient in ndflow ops
scaled_cube = custom_op.register_op(
    'REGISTER_OP("NdflowTestScaledCube").Input("x: T").Output("y: T")'
    '.Attr("T: {float, double}").Attr("scale: float = 1.0")',
    lambda x, scale: scale * x ** 3, shape_fn=custom_op.unchanged_shape, gradient=_cube_grad)

# a list input, a list output and a second output; attrs reach the kernel by name
split_sum = custom_op.register_op(
    'REGISTER_OP("NdflowTestSplitSum").Input("xs: N * T").Output("parts: K * T")'
    '.Output("total: T").Attr("T: {float}").Attr("N: int >= 1").Attr("K: int >= 1")',
    lambda xs, K: (list(torch.stack(xs).sum(0).chunk(K)), torch.stack(xs).sum()),
    shape_fn=lambda ctx: [tf.TensorShape(None)] * ctx.attrs["K"] + [tf.TensorShape([])])


def _wrong(kind):
    def kern(x):
        return x.to(torch.float64) if kind == "dtype" else x.reshape(-1)[:1]
    return kern


wrong_dtype = custom_op.register_op(
    'REGISTER_OP("NdflowTestWrongDtype").Input("x: float").Output("y: float")',
    _wrong("dtype"), shape_fn=custom_op.unchanged_shape)
wrong_shape = custom_op.register_op(
    'REGISTER_OP("NdflowTestWrongShape").Input("x: float").Output("y: float")',
    _wrong("shape"), shape_fn=custom_op.unchanged_shape)


def test_eager():
    got = zero_out(tf.constant([[5, 2], [3, 4]]))
    assert got.dtype is tf.int32 and got.shape == (2, 2)
    np.testing.assert_array_equal(got.numpy(), [[5, 0], [0, 0]])
    np.testing.assert_array_equal(zero_out([7.0, 8.0]).numpy(), [7.0, 0.0])
    assert zero_out.__name__ == "ndflow_test_zero_out"
    assert "first element" in zero_out.__doc__


def test_tf_function_and_static_shape():
    @tf.function
    def f(x):
        y = zero_out(x)
        assert y.shape.as_list() == [None, 3]   # UnchangedShape
        return y + 1

    x = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    spec = tf.TensorSpec([None, 3], tf.float32)
    np.testing.assert_array_equal(f.get_concrete_function(spec)(tf.constant(x)).numpy(),
                                  [[2, 1, 1], [1, 1, 1]])


def test_session_graph_def_round_trip():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None], name="x")
        zero_out(x, name="zeroed")
    gd = g.as_graph_def()
    node = next(n for n in gd.node if n.name == "zeroed")
    assert node.op == "NdflowTestZeroOut" and node.attr["T"].type == 1   # DT_FLOAT
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=g2) as sess:
        out = sess.run("zeroed:0", {"x:0": [3.0, 4.0, 5.0]})
    np.testing.assert_array_equal(out, [3.0, 0.0, 0.0])


def test_list_and_multiple_outputs_with_attrs():
    parts, total = split_sum([tf.ones([4]), tf.ones([4])], K=2)
    assert [p.numpy().tolist() for p in parts] == [[2.0, 2.0], [2.0, 2.0]]
    assert float(total) == 8.0
    g = tf.Graph()
    with g.as_default():
        out = split_sum([tf.ones([4])] * 3, K=4)
        with tf.compat.v1.Session() as sess:
            assert sess.run(out.total) == 12.0 and len(out.parts) == 4


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d).sum() - f(x - d).sum()) / (2 * eps)
    return g


def test_gradient_matches_finite_differences():
    x0 = np.array([[0.5, -1.2], [2.0, 0.3]])
    expect = _numeric_grad(lambda v: scaled_cube(tf.constant(v), scale=0.7).numpy(), x0)
    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(scaled_cube(x, scale=0.7))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expect, rtol=1e-6)
    g = tf.Graph()
    with g.as_default():
        xp = tf.compat.v1.placeholder(tf.float64, [2, 2])
        dx, = tf.gradients(scaled_cube(xp, scale=0.7), [xp])
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(dx, {xp: x0}), expect, rtol=1e-6)


def test_op_without_gradient_raises_lookup_error():
    x = tf.Variable([1.0])
    with tf.GradientTape() as tape:
        y = zero_out(x)
    with pytest.raises(LookupError, match="NdflowTestZeroOut"):
        tape.gradient(y, x)


@pytest.mark.parametrize("op, message", [
    (wrong_dtype, r"NdflowTestWrongDtype \(node .*\): the kernel returned output 0 'y' with "
                  r"dtype double and shape \[3\], but the op declares dtype float and shape "
                  r"\[3\]"),
    (wrong_shape, r"NdflowTestWrongShape .*output 0 'y' with dtype float and shape \[1\], "
                  r"but the op declares dtype float and shape \[3\]")])
def test_wrong_kernel_output_is_invalid_argument(op, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        op(tf.constant([1.0, 2.0, 3.0]))
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None])
        y = op(x)
        with tf.compat.v1.Session() as sess, \
                pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(y, {x: [1.0, 2.0, 3.0]})   # static shape [?]: the rule re-runs


def test_kernel_exceptions_become_tf_errors():
    boom = custom_op.register_op(
        'REGISTER_OP("NdflowTestBoom").Input("x: float").Output("y: float")',
        {"cpu": lambda x: torch.ops.aten.mm(x, x)})   # 1-D: ATen raises RuntimeError
    assert set(boom.kernels) == {"CPU"}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"NdflowTestBoom \(node .*\): the kernel raised RuntimeError"):
        boom(tf.constant([1.0]))


def _amp_graph(middle):
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.full((8, 8), 0.125, np.float32), name="input")
        a1 = tf.matmul(x, x, name="a1")
        m = middle(a1, name="m")
        tf.identity(tf.matmul(m, m, name="a2"), name="fetch")
    return g


def _run_amp(g):
    cfg = PassConfig(auto_mixed_precision_modes=(Mode.CUDA,),
                     auto_mixed_precision_gpu={"architecture": "7", "cuda": 9010})
    return auto_mixed_precision(g, PassContext(fetches=["fetch:0"], feeds=[], config=cfg))


ENV = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"


def test_amp_leaves_an_unlisted_custom_op_in_float32_with_casts(monkeypatch):
    for name in ("ALLOWLIST", "INFERLIST", "CLEARLIST", "DENYLIST"):
        monkeypatch.delenv(ENV + name + "_ADD", raising=False)
    out = _run_amp(_amp_graph(zero_out))
    t = {n: out.get_operation_by_name(n).attrs["T"] for n in ("a1", "m", "a2")}
    assert t == {"a1": dtypes.float16, "m": dtypes.float32, "a2": dtypes.float16}
    into_m = out.get_operation_by_name("m").inputs[0].op
    assert into_m.type == "Cast" and into_m.attrs["DstT"] is dtypes.float32


@pytest.mark.parametrize("list_name", ["ALLOWLIST", "CLEARLIST", "INFERLIST"])
def test_amp_env_list_places_the_custom_op(monkeypatch, list_name):
    monkeypatch.setenv(ENV + list_name + "_ADD", "NdflowTestZeroOut")
    out = _run_amp(_amp_graph(zero_out))
    m = out.get_operation_by_name("m")
    assert m.attrs["T"] is dtypes.float16 and m.inputs[0].op.name == "a1"
    with tf.compat.v1.Session(graph=out) as sess:   # the kernel runs in half precision
        assert sess.run("m:0").dtype == np.float16


def test_amp_list_remove_undoes_add(monkeypatch):
    monkeypatch.setenv(ENV + "ALLOWLIST_ADD", "NdflowTestZeroOut")
    monkeypatch.setenv(ENV + "ALLOWLIST_REMOVE", "NdflowTestZeroOut")
    out = _run_amp(_amp_graph(zero_out))
    assert out.get_operation_by_name("m").attrs["T"] is dtypes.float32


def test_amp_needs_half_in_the_spec(monkeypatch):
    monkeypatch.setenv(ENV + "ALLOWLIST_ADD", "NdflowTestScaledCube")   # T: {float, double}
    out = _run_amp(_amp_graph(lambda x, name: scaled_cube(x, name=name)))
    assert out.get_operation_by_name("m").attrs["T"] is dtypes.float32


def test_registration_errors():
    with pytest.raises(tf.errors.AlreadyExistsError, match="NdflowTestZeroOut"):
        custom_op.register_op(ZERO_OUT_SPEC, lambda x: x)
    with pytest.raises(ValueError, match=r"unsupported builder method \.Frobnicate"):
        custom_op.register_op('REGISTER_OP("NdflowTestX").Frobnicate("a")', lambda x: x)
    with pytest.raises(ValueError, match="must be CamelCase"):
        custom_op.register_op('REGISTER_OP("bad_name").Input("x: float")', lambda x: x)
    with pytest.raises(ValueError, match="one REGISTER_OP"):
        custom_op.register_op('REGISTER_OP("A"); REGISTER_OP("B");', lambda x: x)
    with pytest.raises(TypeError, match="must be callable"):
        custom_op.register_op('REGISTER_OP("NdflowTestY").Input("x: float")', {"CPU": 3})
    with pytest.raises(ValueError, match="per device type"):
        custom_op.register_op('REGISTER_OP("NdflowTestZ").Input("x: float")', {"TPU": abs})


def test_parser_reads_tensorflow_declarations():
    specs = custom_op.parse_register_ops('''
        REGISTER_OP("Foo")  /* a comment */
            .Input("a: " "float")     // adjacent literals
            .Output("b: float")
            .SetIsStateful()
            .SetShapeFn([](InferenceContext* c) { return OkStatus(); });
        REGISTER_OP("Bar").Attr("s: string = 'x;y'").SetShapeFn(shape_inference::ScalarShape);
    ''')
    assert [s.name for s in specs] == ["Foo", "Bar"]
    assert specs[0].inputs == ["a: float"] and specs[0].stateful and specs[0].shape_fn is None
    assert specs[1].attrs == ["s: string = 'x;y'"]
    assert specs[1].shape_fn is custom_op.scalar_shape


@pytest.mark.parametrize("name, snake", [
    ("ZeroOut", "zero_out"), ("Conv2D", "conv2d"), ("CTCLoss", "ctc_loss"),
    ("BiasAddV1", "bias_add_v1"), ("LRN", "lrn"), ("MatMul", "mat_mul")])
def test_snake_case_as_tensorflow(name, snake):
    assert custom_op.snake_case(name) == snake


def test_load_op_library_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError,
                       match="cannot open shared object file: No such file or directory"):
        tf.load_op_library(str(tmp_path / "missing.so"))
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"x")
    with pytest.raises(tf.errors.NotFoundError, match="bad.so"):
        tf.load_op_library(str(bad))
    libm = ctypes.util.find_library("m")
    with pytest.raises(tf.errors.NotFoundError, match="not an ndflow op library"):
        tf.load_op_library(libm)
    assert tf.compat.v1.load_op_library is tf.load_op_library


def test_profiler_records_the_custom_op(tmp_path):
    f = tf.function(lambda x: zero_out(x) * 2.0)
    x = tf.constant([1.0, 2.0])
    f(x)
    tf.profiler.experimental.start(str(tmp_path))
    f(x)
    tf.profiler.experimental.stop()
    [run] = list((tmp_path / "plugins" / "profile").iterdir())
    assert "NdflowTestZeroOut" in (run / "op_types.csv").read_text()


def test_the_c_plus_plus_examples_declarations_parse():
    """examples/custom_op/custom_ops.cpp's REGISTER_OP text (the library itself is built in the
    slow pass, tests/ops/test_custom_op_library.py)."""
    source = (Path(__file__).resolve().parents[2] / "examples" / "custom_op" /
              "custom_ops.cpp").read_text()
    specs = custom_op.parse_register_ops(source.split("NDFLOW_OP_LIBRARY(", 1)[1])
    assert [(s.name, s.inputs, s.outputs) for s in specs] == [
        ("ZeroOut", ["to_zero: T"], ["zeroed: T"]),
        ("FusedBiasRelu", ["x: T", "bias: T"], ["y: T"]),
        ("FusedBiasReluGrad", ["grad: T", "y: T"], ["dx: T"])]
    assert all(s.shape_fn is custom_op.unchanged_shape for s in specs)


def test_builtin_kernel_gets_no_attrs():
    relu = custom_op.register_op(
        'REGISTER_OP("NdflowTestTorchRelu").Input("x: T").Output("y: T").Attr("T: {float}")',
        torch.relu, shape_fn=custom_op.unchanged_shape)
    np.testing.assert_array_equal(relu([-1.0, 2.0]).numpy(), [0.0, 2.0])


def test_op_function_arguments_as_python_checks_them():
    assert str(__import__("inspect").signature(scaled_cube)) == "(x, *, scale=1.0, name=None)"
    np.testing.assert_allclose(scaled_cube(x=tf.constant([2.0]), scale=2.0).numpy(), [16.0])
    with pytest.raises(TypeError, match=r"ndflow_test_scaled_cube\(\) got an unexpected keyword "
                                        "argument 'scal'"):
        scaled_cube([1.0], scal=2.0)
    with pytest.raises(TypeError, match="takes 1 positional arguments but 2 were given"):
        scaled_cube([1.0], 2.0)
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        scaled_cube(scale=2.0)
    with pytest.raises(TypeError, match="missing required argument 'K'"):
        split_sum([tf.ones([2])])
