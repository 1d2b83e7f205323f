"""tf.compat.v1.flags and tf.compat.v1.app.run: absl's, with TensorFlow's additions (TF1
keyword names, implicit parsing on first read, unknown flags tolerated by app.run). The
programs run in a fresh interpreter: flags are process-global and app.run exits."""

import subprocess
import sys
import textwrap

import absl.flags
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _run(source: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source), *args],
                          capture_output=True, text=True, timeout=120)


# In the style of TensorFlow's fully_connected_feed.py tutorial.
TUTORIAL = """
    import ndflow as tf

    flags = tf.compat.v1.app.flags
    FLAGS = flags.FLAGS
    flags.DEFINE_float("learning_rate", 0.01, "Initial learning rate.")
    flags.DEFINE_integer("max_steps", 2000, "Number of steps to run trainer.")
    flags.DEFINE_string("train_dir", "/tmp/data", "Directory to put the training data.")
    flags.DEFINE_boolean("fake_data", False, "If true, uses fake data for unit testing.")
    flags.DEFINE_string(flag_name="mode", default_value="train", docstring="TF 1.x names.")

    def main(argv):
        print("argv", argv[1:])
        print(FLAGS.learning_rate, FLAGS.max_steps, FLAGS.train_dir, FLAGS.fake_data,
              FLAGS.mode)
        return 3

    if __name__ == "__main__":
        tf.compat.v1.app.run()
"""


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
def test_app_run_parses_flags_and_passes_unknown_ones_on():
    out = _run(TUTORIAL, "--learning_rate=0.5", "--max_steps", "7", "--fake_data",
               "--not_a_flag=1", "positional")
    assert out.returncode == 3, out.stderr  # main's return value is the exit status
    assert out.stdout.splitlines() == ["argv ['--not_a_flag=1', 'positional']",
                                       "0.5 7 /tmp/data True train"]
    assert "Use of the keyword argument names (flag_name, default_value, docstring) is " \
        "deprecated" in out.stderr


@pytest.mark.slow  # a fresh process: CI's slow pass runs it
def test_flags_parse_on_first_read_and_app_run_takes_main_and_argv():
    source = """
        import ndflow as tf
        FLAGS = tf.compat.v1.flags.FLAGS
        tf.compat.v1.flags.DEFINE_integer("batch_size", 100, "Batch size.")
        print(FLAGS.batch_size)  # parses sys.argv first, as TensorFlow's FLAGS does
        try:
            FLAGS.never_defined
        except AttributeError as e:
            print(type(e).__name__)

        def main(argv):
            print(argv, FLAGS.batch_size)

        tf.compat.v1.app.run(main=main, argv=["prog", "--batch_size=5", "rest"])
    """
    out = _run(source, "--batch_size=32")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["32", "AttributeError", "['prog', 'rest'] 5"]


def test_the_flags_module_is_absls():
    flags = v1.flags
    assert v1.app.flags is flags
    for name in absl.flags.__all__:
        assert hasattr(flags, name), name
    assert flags.DEFINE_enum is absl.flags.DEFINE_enum  # not wrapped by TensorFlow either
    assert flags.DEFINE_bool is flags.DEFINE_boolean
    flags.DEFINE_integer("ndflow_test_flag", 1, "Defined through ndflow.")
    assert "ndflow_test_flag" in absl.flags.FLAGS  # one registry: absl's
