"""TF1's `tf.compat.v1.Print`: what it writes to stderr for the graph of
tests/fixtures/tf_print_v1/print_cases.py equals what TensorFlow 2.21 wrote (print.txt, made by
generate.py there): TF's SummarizeValue of each dtype and rank, `summarize` (-1: all) and
`first_n`; the input passes through, and so does its gradient."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_print_v1"
sys.path.insert(0, str(FIXTURES))
import print_cases  # noqa: E402


def test_print_writes_what_tensorflow_writes(capsys):
    assert print_cases.run(tf) == [1, 2, 3, 4, 5]
    written = [line for line in capsys.readouterr().err.splitlines() if line]
    assert written == (FIXTURES / "print.txt").read_text().splitlines()


def test_print_passes_its_input_and_gradient():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.compat.v1.Print(x * 3.0, [x], "x: ") * 2.0
    np.testing.assert_array_equal(y.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [6.0, 6.0])
    assert tf.compat.v1.Print(x, []).numpy().tolist() == [1.0, 2.0]
