"""Uses the example op library: eagerly, in tf.function, in a Session, with its gradient.

    python examples/custom_op/example.py [LIBRARY.so]   # builds it first when not given
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import ndflow as tf


def load(library_path):
    """The library's module (`zero_out`, `fused_bias_relu`, `fused_bias_relu_grad`), with
    FusedBiasRelu's gradient registered as TensorFlow op libraries do it: in Python."""
    lib = tf.load_op_library(library_path)
    try:
        @tf.RegisterGradient("FusedBiasRelu")
        def _fused_bias_relu_grad(op, grad):
            dx = lib.fused_bias_relu_grad(grad, op.outputs[0])
            per_channel = tf.reshape(dx, [-1, tf.shape(dx)[-1]])
            return dx, tf.reduce_sum(per_channel, axis=0)
    except KeyError:   # loaded before: the gradient is registered already
        pass
    return lib


def main(library_path) -> None:
    lib = load(library_path)
    print("zero_out:", lib.zero_out([[1, 2], [3, 4]]).numpy().tolist())

    x = tf.constant([[-1.0, 2.0], [3.0, -4.0]])
    bias = tf.Variable([0.5, 1.0])
    with tf.GradientTape() as tape:
        y = lib.fused_bias_relu(x, bias)
        loss = tf.reduce_sum(y * y)
    print("fused_bias_relu:", y.numpy().tolist())
    print("d loss / d bias:", tape.gradient(loss, bias).numpy().tolist())

    traced = tf.function(lambda t: lib.fused_bias_relu(t, bias))
    print("in tf.function:", traced(x).numpy().tolist())

    graph = tf.Graph()
    with graph.as_default():
        feed = tf.compat.v1.placeholder(tf.float32, [None, 2])
        out = lib.fused_bias_relu(feed, tf.constant([0.5, 1.0]))
        with tf.compat.v1.Session() as sess:
            print("in a Session:", sess.run(out, {feed: np.ones((1, 2), np.float32)}).tolist())


if __name__ == "__main__":
    if len(sys.argv) > 1:
        path = sys.argv[1]
    else:
        from build import build  # build.py beside this file (the script's directory)
        path = build(Path(__file__).resolve().parent / "build")
    main(path)
