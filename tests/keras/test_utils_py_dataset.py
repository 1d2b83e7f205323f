"""tf.keras.utils.PyDataset / Sequence in fit/evaluate/predict, as Keras 3."""

import threading
import warnings

import numpy as np
import pytest

import ndflow as tf


class Squares(tf.keras.utils.PyDataset):
    def __init__(self, n=6, batch=2, **kwargs):
        super().__init__(**kwargs)
        self.x = np.arange(n, dtype="float32").reshape(n, 1)
        self.batch = batch
        self.events, self.threads, self.seen = [], set(), []

    def __len__(self):
        return len(self.x) // self.batch

    def __getitem__(self, i):
        self.threads.add(threading.current_thread().name)
        self.seen.append(i)
        sl = slice(i * self.batch, (i + 1) * self.batch)
        return self.x[sl], 2 * self.x[sl]

    def on_epoch_begin(self):
        self.events.append("begin")

    def on_epoch_end(self):
        self.events.append("end")


def _model():
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def test_fit_calls_epoch_hooks_and_sees_every_batch():
    data = Squares()
    history = _model().fit(data, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert data.events == ["begin", "end", "begin", "end"]
    assert sorted(data.seen) == [0, 0, 1, 1, 2, 2]


def test_fit_shuffles_batch_order_evaluate_does_not():
    data = Squares(n=40, batch=2)
    model = _model()
    model.fit(data, epochs=1, verbose=0, shuffle=True)
    assert sorted(data.seen) == list(range(20)) and data.seen != list(range(20))
    data.seen.clear()
    model.evaluate(data, verbose=0)
    assert data.seen == list(range(20))


def test_workers_fetch_in_threads_in_order():
    data = Squares(n=8, batch=1, workers=3, max_queue_size=2)
    out = _model().predict(data, verbose=0)
    assert out.shape == (8, 1)
    assert any(name.startswith("PyDataset_worker") for name in data.threads)
    model = _model()
    want = model.predict(np.arange(8, dtype="float32").reshape(8, 1), verbose=0)
    np.testing.assert_allclose(model.predict(data, verbose=0), want, rtol=1e-6)


def test_multiprocessing_is_threads_with_a_note():
    data = Squares(workers=2, use_multiprocessing=True)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        loss = _model().evaluate(data, verbose=0)
    assert np.isfinite(loss) and data.events == ["begin", "end"]


def test_bad_batches_and_missing_super_init():
    class Bad(tf.keras.utils.Sequence):
        def __init__(self):  # no super().__init__()
            pass

        def __len__(self):
            return 1

        def __getitem__(self, i):
            return "oops"

    with pytest.warns(UserWarning, match=r"should call `super\(\).__init__"):
        with pytest.raises(ValueError, match="must return a tuple or a dict"):
            _model().fit(Bad(), verbose=0)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        _model().fit(Squares(), np.zeros(6), verbose=0)


def test_endless_dataset_needs_steps():
    class Endless(tf.keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.calls = 0

        @property
        def num_batches(self):
            return None

        def __getitem__(self, i):
            self.calls += 1
            return np.ones((2, 1), "float32"), np.ones((2, 1), "float32")

    data = Endless()
    _model().fit(data, epochs=2, steps_per_epoch=3, verbose=0)
    assert data.calls == 6
