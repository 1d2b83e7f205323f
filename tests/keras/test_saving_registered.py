"""Saving gaps met by a ResNet training script (issue 55): registered learning-rate
schedules, a LossScaleOptimizer in the compile config, and the public `tf.keras.saving`.

Expected values were observed with TF 2.21 / Keras 3 (/work/tfvenv) running the same code
with `import tensorflow as tf`; they are hard-coded where noted."""

import json
import os
import warnings
import zipfile

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.saving import compile_config, weights_h5

keras = tf.keras
schedules = keras.optimizers.schedules
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "loss_scale_optimizer")


@keras.utils.register_keras_serializable(package="demo")
class Warmup(schedules.LearningRateSchedule):
    def __init__(self, lr):
        self.lr = lr

    def __call__(self, step):
        return self.lr * tf.cast(step, tf.float32)

    def get_config(self):
        return {"lr": self.lr}


class Plain(schedules.LearningRateSchedule):   # not registered
    def __init__(self, lr):
        self.lr = lr

    def __call__(self, step):
        return self.lr * tf.cast(step, tf.float32)

    def get_config(self):
        return {"lr": self.lr}


def test_registered_schedule_serializes_as_keras():
    # TF 2.21: schedules.serialize(Warmup(0.1)) and serialize_keras_object(Warmup(0.1))
    want = {"module": None, "class_name": "Warmup", "config": {"lr": 0.1},
            "registered_name": "demo>Warmup"}
    mine = schedules.serialize(Warmup(0.1))
    assert {**mine, "module": None} == want   # TF's module is None as Warmup is __main__'s
    assert mine["module"] in (None, __name__)
    assert keras.utils.serialize_keras_object(Warmup(0.1))["registered_name"] == "demo>Warmup"
    # unregistered: its class name (TF 2.21: registered_name 'Plain')
    assert schedules.serialize(Plain(0.1))["registered_name"] == "Plain"
    # a built-in, also through serialize_keras_object (TF 2.21)
    decay = schedules.ExponentialDecay(0.1, 10, 0.9)
    want = {"module": "keras.optimizers.schedules", "class_name": "ExponentialDecay",
            "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.9,
                       "staircase": False, "name": "ExponentialDecay"},
            "registered_name": None}
    assert schedules.serialize(decay) == want
    assert keras.utils.serialize_keras_object(decay) == want
    again = keras.utils.deserialize_keras_object(want)
    assert isinstance(again, schedules.ExponentialDecay)


def test_schedule_deserialize_lookups():
    d = schedules.deserialize
    # TF 2.21 gives these classes for these configs (printed type(...).__name__)
    got = d({"module": None, "class_name": "Warmup", "config": {"lr": 0.2},
             "registered_name": "demo>Warmup"})
    assert type(got) is Warmup and got.lr == 0.2
    assert type(d({"class_name": "demo>Warmup", "config": {"lr": 0.2}})) is Warmup
    assert type(d({"class_name": "Plain", "config": {"lr": 0.2}}, {"Plain": Plain})) is Plain
    assert type(d({"module": None, "class_name": "Plain", "config": {"lr": 0.2},
                   "registered_name": "Plain"}, {"Plain": Plain})) is Plain
    with keras.utils.custom_object_scope({"Plain": Plain}):
        assert type(d({"class_name": "Plain", "config": {"lr": 0.2}})) is Plain
    # TF 2.21: TypeError naming the decorator for an unknown user class (module None)
    with pytest.raises(TypeError, match="register_keras_serializable"):
        d({"module": None, "class_name": "Nope", "config": {}, "registered_name": "x>Nope"})


def test_registered_schedule_round_trips_through_keras_file(tmp_path):
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    m.compile(keras.optimizers.SGD(Warmup(0.1), momentum=0.9), "mse")
    m.fit(tf.ones((4, 2)), tf.ones((4, 1)), verbose=0)
    path = str(tmp_path / "m.keras")
    m.save(path)
    config = json.loads(zipfile.ZipFile(path).read("config.json"))
    lr = config["compile_config"]["optimizer"]["config"]["learning_rate"]
    # TF 2.21 writes {'module': None, ..., 'registered_name': 'demo>Warmup'}
    assert lr["registered_name"] == "demo>Warmup" and lr["class_name"] == "Warmup"
    loaded = keras.models.load_model(path)   # TF 2.21 loads it: Warmup, lr 0.1, 1 iteration
    assert type(loaded.optimizer._learning_rate) is Warmup
    assert loaded.optimizer._learning_rate.lr == 0.1
    assert int(loaded.optimizer.iterations) == 1


