"""Keras fit/evaluate/predict with a tf.SparseTensor `x` (Keras 3 slices it by rows into
sparse batches): results equal NumPy's and those of the same model on the densified input,
as in TensorFlow 2.21 (where sparse and dense inputs give the same losses and weights)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.data_adapter import SparseRows

keras = tf.keras


def _data():
    rng = np.random.default_rng(0)
    dense = np.where(rng.random((7, 4)) < 0.4, rng.normal(size=(7, 4)), 0).astype(np.float32)
    dense[2] = 0.0  # an empty row
    y = rng.normal(size=(7, 3)).astype(np.float32)
    return dense, tf.sparse.from_dense(dense), y


def _model(sparse: bool = True):
    inp = keras.Input(shape=(4,), sparse=sparse)
    kernel = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    out = keras.layers.Dense(3, kernel_initializer=keras.initializers.Constant(kernel),
                             bias_initializer="ones")(inp)
    model = keras.Model(inp, out)
    model.compile(keras.optimizers.SGD(0.1), "mse", metrics=["mae"])
    return model


def test_predict_on_a_sparse_tensor_equals_numpy():
    dense, sp, _ = _data()
    model = _model()
    layer = model.layers[-1]
    want = dense @ layer.kernel.numpy() + layer.bias.numpy()
    got = model.predict(sp, batch_size=3, verbose=0)
    assert got.shape == (7, 3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(sp), want, rtol=1e-5, atol=1e-6)
    # a model whose Input is not sparse densifies the SparseTensor (Keras 3)
    np.testing.assert_allclose(_model(sparse=False).predict(sp, batch_size=3, verbose=0), want,
                               rtol=1e-5, atol=1e-6)
    # ... so that layers without a sparse path see a dense tensor
    inp = keras.Input(shape=(4,))
    doubled = keras.Model(inp, keras.layers.Lambda(lambda t: t * 2.0)(inp))
    np.testing.assert_array_equal(doubled.predict(sp, batch_size=3, verbose=0), dense * 2)
    assert keras.Input(shape=(4,), sparse=True).sparse and not inp.sparse
    # a dataset of sparse batches, x alone
    batches = tf.data.Dataset.from_tensor_slices(sp).batch(4)
    np.testing.assert_allclose(model.predict(batches, verbose=0), want, rtol=1e-5, atol=1e-6)


def test_fit_and_evaluate_on_a_sparse_tensor_equal_the_dense_run():
    dense, sp, y = _data()
    results = []
    for x in (sp, dense):
        model = _model()
        history = model.fit(x, y, batch_size=3, epochs=2, shuffle=False, verbose=0)
        results.append((history.history["loss"], model.evaluate(x, y, batch_size=3, verbose=0),
                        model.layers[-1].kernel.numpy()))
    (sparse_loss, sparse_eval, sparse_kernel), (dense_loss, dense_eval, dense_kernel) = results
    np.testing.assert_allclose(sparse_loss, dense_loss, rtol=1e-5)
    np.testing.assert_allclose(sparse_eval, dense_eval, rtol=1e-5)
    np.testing.assert_allclose(sparse_kernel, dense_kernel, rtol=1e-5)
    # the evaluated loss is the mean over samples (batches of 3, 3 and 1 weighted by size)
    model = _model()
    pred = dense @ model.layers[-1].kernel.numpy() + 1.0
    loss, _ = model.evaluate(sp, y, batch_size=3, verbose=0)
    np.testing.assert_allclose(loss, np.mean((pred - y) ** 2), rtol=1e-5)


def test_fit_on_a_dataset_of_sparse_batches_and_validation_split():
    dense, sp, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((sp, y)).batch(3)
    assert ds.element_spec == (tf.SparseTensorSpec([None, 4], tf.float32),
                               tf.TensorSpec([None, 3], tf.float32))
    on_ds, on_arrays = _model(), _model()
    a = on_ds.fit(ds, epochs=2, shuffle=False, verbose=0).history["loss"]
    b = on_arrays.fit(dense, y, batch_size=3, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(a, b.history["loss"], rtol=1e-5)
    split = _model().fit(sp, y, batch_size=3, epochs=1, shuffle=False, verbose=0,
                         validation_split=0.3).history
    dense_split = _model().fit(dense, y, batch_size=3, epochs=1, shuffle=False, verbose=0,
                               validation_split=0.3).history
    assert sorted(split) == ["loss", "mae", "val_loss", "val_mae"]
    for key in split:
        np.testing.assert_allclose(split[key], dense_split[key], rtol=1e-5)


def test_sparse_rows_slice_by_rows_in_order():
    dense, sp, _ = _data()
    rows = SparseRows(sp)
    assert rows.shape == (7, 4)
    for sel in (slice(0, 3), slice(6, 7), np.array([5, 2, 0, 5])):
        part = rows[sel]
        assert isinstance(part, tf.sparse.SparseTensor)
        np.testing.assert_array_equal(tf.sparse.to_dense(part).numpy(), dense[sel])
    # entries not in row-major order are grouped by row first
    shuffled = tf.sparse.SparseTensor([[2, 1], [0, 3], [2, 0]], [1.0, 2.0, 3.0], [3, 4])
    got = tf.sparse.to_dense(tf.sparse.reorder(SparseRows(shuffled)[np.array([2, 0])])).numpy()
    np.testing.assert_array_equal(got, [[3.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]])


def test_sample_counts_must_agree():
    _, sp, y = _data()
    with pytest.raises(ValueError, match="Data cardinality is ambiguous"):
        _model().fit(sp, y[:5], batch_size=2, verbose=0)
