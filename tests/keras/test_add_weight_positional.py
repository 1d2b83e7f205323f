"""Keras 3's `Layer.add_weight(*args, ...)`: at most (shape, initializer, dtype) positionally,
with Keras' errors for a positional name (the Keras 2 call the Custom layers tutorial makes),
too many positionals or one given twice (tests/fixtures/customization_data_tutorials)."""

import json
from pathlib import Path

import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                      "customization_data_tutorials" / "fixture.json").read_text())


class Plain(tf.keras.layers.Layer):
    pass


CALLS = [lambda layer: layer.add_weight("kernel", shape=(2,)),
         lambda layer: layer.add_weight((2,), "zeros", "float32", True),
         lambda layer: layer.add_weight((2,), shape=(2,)),
         lambda layer: layer.add_weight((2,), "zeros", initializer="ones"),
         lambda layer: layer.add_weight((2,), "zeros", "float32", dtype="float32")]


@pytest.mark.parametrize("index", range(len(CALLS)))
def test_add_weight_positional_errors_are_keras(index):
    kind, message = FIXTURE["add_weight_errors"][index]
    with pytest.raises((TypeError, ValueError)) as caught:
        CALLS[index](Plain())
    assert type(caught.value).__name__ == kind
    assert str(caught.value) == message


def test_add_weight_takes_shape_initializer_dtype_positionally():
    w = Plain().add_weight((3,), "ones", "float16")
    assert [list(w.shape), w.dtype, w.numpy().tolist()] == FIXTURE["add_weight_positional"]
