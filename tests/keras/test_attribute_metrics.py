"""Metrics assigned as attributes of subclassed models and layers are tracked as Keras 3
tracks them: listed in `model.metrics` / `layer.metrics` (order, duplicates and all), reset
by fit and evaluate each time, and reported in History and evaluate's results.

The scenarios are tests/keras/fixtures/attribute_metrics/scenarios.py, shared with the
oracle; EXPECTED is its output under TensorFlow 2.21 + Keras 3.15.1:

    /work/tfvenv/bin/python tests/keras/fixtures/attribute_metrics/scenarios.py

(values rounded to 5 decimals there; compared to within 2e-5 here).
"""

import importlib.util
from pathlib import Path

import pytest

import ndflow as tf

keras = tf.keras

_PATH = Path(__file__).resolve().parent / "fixtures" / "attribute_metrics" / "scenarios.py"
_SPEC = importlib.util.spec_from_file_location("attribute_metrics_scenarios", _PATH)
SCENARIOS = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(SCENARIOS)

_NESTED = ["top", "block_calls", "a_mean", "b_mean", "b_mean", "a_mean", "c_mean"]
_GUIDE_HISTORY = {"loss": [0.46836, 0.27775, 0.16594], "mae": [0.58138, 0.45142, 0.35084],
                  "steps": [3.0, 3.0, 3.0], "val_loss": [0.29336, 0.17453, 0.10457],
                  "val_mae": [0.45371, 0.35114, 0.27234], "val_steps": [3.0, 3.0, 3.0]}
_GUIDE_EVAL = {"loss": 0.10457, "mae": 0.27234, "steps": 3.0}

# Keras 3.15.1 (TensorFlow 2.21), scenarios.py's output.
EXPECTED = {
    "compiled_attribute_metric": {
        "uncompiled": ["custom"],
        "compiled": ["loss", "compile_metrics", "custom"],
        "after_fit": ["loss", "compile_metrics", "custom"],
        "history": {"custom": [0.0, 0.0], "loss": [0.43837, 0.13896], "mae": [0.5738, 0.33032],
                    "val_custom": [0.0, 0.0], "val_loss": [0.15379, 0.04983],
                    "val_mae": [0.33021, 0.19157]},
        "evaluate": [0.04983, 0.19157, 0.0],
        "evaluate_dict": {"custom": 0.0, "loss": 0.04983, "mae": 0.19157},
        "train_on_batch": [0.04983, 0.19157, 0.0],
        "custom_before_reset": 5.0, "custom_after_reset": 0.0},
    "guide_overriding_metrics": {
        "uncompiled": ["loss", "mae", "steps"],
        "compiled": ["loss", "mae", "steps"],
        "history": _GUIDE_HISTORY,
        "evaluate": [0.10457, 0.27234, 3.0],
        "evaluate_dict": _GUIDE_EVAL,
        "test_on_batch": {"loss": 0.10457, "mae": 0.27234, "steps": 1.0},
        "steps_after_test_on_batch": 1.0},
    "guide_without_metrics_property": {
        "uncompiled": ["loss", "mae", "steps"],
        # compile's own loss tracker first, then the model's, both named "loss"
        "compiled": ["loss", "loss", "mae", "steps"],
        "history": _GUIDE_HISTORY,
        "evaluate": [0.10457, 0.10457, 0.27234, 3.0],
        "evaluate_dict": _GUIDE_EVAL,
        "test_on_batch": {"loss": 0.10457, "mae": 0.27234, "steps": 1.0},
        "steps_after_test_on_batch": 1.0},
    "guide_compute_loss_loop": {
        "compiled": ["loss", "extra_mse"],
        "history": {"extra_mse": [0.46836, 0.27775], "loss": [0.46836, 0.27775]},
        "evaluate_dict": {"extra_mse": 0.0, "loss": 0.17453}},
    "nested_layer_metrics": {
        "inner_layer": ["solo_mean"],
        "block_layer": ["block_calls", "a_mean", "b_mean"],
        "uncompiled": _NESTED,
        "compiled": ["loss"] + _NESTED,
        "history": {"a_mean": [1.00016, 1.00088], "b_mean": [1.00016, 1.00088],
                    "block_calls": [3.0, 3.0], "c_mean": [0.89498, 0.7524],
                    "loss": [0.72703, 0.58194], "top": [0.0, 0.0]},
        "evaluate": [0.48755, 0.0, 2.0, 1.00149, 1.00149, 1.00149, 1.00149, 0.72709],
        "evaluate_dict": {"a_mean": 1.00149, "b_mean": 1.00149, "block_calls": 2.0,
                          "c_mean": 0.72709, "loss": 0.48755, "top": 0.0},
        "metrics_variables": 15, "block_metrics_variables": 5,
        "after_reset": [0.0] * 8},
    "nested_model_metrics": {
        "sub_uncompiled": ["sub_own", "sub_layer_mean"],
        "uncompiled": ["top_own", "sub_layer_mean"],
        "sub_compiled": ["loss", "sub_own", "sub_layer_mean"],
        "compiled": ["loss", "top_own", "sub_layer_mean"]},
    "containers_and_reassignment": {
        "uncompiled": ["first", "l0", "l1", "second", "d0", "nested"],
        "compiled": ["loss", "first", "l0", "l1", "second", "d0", "nested"]},
    "container_filled_later": {
        "uncompiled": ["mse_term", "mae_term"],
        "compiled": ["loss", "mse_term", "mae_term"],
        "history": {"loss": [0.0, 0.0], "mae_term": [0.58042, 0.37404],
                    "mse_term": [0.44449, 0.17595]}},
    "compile_override_trackers": {
        "compiled_once": ["loss", "d_loss", "g_loss"],
        "compiled_twice": ["loss", "d_loss", "g_loss", "d_loss", "g_loss"],
        "history": {"d_loss": [-0.36957, -0.36957], "g_loss": [0.36957, 0.36957]},
        "after_fit": ["loss", "d_loss", "g_loss", "d_loss", "g_loss"]},
    "functional_and_sequential": {
        "functional_uncompiled": [], "sequential_uncompiled": [],
        "functional_compiled": ["loss", "compile_metrics"],
        "sequential_compiled": ["loss"]},
}


