"""Randomized training steps (hypothesis) through every remapper fusion: small Keras models
drawn from Dense (bias, activations, L2 terms), Conv2D + bias + ReLU + max pooling, batch
norm and dropout, trained by a `tf.function` step with SGD, SGD with momentum, Adam or
RMSprop, optionally under a dynamic LossScaleOptimizer fed an infinite loss on one step.
Each model trains twice from the same weights and seeds, with the `remapping` toggle on and
off: the losses and every weight after each step must agree (values and, through the
updates, gradients), the skipped step must skip in both, and the fused ops must fire."""

from __future__ import annotations

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import ndflow as tf
from ndflow.core import optimizer_options

layers = tf.keras.layers
FUSED = {"_FusedMatMul", "_FusedConv2D", "_FusedBatchNormEx", "_MaxPoolWithIndices",
         "_MaxPoolGradWithIndices", "_Conv2DBiasReluMaxPool", "_Conv2DBiasReluMaxPoolGrad",
         "_ResourceApplyMomentumWithDecay", "_MatMulApplyMomentum", "_GroupedApplyMomentum",
         "_GroupedApplyAdam", "_GroupedApplyKerasRMSProp",
         "_DropoutSelect", "_MatMulAddScaled"}

dense = st.fixed_dictionaries({
    "units": st.sampled_from([3, 8, 16]),
    "activation": st.sampled_from([None, "relu", "tanh", "elu"]),
    "l2": st.sampled_from([0.0, 1e-3]),
    "batch_norm": st.booleans(), "dropout": st.sampled_from([0.0, 0.25])})
model_spec = st.fixed_dictionaries({
    "conv": st.sampled_from([None, 1, 3]),          # a first conv block's input channels
    "dense": st.lists(dense, min_size=1, max_size=3),
    "optimizer": st.sampled_from(["sgd", "momentum", "adam", "rmsprop"]),
    "loss_scale": st.booleans(), "seed": st.integers(0, 2**16)})


def _model(spec):
    channels = spec["conv"] or 1
    inputs = tf.keras.Input((8, 8, channels))
    x = inputs
    if spec["conv"]:
        x = layers.Conv2D(4, 3, padding="same", activation="relu")(x)
        x = layers.MaxPooling2D(2)(x)
    x = layers.Flatten()(x)
    for d in spec["dense"]:
        reg = tf.keras.regularizers.l2(d["l2"]) if d["l2"] else None
        # no bias before a batch norm (its gradient is 0 up to rounding, which Adam's first
        # steps would turn into whole learning-rate steps either way)
        x = layers.Dense(d["units"], kernel_regularizer=reg, use_bias=not d["batch_norm"])(x)
        if d["batch_norm"]:
            x = layers.BatchNormalization()(x)
        if d["activation"]:
            x = layers.Activation(d["activation"])(x)
        if d["dropout"]:
            x = layers.Dropout(d["dropout"], seed=3)(x)
    return tf.keras.Model(inputs, layers.Dense(4)(x)), channels


def _optimizer(name, loss_scale):
    opt = {"sgd": lambda: tf.keras.optimizers.SGD(0.05),
           "momentum": lambda: tf.keras.optimizers.SGD(0.05, momentum=0.9),
           "adam": lambda: tf.keras.optimizers.Adam(0.01),
           "rmsprop": lambda: tf.keras.optimizers.RMSprop(0.01)}[name]()
    return tf.keras.mixed_precision.LossScaleOptimizer(opt) if loss_scale else opt


def _train(spec, weights, remapping: bool):
    """(losses, weights after each step, the optimized graph) with `remapping` set."""
    optimizer_options.set_experimental_options({"remapping": remapping})
    tf.keras.utils.set_random_seed(spec["seed"])
    model, channels = _model(spec)
    model.set_weights(weights)
    opt = _optimizer(spec["optimizer"], spec["loss_scale"])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(spec["seed"])
    x = tf.constant(rng.standard_normal((6, 8, 8, channels)).astype(np.float32))
    y = tf.constant(rng.integers(0, 4, 6))

    @tf.function
    def step(factor):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) * factor
            loss += sum(model.losses) if model.losses else 0.0
            scaled = opt.scale_loss(loss) if spec["loss_scale"] else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    factors = [1.0, float("inf"), 1.0] if spec["loss_scale"] else [1.0, 1.0, 1.0]
    losses, states, trained = [], [], []
    for f in factors:
        losses.append(float(step(tf.constant(f))))
        states.append([w.copy() for w in model.get_weights()])
        trained.append([v.numpy().copy() for v in model.trainable_variables])
    graph = step.get_concrete_function(tf.constant(1.0)).optimized_graph()
    return losses, states, graph, trained


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate])
@given(spec=model_spec)
def test_fused_training_equals_unfused(spec):
    tf.keras.utils.set_random_seed(spec["seed"])
    weights = _model(spec)[0].get_weights()
    try:
        fused = _train(spec, weights, True)
        plain = _train(spec, weights, False)
    finally:
        optimizer_options.set_experimental_options({"remapping": True})
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-5, atol=1e-6)
    # Adam and RMSprop divide each gradient by its own magnitude: a gradient that is a sum
    # cancelling to nearly 0 (a bias's, summed in another order by a fused convolution) keeps
    # its rounding in its step, so theirs compare to 2% of a learning-rate step (0.01)
    atol = 2e-4 if spec["optimizer"] in ("adam", "rmsprop") else 1e-5
    for got_step, want_step in zip(fused[1], plain[1]):
        for got, want in zip(got_step, want_step):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)
    if spec["loss_scale"]:   # the infinite step updated no trainable weight
        for a, b in zip(fused[3][0], fused[3][1]):   # (batch norms' statistics move)
            np.testing.assert_array_equal(a, b)
    fused_types = {op.type for op in fused[2].get_operations()}
    plain_types = {op.type for op in plain[2].get_operations()}
    assert fused_types & FUSED, sorted(fused_types)
    assert not plain_types & FUSED