def _optimizer_values(opt):
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v).tolist()
            for v in weights_h5.optimizer_variables(opt)]


@pytest.fixture
def float32_policy_after():
    yield
    keras.mixed_precision.set_global_policy("float32")


def test_explicit_loss_scale_optimizer_round_trips(tmp_path, float32_policy_after):
    keras.mixed_precision.set_global_policy("mixed_float16")
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1, momentum=0.9),
                                                   initial_scale=256.0, dynamic_growth_steps=2)
    m.compile(opt, "mse")
    m.fit(np.ones((8, 2)), np.ones((8, 1)), batch_size=4, epochs=2, verbose=0)
    before = _optimizer_values(m.optimizer)
    path = str(tmp_path / "m.keras")
    m.save(path)
    saved = json.loads(zipfile.ZipFile(path).read("config.json"))["compile_config"]
    # TF 2.21 saves the wrapper: class LossScaleOptimizer with these config keys (ndflow adds
    # Keras 2's `dynamic`, which Keras 3's LossScaleOptimizer accepts when True)
    assert saved["optimizer"]["class_name"] == "LossScaleOptimizer"
    assert {"dynamic_growth_steps", "initial_scale", "inner_optimizer",
            "name"} <= set(saved["optimizer"]["config"])
    assert saved["optimizer"]["config"]["inner_optimizer"]["class_name"] == "SGD"
    keras.mixed_precision.set_global_policy("float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "Skipping variable loading"
        loaded = keras.models.load_model(path)
    # TF 2.21: a LossScaleOptimizer (initial_scale 256, growth 2) with every variable restored
    assert isinstance(loaded.optimizer, keras.mixed_precision.LossScaleOptimizer)
    assert loaded.optimizer.initial_scale == 256.0
    assert loaded.optimizer.dynamic_growth_steps == 2
    assert _optimizer_values(loaded.optimizer) == before


def test_auto_wrapped_optimizer_saves_the_inner_one(tmp_path, float32_policy_after):
    # TF 2.21 saves the optimizer given to compile (SGD), not compile's own wrapper
    keras.mixed_precision.set_global_policy("mixed_float16")
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    m.compile(keras.optimizers.SGD(0.1), "mse")
    assert isinstance(m.optimizer, keras.mixed_precision.LossScaleOptimizer)
    assert compile_config.get_compile_config(m)["optimizer"]["class_name"] == "SGD"


def test_loads_tf_written_loss_scale_optimizer(float32_policy_after):
    # lso.keras and lso.json: written by TF 2.21 (generate.py beside them)
    with open(os.path.join(HERE, "lso.json")) as f:
        want = json.load(f)
    assert want["paths"][:4] == ["loss_scale_optimizer/iteration",
                                 "loss_scale_optimizer/learning_rate",
                                 "loss_scale_optimizer/step_counter",
                                 "loss_scale_optimizer/dynamic_scale"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = keras.models.load_model(os.path.join(HERE, "lso.keras"))
    opt = loaded.optimizer
    assert isinstance(opt, keras.mixed_precision.LossScaleOptimizer)
    assert opt.name == "loss_scale_optimizer"
    assert (opt.initial_scale, opt.dynamic_growth_steps) == (256.0, 3)
    np.testing.assert_allclose(np.concatenate([np.ravel(v) for v in _optimizer_values(opt)]),
                               np.concatenate([np.ravel(v) for v in want["values"]]),
                               rtol=1e-6)
    assert float(opt.loss_scale) == 512.0 and int(opt.dynamic_counter) == 1
    assert int(opt.iterations) == 4


# dir(tensorflow.keras.saving) in TF 2.21, public names
TF_SAVING_NAMES = ["CustomObjectScope", "KerasFileEditor", "custom_object_scope",
                   "deserialize_keras_object", "get_custom_objects", "get_registered_name",
                   "get_registered_object", "load_model", "load_weights",
                   "register_keras_serializable", "save_model", "save_weights",
                   "serialize_keras_object"]
NOT_YET = {"KerasFileEditor"}


def test_keras_saving_namespace():
    from ndflow.keras import saving
    assert saving is keras.saving
    public = {n for n in dir(saving) if not n.startswith("_")}
    assert public == set(TF_SAVING_NAMES) - NOT_YET
    assert saving.register_keras_serializable is keras.utils.register_keras_serializable
    assert saving.load_model is keras.models.load_model
    assert saving.get_registered_name(Warmup) == "demo>Warmup"
    assert saving.get_registered_object("demo>Warmup") is Warmup
    assert saving.get_custom_objects()["demo>Warmup"] is Warmup