def _assert_matches(got, want, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(sorted(got)) == list(sorted(want)), \
            f"{where}: {got} != {want}"
        for key in want:
            _assert_matches(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_matches(g, w, f"{where}[{i}]")
    elif isinstance(want, str):
        assert got == want, f"{where}: {got!r} != {want!r}"
    else:
        assert got == pytest.approx(want, abs=2e-5), f"{where}: {got} != {want}"


@pytest.mark.parametrize("scenario", SCENARIOS.SCENARIOS, ids=lambda s: s.__name__)
def test_matches_keras(scenario):
    _assert_matches(scenario(tf, keras), EXPECTED[scenario.__name__], scenario.__name__)


def test_scenarios_all_expected():
    assert sorted(EXPECTED) == sorted(s.__name__ for s in SCENARIOS.SCENARIOS)


def test_nested_losses_in_keras_order():
    """A model's losses follow Keras 3's walk of its layers (a layer's sublayers last one
    first); Keras 3.15.1 gives [1, 12, 121, 11, 2, 21] for this model."""
    class L(keras.layers.Layer):
        def __init__(self, value, children=()):
            super().__init__()
            self.value = value
            self.kids = list(children)

        def call(self, x):
            self.add_loss(keras.ops.sum(x) * 0.0 + self.value)
            for kid in self.kids:
                x = kid(x)
            return x

    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.a = L(1.0, [L(11.0), L(12.0, [L(121.0)])])
            self.b = L(2.0, [L(21.0)])

        def call(self, x):
            return self.b(self.a(x))

    model = M()
    model(keras.ops.ones((1, 2)))
    assert [float(loss) for loss in model.losses] == [1.0, 12.0, 121.0, 11.0, 2.0, 21.0]


def test_compile_trackers_are_not_attribute_metrics():
    """compile's loss tracker is not tracked (Keras 3.15.1 gives these names and 4
    variables), and a metric assigned before `super().__init__()` is still tracked."""
    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.custom = keras.metrics.Mean(name="custom")

        def call(self, x):
            return self.dense(x)

    model = M()
    model.compile(optimizer="sgd", loss="mse")
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    assert model.metrics_names == ["loss", "compile_metrics", "custom"]
    assert len(model.metrics_variables) == 4

    class L(keras.layers.Layer):
        def __init__(self):
            self.early = keras.metrics.Mean(name="early")
            super().__init__()
            self.late = keras.metrics.Mean(name="late")

    assert [m.name for m in L().metrics] == ["early", "late"]
