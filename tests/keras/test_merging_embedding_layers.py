"""Merging layers (Add ... Concatenate, Dot and their functional forms), Embedding and
Masking: Keras 3's outputs, masks and configs (fixture), float64 NumPy references and
finite-difference gradients, IndexedSlices gradients applied by an optimizer, tf.function
with an unknown batch dim, Keras' errors."""

import warnings

import numpy as np
import pytest

import ndflow as tf
from tests.keras.layer_checks import META, check_gradients, normal_config, replay

layers = tf.keras.layers
RNG = np.random.default_rng(5)
MERGE_CASES = sorted(n for n in META if META[n]["cls"] in (
    "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot"))


@pytest.mark.parametrize("name", MERGE_CASES + ["embedding", "masking"])
def test_matches_keras_fixture(name):
    replay(name)


def _xs(n, shape=(2, 3, 4)):
    return [RNG.normal(size=shape) for _ in range(n)]


@pytest.mark.parametrize("cls, fn, n", [
    (layers.Add, lambda xs: sum(xs), 3),
    (layers.Subtract, lambda xs: xs[0] - xs[1], 2),
    (layers.Multiply, lambda xs: np.prod(xs, axis=0), 3),
    (layers.Average, lambda xs: np.mean(xs, axis=0), 3),
    (layers.Maximum, lambda xs: np.max(xs, axis=0), 3),
    (layers.Minimum, lambda xs: np.min(xs, axis=0), 2),
    (layers.Concatenate, lambda xs: np.concatenate(xs, -1), 2),
])
def test_merge_values_and_gradients_float64(cls, fn, n):
    layer = cls(dtype="float64")
    xs = _xs(n)
    np.testing.assert_allclose(layer(xs).numpy(), fn(xs), rtol=1e-12)
    check_gradients(layer, xs)


def test_merge_broadcasting_and_lower_rank_inputs():
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 4))
    out = layers.Add(dtype="float64")([a, b])   # b gets an axis after the batch axis
    np.testing.assert_allclose(out.numpy(), a + b[:, None, :], rtol=1e-12)
    assert layers.Add().compute_output_shape([(None, 3, 4), (None, 4)]) == (None, 3, 4)
    assert layers.Maximum().compute_output_shape([(2, 3, 1), (None, 3, 5)]) == (2, 3, 5)
    assert layers.Concatenate(axis=1).compute_output_shape([(None, 3, 4), (None, 2, 4)]) == \
        (None, 5, 4)
    assert layers.Concatenate().compute_output_shape([(None, 3), (None, None)]) == \
        (None, None)


