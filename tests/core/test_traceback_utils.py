"""Tracebacks that show the user's code: filtering of uncaught errors, and where a failing
graph node was made (TensorFlow 2's "Graph execution error ... Detected at node")."""

import os
import re
import subprocess
import sys
import textwrap
import traceback

import pytest

import ndflow as tf
from ndflow.core import traceback_utils

HERE = os.path.abspath(__file__)


def _gather_out_of_range():
    @tf.function
    def f(x, i):
        y = x * 2
        return tf.gather(y, i)  # the failing node's line
    return f(tf.zeros([4]), tf.constant(7))


def _line_of(text: str) -> int:
    with open(HERE) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_function_error_names_the_node_and_the_users_line():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _gather_out_of_range()
    msg = str(info.value)
    assert msg.startswith("Graph execution error:\n\nDetected at node GatherV2 defined at "
                          "(most recent call last):\n")
    assert f'File "{HERE}", line {_line_of("the failing node")}, in f\n' in msg
    # then TF's name of the function's instantiation: [Op:__inference_<its name>_<n>]
    assert re.search(r"indices = 7 is not in \[0, 4\)\n\t \[\[\{\{node GatherV2\}\}\]\] "
                     r"\[Op:__inference_f_\d+\]$", msg)
    assert "/ndflow/" not in msg.split("indices")[0]  # only the user's frames


def test_function_errors_carry_tfs_function_tag_and_name():
    # TF 2.21: a call's error ends with `[Op:__inference_<the tf.function's name>_<n>]`;
    # `tf.function(lambda x: tf.debugging.check_numerics(x, "bad"))(nan)` is InvalidArgumentError
    # "{{function_node __inference_<lambda>_6}} bad : Tensor had NaN values\n\t
    # [[{{node CheckNumerics}}]] [Op:__inference_<lambda>_6]" (TF's error interpolation cannot
    # parse `<lambda>`, so no "Graph execution error:" header); a `def cn` gives
    # "Graph execution error:\n\nDetected at node CheckNumerics defined at (most recent call
    # last):\n ...\n\nbad : Tensor had NaN values\n\t [[{{node CheckNumerics}}]]
    # [Op:__inference_cn_6]"
    nan = tf.constant([float("nan")])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.function(lambda x: tf.debugging.check_numerics(x, "bad"))(nan)
    assert re.fullmatch(r"\{\{function_node (__inference_<lambda>_\d+)\}\} bad : Tensor had NaN "
                        r"values\n\t \[\[\{\{node CheckNumerics\}\}\]\] \[Op:\1\]",
                        str(info.value))

    @tf.function
    def cn(x):
        return tf.debugging.check_numerics(x, "bad")  # the check's line

    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        cn(nan)
    msg = str(info.value)
    assert msg.startswith("Graph execution error:\n\nDetected at node CheckNumerics defined at "
                          "(most recent call last):\n")
    assert f'line {_line_of("# the check" + chr(39) + "s line")}, in cn\n\n' in msg
    assert re.search(r"\n\nbad : Tensor had NaN values\n\t \[\[\{\{node CheckNumerics\}\}\]\] "
                     r"\[Op:__inference_cn_\d+\]$", msg)


def test_error_inside_a_loop_body_names_the_inner_node():
    @tf.function
    def f(n):
        return tf.while_loop(
            lambda k: k < n,
            lambda k: k + tf.gather(tf.constant([1, 2]), k + 5),  # the body's node
            [0])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f(tf.constant(3))
    msg = str(info.value)
    assert "Detected at node GatherV2 defined at" in msg
    assert f"line {_line_of('# the body' + chr(39) + 's node')}, in <lambda>" in msg
    assert "[[{{node GatherV2}}]]\n\t [[{{node while" in msg  # then the enclosing While


def test_session_error_uses_tf1_wording_and_op_traceback():
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [4])
        y = tf.gather(x * 2, tf.constant(7))  # made here
    frames = y.op.traceback
    assert frames[-1].filename == HERE and frames[-1].lineno == _line_of("# made here")
    with v1.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: [1, 2, 3, 4]})
    msg = str(info.value)
    assert msg.startswith("Graph execution error:\n\nDetected at node 'GatherV2' defined at "
                          "(most recent call last):\n    File ")
    assert f'    File "{HERE}", line {_line_of("# made here")}, in test_session' in msg
    assert "\nNode: 'GatherV2'\nindices = 7 is not in [0, 4)" in msg
    assert info.value.op is y.op


def _printed(exc) -> str:
    out = []
    saved = traceback_utils._previous_hook
    traceback_utils._previous_hook = lambda t, e, tb: out.append(
        "".join(traceback.format_exception(t, e, tb)))
    try:
        traceback_utils._excepthook(type(exc), exc, exc.__traceback__)
    finally:
        traceback_utils._previous_hook = saved
    return out[0]


def test_uncaught_errors_hide_ndflows_frames_unless_disabled():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _gather_out_of_range()
    full = "".join(traceback.format_exception(info.value))
    assert "ndflow/runtime" in full
    assert traceback_utils.is_traceback_filtering_enabled()
    shown = _printed(info.value)
    assert "ndflow/runtime" not in shown and "_gather_out_of_range" in shown
    tf.debugging.disable_traceback_filtering()
    try:
        assert not tf.debugging.is_traceback_filtering_enabled()
        with pytest.raises(tf.errors.InvalidArgumentError) as again:
            _gather_out_of_range()
        assert "ndflow/runtime" in _printed(again.value)
    finally:
        tf.debugging.enable_traceback_filtering()


def test_an_error_with_only_ndflow_frames_keeps_them():
    try:
        tf.reshape(tf.zeros([4]), [3])
    except (ValueError, tf.errors.InvalidArgumentError) as e:
        tb = e.__traceback__.tb_next  # drop this test's frame: what is left is ndflow's
        assert traceback_utils.filter_traceback(tb) is tb


@pytest.mark.slow
def test_a_script_prints_only_its_own_frames(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import ndflow as tf

        @tf.function
        def f(x, i):
            return tf.gather(x * 2, i)

        f(tf.zeros([4]), tf.constant(7))
        """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 1
    assert f'File "{script}", line 7, in <module>' in out.stderr
    assert f'File "{script}", line 5, in f' in out.stderr
    assert "ndflow/runtime" not in out.stderr
