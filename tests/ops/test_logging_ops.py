"""`tf.print` (StringFormat -> PrintV2): output compared with what TF 2.21 prints for the same
values (recorded in the TF venv), eagerly, in tf.function (every call, program order) and in
Sessions."""

import sys

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph

# (value, what TF 2.21's tf.print writes for it)
CASES = [
    (lambda: tf.constant(np.arange(1, 11)), "[1 2 3 ... 8 9 10]"),
    (lambda: tf.constant([1.5, 2.0, -3.25]), "[1.5 2 -3.25]"),
    (lambda: tf.constant(np.arange(24).reshape(2, 3, 4)),
     "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n"
     "  [20 21 22 23]]]"),
    (lambda: tf.constant(np.arange(30.0).reshape(10, 3) / 7),
     "[[0 0.14285714285714285 0.2857142857142857]\n"
     " [0.42857142857142855 0.5714285714285714 0.7142857142857143]\n"
     " [0.8571428571428571 1 1.1428571428571428]\n ...\n"
     " [3 3.1428571428571428 3.2857142857142856]\n"
     " [3.4285714285714284 3.5714285714285716 3.7142857142857144]\n"
     " [3.8571428571428572 4 4.1428571428571432]]"),
    (lambda: tf.constant(3), "3"),
    (lambda: tf.constant(2.5), "2.5"),
    (lambda: tf.constant([True, False]), "[1 0]"),
    (lambda: tf.constant([1e-7, 1e10, 123456789.0]), "[1e-07 1e+10 123456792]"),
    (lambda: tf.constant([0.1, 0.2], tf.float64), "[0.1 0.2]"),
    (lambda: tf.zeros([0]), "[]"),
    (lambda: tf.constant([np.nan, np.inf, -np.inf]), "[nan inf -inf]"),
    (lambda: tf.constant(np.arange(7)), "[0 1 2 ... 4 5 6]"),
    (lambda: tf.constant(np.arange(6)), "[0 1 2 3 4 5]"),
    (lambda: tf.constant([[1, 2], [3, 4]], tf.int64), "[[1 2]\n [3 4]]"),
    (lambda: tf.constant(1 / 3, tf.float64), "0.33333333333333331"),
    (lambda: tf.constant(np.float32(1 / 3)), "0.333333343"),
    (lambda: tf.constant(np.arange(200).reshape(20, 10)),
     "[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n"
     " [170 171 172 ... 177 178 179]\n [180 181 182 ... 187 188 189]\n"
     " [190 191 192 ... 197 198 199]]"),
    (lambda: tf.constant(np.arange(1000.0) / 3, tf.float32),
     "[0 0.333333343 0.666666687 ... 332.333344 332.666656 333]"),
]


@pytest.mark.parametrize("make,expected", CASES, ids=[e[:20] for _, e in CASES])
def test_eager_values_print_as_tf(make, expected, capsys):
    assert tf.print(make()) is None
    assert capsys.readouterr().err == expected + "\n"


def test_mixed_arguments_sep_end_summarize_as_tf(capsys):
    out = sys.stdout
    tf.print("x:", tf.constant([1, 2]), "y", 3, output_stream=out)
    tf.print("a", "b", sep=",", end="!\n", output_stream=out)
    tf.print(tf.constant(np.arange(10)), summarize=-1, output_stream=out)
    tf.print(tf.constant(np.arange(10)), summarize=2, output_stream=out)
    tf.print([1, tf.constant(2)], {"k": tf.constant([3.0])}, output_stream=out)
    tf.print("{}", tf.constant(5), output_stream=out)
    tf.print(output_stream=out)
    tf.print(tf.constant([1e-5, 5e16]), tf.constant(np.float16(1.5)), tf.constant(2, tf.uint8),
             tf.constant(-3, tf.int8), tf.constant(1.5, tf.bfloat16), output_stream=out)
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == ("x: [1 2] y 3\na,b!\n[0 1 2 3 4 5 6 7 8 9]\n[0 1 ... 8 9]\n"
                            "[1, 2] {'k': [3]}\n{} 5\n\n[1e-05 5e+16] 1.5 2 -3 1.5\n")


def test_tf_function_prints_every_call_in_program_order(capfd):
    @tf.function
    def f(x):
        tf.print("a", x)
        tf.print("b", x * 2)
        return x + 1

    f(tf.constant([1, 2]))
    f(tf.constant([3, 4]))
    assert capfd.readouterr().err == "a [1 2]\nb [2 4]\na [3 4]\nb [6 8]\n"


def test_session_graph_is_tfs_and_runs(capsys):
    g = Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        op = tf.compat.v1.print("v", p, output_stream=sys.stdout)
        assert [(o.type) for o in g.get_operations()] == ["Placeholder", "StringFormat", "PrintV2"]
        fmt = g.get_operation_by_name("StringFormat")
        assert (fmt.get_attr("template"), fmt.get_attr("placeholder"),
                fmt.get_attr("summarize")) == ("v {}", "{}", 3)
        assert (op.get_attr("output_stream"), op.get_attr("end")) == ("stdout", "\n")
        assert op.op_def.is_stateful
        with tf.compat.v1.Session() as sess:
            sess.run(op, {p: [1.5, 2.0]})
            sess.run(op, {p: 7.0})
    assert capsys.readouterr().out == "v [1.5 2]\nv 7\n"


def test_file_stream_and_bad_stream(tmp_path):
    path = tmp_path / "log.txt"
    tf.print("n", tf.constant([1, 2]), output_stream=f"file://{path}")
    tf.print("m", output_stream=f"file://{path}")
    assert path.read_text() == "n [1 2]\nm\n"
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("x", output_stream="nowhere")
