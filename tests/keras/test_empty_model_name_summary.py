"""A subclassed model named "" (the Custom layers tutorial's ResnetIdentityBlock): Keras keeps
the empty name, drops it from its sublayers' variable paths, and `summary()` shows each
sublayer's output shape for the shape it was built with (tests/fixtures/
customization_data_tutorials, TF 2.21's output)."""

import contextlib
import io
import json
from pathlib import Path

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                      "customization_data_tutorials" / "fixture.json").read_text())


class Block(tf.keras.Model):
    def __init__(self):
        super().__init__(name="")
        self.conv = tf.keras.layers.Conv2D(2, (1, 1))
        self.bn = tf.keras.layers.BatchNormalization()

    def call(self, x):
        return self.bn(self.conv(x))


def test_empty_name_kept_out_of_paths_and_summary_shapes():
    tf.keras.backend.clear_session()
    block = Block()
    block(tf.zeros([1, 2, 3, 3]))
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        block.summary()
    expected = FIXTURE["empty_name"]
    assert block.name == expected["name"]
    assert [v.path for v in block.variables] == expected["paths"]
    assert text.getvalue() == expected["summary"]
