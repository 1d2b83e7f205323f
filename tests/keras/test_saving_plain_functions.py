"""A model whose initializer, regularizer, constraint and activation are a user's plain
functions saves as Keras 3 saves it (each function recorded by its name, a registered one by
`package>name`), and loads with `custom_objects` (or the registration); without them loading
is Keras' TypeError. Expected: TF 2.21's save of the same model (tests/fixtures/
keras_plain_functions, generate.py), loaded here too."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

FIXTURE = fixture_modules.FIXTURES / "keras_plain_functions"
CONFIGS = fixture_modules.load("keras_plain_functions")
EXPECTED = fixture_modules.expected("keras_plain_functions")


def _without_shared_ids(value):
    """Configs less TF's `shared_object_id` marks (which objects a save shares)."""
    if isinstance(value, dict):
        return {k: _without_shared_ids(v) for k, v in value.items() if k != "shared_object_id"}
    if isinstance(value, list):
        return [_without_shared_ids(v) for v in value]
    return value


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model = CONFIGS.model(tf)
    path = str(tmp_path_factory.mktemp("plain_functions") / "model.keras")
    model.save(path)
    return model, path


def test_configs_record_functions_as_tensorflow(saved):
    _, path = saved
    assert CONFIGS.layer_configs(path) == _without_shared_ids(EXPECTED["layers"])


@pytest.mark.parametrize("source", ["tensorflow", "ndflow"])
def test_loads_with_custom_objects(saved, source):
    model, path = saved
    path = str(FIXTURE / "model.keras") if source == "tensorflow" else path
    loaded = tf.keras.models.load_model(path, custom_objects=CONFIGS.functions(tf))
    want = EXPECTED["predict"] if source == "tensorflow" else model.predict(CONFIGS.X,
                                                                            verbose=0)
    np.testing.assert_allclose(loaded.predict(CONFIGS.X, verbose=0), want, rtol=1e-6)
    np.testing.assert_allclose([float(v) for v in loaded.losses], EXPECTED["losses"],
                               rtol=1e-6)
    dense = loaded.layers[0]
    assert dense.kernel_constraint.__name__ == "my_constraint"
    assert dense.kernel_initializer.__name__ == "my_init"


def test_unknown_function_is_keras_type_error():
    with pytest.raises(TypeError, match="Could not locate function 'my_"):
        tf.keras.models.load_model(str(FIXTURE / "model.keras"))
