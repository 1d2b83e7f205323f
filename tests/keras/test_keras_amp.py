"""The user guide's Keras mixed-precision route: a Keras optimizer wrapped by
`enable_mixed_precision_graph_rewrite` and given to `compile`; `fit`'s training step is one
graph, so the auto-mixed-precision pass rewrites it, and the loss is scaled dynamically."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.data_adapter import ArrayDataAdapter

keras = tf.keras
RNG = np.random.default_rng(2)


@pytest.fixture
def rewrite_on_cpu():
    """The rewrite enabled, in its oneDNN bfloat16 flavour (the CPU one)."""
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": True})
    yield
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": False})
    tf.train.experimental.disable_mixed_precision_graph_rewrite()


def _model():
    return keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(4, activation="softmax")])


def test_fit_graph_is_rewritten_and_trains(rewrite_on_cpu):
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        keras.optimizers.SGD(0.5))
    assert isinstance(opt, keras.mixed_precision.LossScaleOptimizer) and opt.dynamic
    model = _model()
    model.compile(loss="categorical_crossentropy", optimizer=opt, metrics=["accuracy"])
    x = RNG.normal(size=(128, 16)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[np.argmax(x[:, :4], axis=1)]
    losses = model.fit(x, y, batch_size=32, epochs=6, verbose=0).history["loss"]
    assert losses[-1] < 0.8 * losses[0]
    batch = next(iter(ArrayDataAdapter(x, y, batch_size=32)))
    graph = model.train_function.get_concrete_function(batch).optimized_graph()
    matmuls = [op for op in graph.get_operations() if op.type == "MatMul"]
    assert matmuls and all(op.attrs["T"] == tf.bfloat16 for op in matmuls)
    assert all(w.dtype == tf.float32 for w in model.weights)


def test_non_finite_step_is_skipped_and_scale_halves(rewrite_on_cpu):
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        keras.optimizers.SGD(0.1))
    model = _model()
    model.compile(loss="categorical_crossentropy", optimizer=opt)
    x = RNG.normal(size=(8, 16)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[np.zeros(8, int)]
    model.train_on_batch(x, y)
    before, scale = model.get_weights(), float(opt.loss_scale)
    x[0, 0] = np.inf
    model.train_on_batch(x, y)
    for w0, w1 in zip(before, model.get_weights()):
        np.testing.assert_array_equal(w0, w1)
    assert float(opt.loss_scale) == scale / 2


def test_rewrite_and_mixed_policy_conflict():
    tf.train.experimental.enable_mixed_precision_graph_rewrite(keras.optimizers.SGD())
    try:
        with pytest.raises(ValueError, match="mixed precision graph rewrite has already been "
                                             "enabled"):
            keras.mixed_precision.set_global_policy("mixed_float16")
    finally:
        tf.train.experimental.disable_mixed_precision_graph_rewrite()
    assert keras.mixed_precision.global_policy().name == "float32"