def test_functional_forms():
    a, b = (x.astype(np.float32) for x in _xs(2, (2, 3)))
    np.testing.assert_allclose(layers.add([a, b]).numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(layers.subtract([a, b]).numpy(), a - b, rtol=1e-6)
    np.testing.assert_allclose(layers.multiply([a, b]).numpy(), a * b, rtol=1e-6)
    np.testing.assert_allclose(layers.average([a, b]).numpy(), (a + b) / 2, rtol=1e-6)
    np.testing.assert_allclose(layers.maximum([a, b]).numpy(), np.maximum(a, b), rtol=1e-6)
    np.testing.assert_allclose(layers.minimum([a, b]).numpy(), np.minimum(a, b), rtol=1e-6)
    np.testing.assert_allclose(layers.concatenate([a, b], axis=0).numpy(),
                               np.concatenate([a, b], 0), rtol=1e-6)
    np.testing.assert_allclose(layers.dot([a, b], axes=1).numpy(),
                               (a * b).sum(1, keepdims=True), rtol=1e-5)
    assert layers.add([a, b], name="plus") is not None


@pytest.mark.parametrize("axes, normalize, s1, s2, ref", [
    ([1, 2], False, (2, 3, 4), (2, 5, 3), lambda x, y: np.einsum("bij,bkj->bik", x.transpose(
        0, 2, 1), y)),
    (-1, True, (2, 4), (2, 4), lambda x, y: (
        (x / np.linalg.norm(x, axis=1, keepdims=True)) *
        (y / np.linalg.norm(y, axis=1, keepdims=True))).sum(1, keepdims=True)),
    ([3, 1], False, (2, 3, 4, 5), (2, 5, 6), lambda x, y: np.einsum("bijk,bkl->bijl", x, y)),
    ([1, 2], False, (2, 4), (2, 3, 4), lambda x, y: np.einsum("bj,bkj->bk", x, y)),
])
def test_dot_matches_numpy_and_gradients(axes, normalize, s1, s2, ref):
    layer = layers.Dot(axes=axes, normalize=normalize, dtype="float64")
    x, y = RNG.normal(size=s1), RNG.normal(size=s2)
    out = layer([x, y])
    np.testing.assert_allclose(out.numpy(), ref(x, y), rtol=1e-10)
    assert layer.compute_output_shape([s1, s2]) == tuple(out.shape.as_list())
    check_gradients(layer, [x, y])


def test_masks_merge_as_keras():
    a, b = tf.constant(RNG.normal(size=(2, 3, 4))), tf.constant(RNG.normal(size=(2, 3, 4)))
    ma = tf.constant([[True, False, True], [False, False, True]])
    mb = tf.constant([[False, False, True], [True, False, True]])
    a._keras_mask, b._keras_mask = ma, mb
    both = (ma.numpy() | mb.numpy())
    for layer in (layers.Add(), layers.Average(), layers.Maximum(), layers.Multiply()):
        np.testing.assert_array_equal(layer([a, b])._keras_mask.numpy(), both)
    # Maximum: a masked-out position takes the other input's value (the first input's
    # where both are masked out)
    out = layers.Maximum(dtype="float64")([a, b]).numpy()
    an, bn = a.numpy(), b.numpy()
    ka, kb = ma.numpy()[..., None], mb.numpy()[..., None]
    want = np.where(ka & kb, np.maximum(an, bn), np.where(kb & ~ka, bn, an))
    np.testing.assert_allclose(out, want, rtol=1e-12)
    # Multiply: masked factors count as 1, outside both masks 0
    out = layers.Multiply(dtype="float64")([a, b]).numpy()
    fa = np.where(ma.numpy()[..., None], an, 1.0)
    fb = np.where(mb.numpy()[..., None], bn, 1.0)
    np.testing.assert_allclose(out, np.where(both[..., None], fa * fb, 0.0), rtol=1e-12)
    # only one input masked: no output mask for the elementwise merges
    assert getattr(layers.Add()([a, tf.constant(bn)]), "_keras_mask", None) is None
    cat = layers.Concatenate(axis=1)([a, tf.constant(bn)])
    np.testing.assert_array_equal(cat._keras_mask.numpy(),
                                  np.concatenate([ma.numpy(), np.ones((2, 3), bool)], 1))
    assert layers.Dot(axes=2).compute_mask([a, b], [ma, mb]) is None


def test_embedding_masks_flow_into_a_merge():
    emb = layers.Embedding(10, 4, mask_zero=True)
    ids1, ids2 = np.array([[1, 0, 3]]), np.array([[0, 0, 2]])
    out = layers.Add()([emb(ids1), emb(ids2)])
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, False, True]])


@pytest.mark.parametrize("make, shapes", [
    (layers.Add, [(None, 3), (None, 3)]),
    (layers.Multiply, [(None, 2, 3), (None, 3)]),
    (lambda: layers.Concatenate(axis=1), [(None, 2, 3), (None, 4, 3)]),
    (lambda: layers.Dot(axes=[2, 2]), [(None, 2, 3), (None, 4, 3)]),
    (lambda: layers.Dot(axes=[3, 1]), [(None, 2, 3, 4), (None, 4, 5)]),
])
def test_merges_in_tf_function_with_unknown_batch(make, shapes):
    layer = make()
    xs = [RNG.normal(size=(3,) + s[1:]).astype(np.float32) for s in shapes]
    fn = tf.function(lambda a, b: layer([a, b]),
                     input_signature=[tf.TensorSpec(s, tf.float32) for s in shapes])
    np.testing.assert_allclose(fn(*xs).numpy(), layer(xs).numpy(), rtol=1e-5, atol=1e-6)
    out_shape = fn.get_concrete_function().structured_outputs.shape.as_list()
    assert out_shape == list(layer.compute_output_shape(shapes))


