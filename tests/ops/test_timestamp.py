"""tf.timestamp: the clock when the op runs, again on every run of a graph."""

from __future__ import annotations

import time

import ndflow as tf


def test_reads_the_clock_each_run():
    before = time.time()
    t = float(tf.timestamp())
    assert before <= t <= time.time() and tf.timestamp().dtype == tf.float64

    @tf.function
    def f():
        return tf.timestamp()

    first = float(f())
    time.sleep(0.02)
    assert float(f()) - first >= 0.02  # stateful: not folded into a constant
