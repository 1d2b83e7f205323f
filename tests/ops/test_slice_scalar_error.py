"""Slicing a scalar: TF's StridedSlice error "Attempting to slice scalar input." (eagerly an
InvalidArgumentError, in a graph a ValueError), what TextVectorization's int output hits for
one unsplit string (tests/fixtures/customization_data_tutorials)."""

import json
from pathlib import Path

import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                      "customization_data_tutorials" / "fixture.json").read_text())


def _message(tf_message):
    # TF's eager text carries its kernel's function-node prefix and a name suffix
    return tf_message.split("}} ")[1].split(" [Op:")[0]


@pytest.mark.parametrize("index,slicer", [(0, lambda x: x[:4]), (1, lambda x: x[..., :2]),
                                          (2, lambda x: x[None, :2])])
def test_slicing_a_scalar_is_tfs_error(index, slicer):
    kind, message = FIXTURE["slice_scalar"][index]
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        slicer(tf.constant(1))
    assert type(caught.value).__name__ == kind
    assert _message(message) in str(caught.value)


def test_slicing_a_scalar_in_a_graph_and_ellipsis_alone():
    assert tf.constant(1)[...].numpy().tolist() == FIXTURE["slice_scalar"][3]

    @tf.function
    def f(x):
        return x[..., :4]

    with pytest.raises(ValueError, match="Attempting to slice scalar input."):
        f.get_concrete_function(tf.TensorSpec([], tf.int32))
