"""`tf.compat.v1.wrap_function` around `import_meta_graph` (TF's "Migrate the SavedModel
workflow" guide): the imported graph's variables are lifted, so a Saver over
`wrapped.variables` restores them and the pruned function reads the restored values.
The meta graph and checkpoint are TensorFlow 2.21's (tests/fixtures/migrate_guides)."""

from __future__ import annotations

import os

import ndflow as tf

tf1 = tf.compat.v1
FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "migrate_guides")


def _wrapped():
    def import_multiply():
        tf1.train.import_meta_graph(os.path.join(FIXTURE, "multiply.pb"))
    return tf1.wrap_function(import_multiply, [])


def test_imported_variables_are_lifted_and_restored():
    wrapped = _wrapped()
    [v] = wrapped.variables
    assert v.name == "v:0" and v.dtype == tf.float32
    # not yet restored: TF's repr of an unreadable variable
    assert repr(v) == "<tf.Variable 'v:0' shape=() dtype=float32, numpy=<unavailable>>"
    tf1.train.Saver(wrapped.variables).restore(
        sess=None, save_path=os.path.join(FIXTURE, "multiply_values.ckpt"))
    assert v.numpy() == 3.0
    graph = wrapped.graph
    multiply = wrapped.prune(feeds=graph.get_tensor_by_name("x:0"),
                             fetches=graph.get_tensor_by_name("y:0"))
    assert multiply(tf.constant(5.0)).numpy() == 15.0
    v.assign(4.0)   # the function reads the lifted variable's resource
    assert multiply(tf.constant(5.0)).numpy() == 20.0

