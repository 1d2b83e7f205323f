"""Keras 3 preprocessing layers (TextVectorization, StringLookup, IntegerLookup, Hashing,
CategoryEncoding, Discretization, Normalization) against outputs Keras 3.15 produced for the
same adapt data and inputs (tests/fixtures/keras_text_preprocessing/generate.py)."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "keras_text_preprocessing"
CASES = json.loads((FIXTURE / "fixture.json").read_text(encoding="utf-8"))["cases"]
NUMERIC = ("Normalization", "Discretization")


def _kwargs(case):
    kwargs = dict(case["kwargs"])
    if isinstance(kwargs.get("ngrams"), list):
        kwargs["ngrams"] = tuple(kwargs["ngrams"])
    if isinstance(kwargs.get("axis"), list):
        kwargs["axis"] = tuple(kwargs["axis"])
    return kwargs


def _build(case):
    name, adapt = case["layer"], case["adapt"]
    layer = getattr(tf.keras.layers, name)(**_kwargs(case))
    if adapt is not None:
        if isinstance(adapt, dict):  # streamed batches, as a tf.data pipeline
            batches = adapt["batches"]
            if name == "TextVectorization":
                ds = tf.data.Dataset.from_generator(
                    lambda: iter(batches), output_signature=tf.TensorSpec([None], tf.string))
            else:
                ds = tf.data.Dataset.from_tensor_slices(batches)
            layer.adapt(ds)
        else:
            layer.adapt(np.asarray(adapt) if name in NUMERIC else tf.constant(adapt))
    return layer


def _value(x):
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if x.dtype == object:
        return np.vectorize(lambda v: v.decode() if isinstance(v, bytes) else v)(x).tolist()
    return x


def _ids(cases):
    return [f"{i}-{c['layer']}-{'-'.join(map(str, c['kwargs']))}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_outputs_vocabulary_and_config_equal_keras(case):
    layer = _build(case)
    x = tf.constant(case["inputs"], tf.float32 if case["layer"] in NUMERIC else None)
    out = layer(x)
    if out.dtype == tf.string:
        assert _value(out) == case["output"]
    else:
        np.testing.assert_allclose(_value(out), np.asarray(case["output"]), rtol=1e-6,
                                   atol=1e-6)
        assert out.dtype.name == case["output_dtype"]
    if "vocabulary" in case:
        assert layer.get_vocabulary() == case["vocabulary"]
    if "bin_boundaries" in case:
        np.testing.assert_allclose(layer.bin_boundaries, case["bin_boundaries"], rtol=1e-6)
    config = json.loads(json.dumps(layer.get_config(), default=list))
    config.pop("name", None)
    assert config == case["config"]


def test_config_round_trip_keeps_vocabulary():
    layer = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c"], num_oov_indices=2)
    clone = tf.keras.layers.StringLookup.from_config(layer.get_config())
    x = tf.constant([["c", "zz", "a"]])
    np.testing.assert_array_equal(clone(x).numpy(), layer(x).numpy())
    tv = tf.keras.layers.TextVectorization(vocabulary=["cat", "dog"], ngrams=2,
                                           output_mode="multi_hot")
    tv2 = tf.keras.layers.TextVectorization.from_config(tv.get_config())
    np.testing.assert_array_equal(tv2(tf.constant(["cat dog"])).numpy(),
                                  tv(tf.constant(["cat dog"])).numpy())


def test_layers_run_in_tf_function_and_dataset_map():
    texts = ["The cat sat.", "A dog ate the cat", "dogs!"]
    tv = tf.keras.layers.TextVectorization(output_sequence_length=5)
    tv.adapt(texts)
    eager = tv(tf.constant(texts)).numpy()
    traced = tf.function(lambda x: tv(x))(tf.constant(texts)).numpy()
    np.testing.assert_array_equal(traced, eager)
    ds = tf.data.Dataset.from_tensor_slices((texts, [0, 1, 2])).batch(2)
    mapped = np.concatenate([x for x, _ in ds.map(lambda x, y: (tv(x), y)).as_numpy_iterator()])
    np.testing.assert_array_equal(mapped, eager)
    lookup = tf.keras.layers.IntegerLookup(vocabulary=[5, 7])
    got = list(tf.data.Dataset.from_tensor_slices([7, 5, 9]).map(lookup).as_numpy_iterator())
    assert got == [2, 1, 0]


def test_ragged_text_vectorization_and_vocabulary_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("cat\ndog\nthe\n")
    tv = tf.keras.layers.TextVectorization(vocabulary=str(path), ragged=True)
    out = tv(tf.constant(["the cat", "dog dog bird the"]))
    assert isinstance(out, tf.RaggedTensor)
    assert out.to_list() == [[4, 2], [3, 3, 1, 4]]
    assert tv.get_vocabulary() == ["", "[UNK]", "cat", "dog", "the"]


def test_normalization_adapt_streaming_matches_numpy_float64():
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, size=(37, 4))
    layer = tf.keras.layers.Normalization()
    layer.adapt(tf.data.Dataset.from_tensor_slices(data).batch(5))
    expect = (data - data.mean(0)) / data.std(0)
    np.testing.assert_allclose(layer(data).numpy(), expect, rtol=1e-4, atol=1e-5)
    # Keras' broadcastable `mean`/`variance` attributes (the regression tutorial prints them)
    np.testing.assert_allclose(layer.mean.numpy(), data.mean(0)[None], rtol=1e-5)
    np.testing.assert_allclose(layer.variance.numpy(), data.var(0)[None], rtol=1e-5)
    assert tf.keras.layers.Normalization().mean is None
    inv = tf.keras.layers.Normalization(mean=data.mean(0), variance=data.var(0), invert=True)
    np.testing.assert_allclose(inv(expect).numpy(), data, rtol=1e-4, atol=1e-4)


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match="`output_mode` must be `'int'` when `invert`"):
        tf.keras.layers.StringLookup(invert=True, output_mode="multi_hot")
    with pytest.raises(ValueError, match="repeated term"):
        tf.keras.layers.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="`num_bins` for `Hashing` cannot be"):
        tf.keras.layers.Hashing(num_bins=0)
    with pytest.raises(ValueError, match="either `num_bins` or `bin_boundaries`"):
        tf.keras.layers.Discretization()
    with pytest.raises(ValueError, match="both `mean` and `variance` must be set"):
        tf.keras.layers.Normalization(mean=1.0)
    with pytest.raises(RuntimeError, match="must set the layer's vocabulary"):
        tf.keras.layers.StringLookup(output_mode="multi_hot")(tf.constant(["a"]))
    with pytest.raises(ValueError, match="input rank must be 1 or the last"):
        tf.keras.layers.TextVectorization(vocabulary=["a"])(tf.constant([["a b", "c"]]))


def _saved_inputs(saved):
    return [tf.constant(saved["texts"]), tf.constant(saved["words"]),
            tf.constant(saved["numbers"], tf.float32)]


def test_keras_archive_with_adapted_layers_loads_with_keras_outputs():
    saved = json.loads((FIXTURE / "fixture.json").read_text(encoding="utf-8"))["saved_model"]
    model = tf.keras.models.load_model(str(FIXTURE / "text_model.keras"))
    for out, expect in zip(model(_saved_inputs(saved)), saved["outputs"]):
        np.testing.assert_allclose(out.numpy(), np.asarray(expect), rtol=1e-6)


def test_saved_archive_holds_vocabularies_as_keras_and_reloads(tmp_path):
    saved = json.loads((FIXTURE / "fixture.json").read_text(encoding="utf-8"))["saved_model"]
    texts = ["The cat sat on the mat.", "The dog ate my homework!", "A cat, a dog; the END",
             "dog dog cat zebra", "Über café, naïve résumé"]
    tv = tf.keras.layers.TextVectorization(max_tokens=12, output_sequence_length=6)
    tv.adapt(texts)
    sl = tf.keras.layers.StringLookup(output_mode="multi_hot")
    sl.adapt(tf.constant(saved["words"]))
    norm = tf.keras.layers.Normalization()
    norm.adapt(np.arange(12.0).reshape(4, 3))
    a = tf.keras.Input(shape=(), dtype="string")
    b = tf.keras.Input(shape=(4,), dtype="string")
    c = tf.keras.Input(shape=(3,))
    model = tf.keras.Model([a, b, c], [tv(a), sl(b), norm(c)])
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as zf, zipfile.ZipFile(FIXTURE / "text_model.keras") as ref:
        ours = {n: zf.read(n) for n in zf.namelist() if n.startswith("assets/")}
        keras = {n: ref.read(n) for n in ref.namelist() if n.startswith("assets/")}
    assert ours == keras
    reloaded = tf.keras.models.load_model(path)
    for out, expect in zip(reloaded(_saved_inputs(saved)), saved["outputs"]):
        np.testing.assert_allclose(out.numpy(), np.asarray(expect), rtol=1e-6)


@pytest.mark.parametrize("case", json.loads((FIXTURE / "fixture.json").read_text(
    encoding="utf-8"))["crossings"], ids=lambda c: f"{c['output_mode']}-{c['num_bins']}")
def test_hashed_crossing_equals_keras(case):
    layer = tf.keras.layers.HashedCrossing(num_bins=case["num_bins"],
                                           output_mode=case["output_mode"])
    out = layer((tf.constant(case["a"]), tf.constant(case["b"])))
    np.testing.assert_array_equal(out.numpy(), np.asarray(case["output"]))
    clone = tf.keras.layers.HashedCrossing.from_config(layer.get_config())
    np.testing.assert_array_equal(clone((tf.constant(case["a"]), tf.constant(case["b"]))).numpy(),
                                  out.numpy())


def test_no_oov_indices_rejects_unknown_values():
    layer = tf.keras.layers.IntegerLookup(vocabulary=[3, 4], num_oov_indices=0)
    np.testing.assert_array_equal(layer(tf.constant([[4, 3]])).numpy(), [[1, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"found OOV values \[5\]"):
        layer(tf.constant([[3, 5]]))
    traced = tf.function(lambda x: layer(x))
    np.testing.assert_array_equal(traced(tf.constant([[4, 3]])).numpy(), [[1, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="all inputs should be in vocab"):
        traced(tf.constant([[3, 5]]))


def test_text_model_fits_on_dataset_and_predicts_string_tensors():
    texts = np.array(["good great", "bad awful", "great fun", "awful boring"] * 4)
    labels = np.array([1, 0, 1, 0] * 4)
    vectorize = tf.keras.layers.TextVectorization(max_tokens=10, output_sequence_length=3)
    vectorize.adapt(texts)
    inp = tf.keras.Input(shape=(1,), dtype=tf.string)
    x = tf.keras.layers.GlobalAveragePooling1D()(tf.keras.layers.Embedding(10, 4)(vectorize(inp)))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(1, activation="sigmoid")(x))
    model.compile("adam", "binary_crossentropy")
    model.fit(tf.data.Dataset.from_tensor_slices((texts[:, None], labels)).batch(8), epochs=1,
              verbose=0)
    probe = tf.constant([["good fun"], ["bad"]])
    np.testing.assert_allclose(model.predict(probe, verbose=0), model(probe).numpy(), rtol=1e-5)


def test_callable_standardize_saves_as_keras_function_record(tmp_path):
    def strip_html(x):
        return tf.strings.regex_replace(tf.strings.lower(x), "<br />", " ")

    tv = tf.keras.layers.TextVectorization(standardize=strip_html, output_sequence_length=3)
    tv.adapt(["Hello<br />World", "hello there"])
    assert tv.get_config()["standardize"] == {
        "module": "builtins", "class_name": "function", "config": "strip_html",
        "registered_name": "function"}
    inp = tf.keras.Input(shape=(1,), dtype=tf.string)
    path = str(tmp_path / "m.keras")
    tf.keras.Model(inp, tv(inp)).save(path)
    probe = tf.constant([["HELLO<br />there"]])
    loaded = tf.keras.models.load_model(path, custom_objects={"strip_html": strip_html})
    np.testing.assert_array_equal(loaded(probe).numpy(), tv(probe).numpy())
    with pytest.raises(TypeError, match="Could not locate function 'strip_html'"):
        tf.keras.models.load_model(path)


def test_unzipped_model_directory_keeps_vocabulary(tmp_path):
    tv = tf.keras.layers.TextVectorization(output_sequence_length=3)
    tv.adapt(["a b", "b c"])
    inp = tf.keras.Input(shape=(1,), dtype=tf.string)
    model = tf.keras.Model(inp, tv(inp))
    model.save(str(tmp_path / "m"), zipped=False)
    vocab = tmp_path / "m" / "assets" / "layers" / "text_vectorization" / "vocabulary.txt"
    assert vocab.read_text().splitlines() == ["", "[UNK]", "b", "c", "a"]
    loaded = tf.keras.models.load_model(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded(tf.constant([["b a c"]])).numpy(), [[2, 4, 3]])


def test_sparse_inputs_as_keras():
    sp = tf.SparseTensor([[0, 0], [1, 2]], ["a", "zz"], [2, 3])
    out = tf.keras.layers.StringLookup(vocabulary=["a", "b"])(sp)
    assert isinstance(out, tf.SparseTensor)
    assert out.values.numpy().tolist() == [1, 0]
    multi = tf.keras.layers.StringLookup(vocabulary=["a", "b"], output_mode="multi_hot")(sp)
    np.testing.assert_array_equal(multi.numpy(), [[0, 1, 0], [1, 0, 0]])
    assert tf.keras.layers.Hashing(num_bins=5)(sp).values.numpy().tolist() == [4, 2]
    ints = tf.SparseTensor([[0, 1]], tf.constant([6], tf.int64), [1, 2])
    np.testing.assert_array_equal(tf.keras.layers.IntegerLookup(vocabulary=[5, 6])(ints).numpy(),
                                  [[0, 2]])
