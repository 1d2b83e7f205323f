"""Keras optimizers' `use_ema` (+ `ema_overwrite_frequency`) and `gradient_accumulation_steps`
step by step against Keras 3.15 (tests/fixtures/keras_optimizer_ema), eagerly and in
tf.function; `SwapEMAWeights` in fit; Keras' argument errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_optimizer_ema",
                               "ema_accumulation.npz"))
K = tf.keras
SHARED = fixture_modules.load("keras_optimizer_ema")


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "tf_function"])
@pytest.mark.parametrize("name", list(SHARED.CONFIGS))
def test_steps_match_keras(name, graph):
    w = tf.Variable(FIXTURE["w0"])
    opt = SHARED.make(K.optimizers, name)

    def step(g):
        opt.apply_gradients([(g, w)])
    step = tf.function(step) if graph else step
    for i, g in enumerate(FIXTURE["grads"]):
        step(tf.constant(g))
        np.testing.assert_allclose(w.numpy(), FIXTURE[f"{name}/w"][i], rtol=2e-6, atol=1e-7)
        assert int(opt.iterations.numpy()) == FIXTURE[f"{name}/iterations"][i]
        if opt.use_ema:
            np.testing.assert_allclose(opt._model_variables_moving_average[0].numpy(),
                                       FIXTURE[f"{name}/average"][i], rtol=2e-6, atol=1e-7)
        if opt.gradient_accumulation_steps:
            np.testing.assert_allclose(opt._accumulated_gradients[0].numpy(),
                                       FIXTURE[f"{name}/accumulator"][i], rtol=2e-6, atol=1e-7)
    # the same slots in the same order as Keras (what checkpoints and .keras files index)
    assert [_kind(v.name) for v in opt.variables] == \
        [_kind(n) for n in FIXTURE[f"{name}/variable_names"]]


def _kind(name) -> str:
    name = str(name).split(":")[0]
    return next(k for k in ("iteration", "learning_rate", "average", "gradient_accumulator",
                            "momentum", "velocity") if name.endswith(k))


def test_swap_ema_weights_in_fit_matches_keras():
    x, y = FIXTURE["fit/x"], FIXTURE["fit/y"]
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1, kernel_initializer="ones")])
    model.compile(K.optimizers.SGD(0.05, use_ema=True, ema_momentum=0.9), "mse")
    hist = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0,
                     validation_data=(x, y), callbacks=[K.callbacks.SwapEMAWeights()])
    np.testing.assert_allclose(hist.history["loss"], FIXTURE["fit/loss"], rtol=1e-5)
    np.testing.assert_allclose(hist.history["val_loss"], FIXTURE["fit/val_loss"], rtol=1e-5)
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), FIXTURE["fit/kernel"], rtol=1e-5)


def test_swap_ema_weights_needs_use_ema():
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(0.05), "mse")
    with pytest.raises(ValueError, match="use_ema=True"):
        model.evaluate(np.zeros((4, 3), np.float32), np.zeros((4, 1), np.float32), verbose=0,
                       callbacks=[K.callbacks.SwapEMAWeights()])


def test_argument_errors():
    with pytest.raises(ValueError, match="gradient_accumulation_steps` must be an integer >= 2"):
        K.optimizers.Adam(gradient_accumulation_steps=1)
    with pytest.raises(ValueError, match=r"ema_momentum` must be in the range \[0, 1\]"):
        K.optimizers.Adam(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="ema_overwrite_frequency` must be an integer >= 1"):
        K.optimizers.Adam(use_ema=True, ema_overwrite_frequency=-1)
    config = K.optimizers.Adam(use_ema=True, gradient_accumulation_steps=4).get_config()
    again = K.optimizers.Adam.from_config(config)
    assert again.use_ema and again.gradient_accumulation_steps == 4