def test_merge_errors():
    x2 = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"Inputs have incompatible shapes. Received shapes "
                       r"\(3,\) and \(4,\)"):
        layers.Add()([x2, np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match=r"Cannot merge tensors with different batch sizes. "
                       r"Received tensors with shapes \[\(2, 3\), \(3, 3\)\]"):
        layers.Add()([x2, np.ones((3, 3), np.float32)])
    with pytest.raises(ValueError, match=r"A merge layer should be called on a list of "
                       r"inputs. Received: input_shape=\(2, 3\) \(not a list of shapes\)"):
        layers.Add()(x2)
    with pytest.raises(ValueError, match=r"A `Subtract` layer should be called on exactly 2 "
                       r"inputs. Received: input_shape=\[\(2, 3\), \(2, 3\), \(2, 3\)\]"):
        layers.Subtract()([x2, x2, x2])
    with pytest.raises(ValueError, match=r"A `Concatenate` layer requires inputs with "
                       r"matching shapes except for the concatenation axis. Received: "
                       r"input_shape=\[\(2, 4, 3\), \(2, 5, 3\)\]"):
        layers.Concatenate()([np.ones((2, 4, 3)), np.ones((2, 5, 3))])
    with pytest.raises(ValueError, match="A `Concatenate` layer requires inputs with matching"):
        layers.Concatenate()([np.ones((2, 4, 3)), x2])
    with pytest.raises(ValueError, match=r"A `Concatenate` layer should be called on a list of "
                       r"at least 1 input. Received: input_shape=\(2, 3\)"):
        layers.Concatenate()(x2)
    with pytest.raises(ValueError, match=r"Incompatible input shapes: axis values 3 \(at axis "
                       r"1\) != 4 \(at axis 1\). Full input shapes: \(2, 3\), \(2, 4\)"):
        layers.Dot(axes=1)([x2, np.ones((2, 4), np.float32)])
    with pytest.raises(TypeError, match="Invalid type for argument `axes`: it should be a list "
                       "or an int. Received: axes=a"):
        layers.Dot(axes="a")
    with pytest.raises(ValueError, match=r"it should contain two elements. Received: "
                       r"axes=\[1\]"):
        layers.Dot(axes=[1])
    with pytest.raises(ValueError, match="list elements should be integers"):
        layers.Dot(axes=[1, "a"])
    with pytest.raises(ValueError, match=r"A `Dot` layer should be called on a list of 2 "
                       r"inputs. Received: input_shape=\[\(2, 3\)\]"):
        layers.Dot(axes=1)([x2])
    with pytest.raises(ValueError, match="The lists `inputs` and `mask` should have the same "
                       "length"):
        layers.Add().compute_mask([x2, x2], [None])


def test_embedding_lookup_mask_and_config():
    emb = layers.Embedding(5, 3, mask_zero=True, name="words")
    ids = np.array([[0, 4, -1], [2, 2, 1]])
    out = emb(ids)
    table = emb.embeddings.numpy()
    np.testing.assert_array_equal(out.numpy(), table[ids])   # -1: the last row, as Keras
    np.testing.assert_array_equal(out._keras_mask.numpy(), ids != 0)
    assert emb.compute_output_shape((None, 3)) == (None, 3, 3)
    assert emb(ids.astype(np.float32)).numpy().tolist() == out.numpy().tolist()
    config = emb.get_config()
    assert config["embeddings_initializer"] == {
        "module": "keras.initializers", "class_name": "RandomUniform",
        "config": {"minval": -0.05, "maxval": 0.05, "seed": None}, "registered_name": None}
    assert normal_config(layers.Embedding.from_config(config).get_config()) == \
        normal_config(config)
    assert getattr(layers.Embedding(5, 3)(ids), "_keras_mask", None) is None
    fixed = layers.Embedding(3, 2, weights=np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(fixed(np.array([2, 0])).numpy(), [[4, 5], [0, 1]])


def test_embedding_default_initializer_statistics():
    table = layers.Embedding(1000, 64)
    table.build()
    w = table.embeddings.numpy()
    assert w.min() >= -0.05 and w.max() < 0.05
    assert abs(w.mean()) < 2e-3 and abs(w.std() - 0.1 / np.sqrt(12)) < 1e-3


def test_embedding_gradient_is_indexed_slices_and_sgd_applies_it():
    emb = layers.Embedding(6, 2, embeddings_initializer="zeros")
    ids = np.array([[1, 3], [1, 5]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(emb(ids) * tf.constant([[[1.0, 2.0]]]))
    (grad,) = tape.gradient(loss, emb.trainable_variables)
    assert isinstance(grad, tf.IndexedSlices)
    np.testing.assert_array_equal(np.sort(grad.indices.numpy()), [1, 1, 3, 5])
    tf.keras.optimizers.SGD(0.5).apply_gradients([(grad, emb.embeddings)])
    want = np.zeros((6, 2))
    want[1] = [-1.0, -2.0]       # row 1 looked up twice
    want[[3, 5]] = [-0.5, -1.0]
    np.testing.assert_allclose(emb.embeddings.numpy(), want, rtol=1e-6)


def test_embedding_in_tf_function_and_errors():
    emb = layers.Embedding(4, 3)
    fn = tf.function(lambda ids: emb(ids), input_signature=[tf.TensorSpec([None, 2], tf.int32)])
    ids = np.array([[1, 2], [3, 0], [0, 0]], np.int32)
    np.testing.assert_array_equal(fn(ids).numpy(), emb.embeddings.numpy()[ids])
    assert fn.get_concrete_function().structured_outputs.shape.as_list() == [None, 2, 3]
    with pytest.raises(ValueError, match=r"`input_dim` must be a positive integer. Received: "
                       r"input_dim=0 \(of type int\)."):
        layers.Embedding(0, 3)
    with pytest.raises(ValueError, match=r"`output_dim` must be a positive integer. Received: "
                       r"output_dim=2.0 \(of type float\)."):
        layers.Embedding(3, 2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\] = 5 is not in \[0, 3\)"):
        layers.Embedding(3, 2)(np.array([[5]]))
    with pytest.raises(AttributeError, match="You must build the layer before accessing "
                       "`embeddings`."):
        _ = layers.Embedding(3, 2).embeddings
    with pytest.warns(UserWarning, match="Argument `input_length` is deprecated. Just remove "
                      "it."):
        legacy = layers.Embedding(3, 2, input_length=5)
    assert "input_length" not in legacy.get_config()


def test_masking_values_mask_and_function():
    x = RNG.normal(size=(2, 4, 3))
    x[0, 1] = 0.0
    x[1, [0, 3]] = 0.0
    x[1, 2, 0] = 0.0     # one zero feature does not mask the step
    layer = layers.Masking(dtype="float64")
    out = layer(x)
    keep = (x != 0).any(-1)
    np.testing.assert_array_equal(out._keras_mask.numpy(), keep)
    np.testing.assert_array_equal(out.numpy(), x * keep[..., None])
    np.testing.assert_array_equal(layer.compute_mask(tf.constant(x)).numpy(), keep)
    other = layers.Masking(mask_value=-1.0)
    y = np.full((1, 2, 2), -1.0, np.float32)
    y[0, 1, 1] = 3.0
    np.testing.assert_array_equal(other(y)._keras_mask.numpy(), [[False, True]])
    fn = tf.function(lambda t: layer(t), input_signature=[tf.TensorSpec([None, 4, 3],
                                                                         tf.float64)])
    np.testing.assert_array_equal(fn(x).numpy(), out.numpy())
    config = other.get_config()
    assert config["mask_value"] == -1.0
    assert layers.Masking.from_config(config).mask_value == -1.0


def test_no_warning_when_masks_pass_through_masking_layers():
    emb = layers.Embedding(5, 2, mask_zero=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = layers.Concatenate()([emb(np.array([[0, 1]])), emb(np.array([[2, 0]]))])
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, True]])
