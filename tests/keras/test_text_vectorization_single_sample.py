"""TextVectorization on one string (a scalar, split into a rank-1 token tensor) and on a
rank-1 batch of unsplit strings: Keras treats a rank-1 token tensor as one sample (multi_hot,
count and tf_idf give one row; int pads or cuts its last axis), as TF 2.21 computed in
tests/fixtures/customization_data_tutorials (the Load text tutorial vectorizes one question)."""

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                      "customization_data_tutorials" / "fixture.json").read_text())
CASES = FIXTURE["text_vectorization"]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_text_vectorization_matches_tf(index):
    kwargs, value, shape, expected = CASES[index]
    layer = tf.keras.layers.TextVectorization(**kwargs)
    layer.adapt(["a b c", "b c d", "c d e"] if kwargs["split"] else ["a", "b", "b", "c"])
    if isinstance(shape, str):   # TF's error type
        with pytest.raises(Exception) as caught:
            layer(tf.constant(value))
        assert type(caught.value).__name__ == shape
        return
    result = layer(tf.constant(value)).numpy()
    assert list(result.shape) == shape
    np.testing.assert_allclose(result, np.array(expected), rtol=1e-6)
