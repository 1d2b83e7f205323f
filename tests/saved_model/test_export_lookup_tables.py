"""Models holding lookup tables saved for serving, as TF 2.21 did in tests/fixtures/
customization_data_tutorials (the Load text tutorial exports a TextVectorization model and
saves one with its own StaticVocabularyTable layer): `model.export` tracks the model's tables
(Keras' `_misc_assets`) and prints the endpoint's signature as Keras does, a layer's table
attribute is saved with it, and a printed signature shows its input signature's names."""

import contextlib
import io
import json
from pathlib import Path

import numpy as np

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" /
                      "customization_data_tutorials" / "fixture.json").read_text())


def test_export_of_a_text_vectorization_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # the printed path is the one given
    tv = tf.keras.layers.TextVectorization(max_tokens=20, output_mode="multi_hot")
    tv.adapt(["a b c", "b c d"])
    model = tf.keras.Sequential([tf.keras.Input((), dtype="string", name="words"), tv,
                                 tf.keras.layers.Dense(2, kernel_initializer="ones")])
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        model.export("exported")
    assert text.getvalue().split("Captures:")[0] == FIXTURE["export"]["printed"]
    loaded = tf.saved_model.load("exported")
    served = loaded.serve(tf.constant(["a b", "d"])).numpy()
    np.testing.assert_array_equal(served, np.array(FIXTURE["export"]["served"]))


class Table(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        init = tf.lookup.KeyValueTensorInitializer(["x", "y"], [3, 5], key_dtype=tf.string,
                                                   value_dtype=tf.int64)
        self.table = tf.lookup.StaticHashTable(init, -1)

    def call(self, x):
        return self.table.lookup(x)


def test_a_layers_table_attribute_is_saved(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((), dtype="string"), Table()])
    tf.saved_model.save(model, str(tmp_path / "saved"))
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    out = loaded.signatures["serving_default"](tf.constant(["y", "x", "z"]))
    assert {k: v.numpy().tolist() for k, v in out.items()} == FIXTURE["export"]["looked_up"]


def test_printed_signature_keeps_input_signature_names():
    @tf.function(input_signature=[tf.TensorSpec([None], name="s"),
                                  (tf.TensorSpec([1], name="t"), tf.TensorSpec([2]))])
    def named(x, y):
        return x

    assert named.get_concrete_function().pretty_printed_signature() == \
        FIXTURE["signature_names"]
