"""tf.keras.callbacks: what each callback does, against Keras 3 and by hand.

Every scenario of tests/fixtures/keras_callbacks/callback_scenarios.py drives a CallbackList
on a real `Sequential([Dense(2)])` with an `SGD(0.1)` optimizer through the hooks `fit` calls;
the record (stdout, warnings, stop_training, learning rate, saves, CSV files, History, the
callbacks' state, the restored weights) must equal what Keras 3 did (callbacks.json, made by
generate.py with the same code). The tests below check the same things by hand: hook order,
CallbackList's defaults and logs, EarlyStopping and ReduceLROnPlateau decisions, CSV text.
"""

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ndflow as tf
from ndflow.keras.callbacks.callback import is_default
from ndflow.keras.callbacks.callback_list import pythonify_logs
from ndflow.keras.callbacks.monitor_callback import greater, less

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "keras_callbacks"
sys.path.insert(0, str(FIXTURES))
from callback_scenarios import (  # noqa: E402
    CASES,
    CONSTRUCTOR_CASES,
    make_model,
    run_case,
    run_constructor,
)

sys.path.pop(0)
EXPECTED = json.loads((FIXTURES / "callbacks.json").read_text(encoding="utf-8"))
cbks = tf.keras.callbacks


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_callbacks_do_what_keras_does(case, tmp_path):
    got = run_case(tf.keras, case, str(tmp_path))
    want = EXPECTED["cases"][case["name"]]
    for i, (g, w) in enumerate(zip(got["records"], want["records"])):
        assert g == w, f"hook #{i} {w['event']}"
    assert len(got["records"]) == len(want["records"])
    assert got == want


@pytest.mark.parametrize("i", range(len(CONSTRUCTOR_CASES)),
                         ids=[f"{n}-{sorted(k.items())}" for n, k in CONSTRUCTOR_CASES])
def test_constructor_errors_and_warnings_are_keras(i):
    name, kwargs = CONSTRUCTOR_CASES[i]
    assert run_constructor(tf.keras, name, kwargs) == EXPECTED["constructors"][i]


# -- the base class and CallbackList ---------------------------------------------------------
HOOKS = [
    ("on_train_begin", ()), ("on_epoch_begin", (0,)), ("on_train_batch_begin", (0,)),
    ("on_train_batch_end", (0,)), ("on_test_begin", ()), ("on_test_batch_begin", (0,)),
    ("on_test_batch_end", (0,)), ("on_test_end", ()), ("on_epoch_end", (0,)),
    ("on_train_end", ()), ("on_predict_begin", ()), ("on_predict_batch_begin", (0,)),
    ("on_predict_batch_end", (0,)), ("on_predict_end", ()),
]


class Recorder(cbks.Callback):
    def __init__(self, tag, calls):
        super().__init__()
        self.tag, self.calls = tag, calls


for _hook, _ in HOOKS:
    def _make(hook):
        def method(self, *args, logs=None):
            if logs is None and args and isinstance(args[-1], dict):
                *args, logs = args  # epoch and begin/end hooks get logs positionally
            self.calls.append((self.tag, hook, tuple(args), logs))
        return method
    setattr(Recorder, _hook, _make(_hook))


def test_callback_list_calls_each_hook_on_every_callback_in_order():
    calls = []
    a, b = Recorder("a", calls), Recorder("b", calls)
    model = make_model(tf.keras)
    cbl = cbks.CallbackList([a, [b]], model=model, verbose=0, epochs=1, steps=1)
    assert cbl.callbacks == [a, b]  # nested lists are flattened
    assert a.model is model and b.params == {"verbose": 0, "epochs": 1, "steps": 1}
    for hook, args in HOOKS:
        getattr(cbl, hook)(*args, logs={"z": 1, "a": np.float32(0.5)})
    assert [(tag, hook, args) for tag, hook, args, _ in calls] == [
        (tag, hook, args) for hook, args in HOOKS for tag in "ab"]
    # Each callback got the pythonified logs: sorted keys, Python floats.
    for _, _, _, logs in calls:
        assert list(logs) == ["a", "z"] and type(logs["a"]) is float and logs["z"] == 1.0


def test_train_batch_hooks_fall_back_on_batch_aliases():
    calls = []

    class Old(cbks.Callback):
        def on_batch_begin(self, batch, logs=None):
            calls.append(("begin", batch, logs))

        def on_batch_end(self, batch, logs=None):
            calls.append(("end", batch, logs))

    cbl = cbks.CallbackList([Old()])
    cbl.on_train_batch_begin(3)
    cbl.on_train_batch_end(3, {"loss": 2})
    cbl.on_test_batch_end(3, {"loss": 2})  # no alias for test batches
    assert calls == [("begin", 3, {}), ("end", 3, {"loss": 2.0})]


def test_base_hooks_are_marked_default_and_overrides_are_not():
    base = cbks.Callback()
    for hook, _ in HOOKS:
        assert is_default(getattr(base, hook)), hook
    assert not is_default(Recorder("r", []).on_epoch_end)
    assert base.model is None and base.params is None


def test_default_history_and_progbar_are_added_once():
    model = make_model(tf.keras)
    cbl = cbks.CallbackList(None, add_history=True, add_progbar=True, model=model,
                            verbose=0, epochs=2, steps=3)
    history, progbar = cbl.callbacks
    assert isinstance(history, cbks.History) and isinstance(progbar, cbks.ProgbarLogger)
    assert model.history is history and progbar.target == 3 and progbar.epochs == 2
    mine = cbks.History()
    cbl = cbks.CallbackList([mine], add_history=True, add_progbar=False, model=model)
    assert cbl.callbacks == [mine] and model.history is mine
    cbl = cbks.CallbackList([], add_progbar=True)  # no params: set_params is not called
    assert cbl.params == {} and cbl.callbacks[0].target is None


def test_end_without_begin_is_an_error():
    cbl = cbks.CallbackList([])
    cbl.on_test_begin()
    cbl.on_test_end()
    with pytest.raises(ValueError, match=r"`on_xxx_end` called without corresponding "
                                         r"`on_xxx_begin`"):
        cbl.on_predict_end()


def test_pythonify_logs():
    t = tf.constant(2.5)
    vec = np.array([1.0, 2.0])
    out = pythonify_logs({"b": t, "a": {"x": np.float64(1.5), "y": 3}, "v": vec, "s": "no"})
    assert list(out) == ["x", "y", "b", "s", "v"]  # sorted, nested dicts flattened in place
    assert out["b"] == 2.5 and type(out["b"]) is float and out["y"] == 3.0
    assert out["v"] is vec and out["s"] == "no"
    assert pythonify_logs(None) == {}


def test_history_keeps_values_across_runs_and_resets_epochs():
    model = make_model(tf.keras)
    cbl = cbks.CallbackList(None, add_history=True, model=model)
    for run in range(2):
        cbl.on_train_begin()
        for e in range(2):
            cbl.on_epoch_end(e, {"loss": 10 * run + e, "val_loss": tf.constant(0.5)})
        cbl.on_train_end()
    assert model.history.history == {"loss": [0.0, 1.0, 10.0, 11.0], "val_loss": [0.5] * 4}
    assert model.history.epoch == [0, 1]


def test_lambda_callback():
    seen = []
    cb = cbks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(("e", epoch, logs)),
                             on_train_batch_end=lambda batch, logs: seen.append(("b", batch)),
                             on_test_end=lambda logs: seen.append(("t", logs)))
    cbl = cbks.CallbackList([cb])
    cbl.on_epoch_begin(0)  # not given: the base no-op
    cbl.on_train_batch_end(4, {})
    cbl.on_epoch_end(1, {"loss": 1})
    cbl.on_test_begin()
    cbl.on_test_end({"loss": 2})
    assert seen == [("b", 4), ("e", 1, {"loss": 1.0}), ("t", {"loss": 2.0})]


# -- decisions, by hand ----------------------------------------------------------------------
def _epochs(callbacks, model, values, key="loss"):
    """Epoch ends as fit calls them (stopping when asked); returns the learning rate after
    each epoch and the epoch at which training stopped (None if not)."""
    cbl = cbks.CallbackList(callbacks, model=model)
    model.stop_training = False
    cbl.on_train_begin()
    lrs, stopped = [], None
    for e, v in enumerate(values):
        cbl.on_epoch_begin(e)
        cbl.on_epoch_end(e, {key: v})
        lrs.append(float(np.asarray(model.optimizer.learning_rate)))
        if model.stop_training:
            stopped = e
            break
    cbl.on_train_end()
    return lrs, stopped


def test_early_stopping_by_hand():
    model = make_model(tf.keras)
    # best 1.0, 0.9 (wait 0), 0.95 (wait 1), 0.92 (wait 2 = patience): stop at epoch 3.
    assert _epochs([cbks.EarlyStopping("loss", patience=2)], model,
                   [1.0, 0.9, 0.95, 0.92, 0.5])[1] == 3
    # min_delta 0.1: 0.95 and 0.86 are no improvement on 1.0 (0.85 would not be either).
    assert _epochs([cbks.EarlyStopping("loss", min_delta=0.1, patience=1)], model,
                   [1.0, 0.95, 0.86, 0.5])[1] == 1
    # mode max with patience 0: the first epoch that does not grow stops.
    assert _epochs([cbks.EarlyStopping("auc", mode="max")], model,
                   [0.1, 0.2, 0.3, 0.3], key="auc")[1] == 3
    # Never before start_from_epoch, never at epoch 0.
    assert _epochs([cbks.EarlyStopping("loss", start_from_epoch=3)], model,
                   [1.0, 2.0, 3.0, 4.0, 5.0])[1] == 4
    assert _epochs([cbks.EarlyStopping("loss")], model, [1.0])[1] is None


def test_early_stopping_restores_the_best_epochs_weights(capsys):
    model = make_model(tf.keras)
    es = cbks.EarlyStopping("loss", patience=1, restore_best_weights=True, verbose=1)
    cbl = cbks.CallbackList([es], model=model)
    model.stop_training = False
    cbl.on_train_begin()
    for e, loss in enumerate([3.0, 1.0, 2.0]):
        model.set_weights([np.full(w.shape, 10.0 * e, w.dtype) for w in model.get_weights()])
        cbl.on_epoch_end(e, {"loss": loss})
    assert model.stop_training
    cbl.on_train_end()
    assert all((w == 10.0).all() for w in model.get_weights())
    assert capsys.readouterr().out == ("Epoch 3: early stopping\nRestoring model weights from "
                                       "the end of the best epoch: 2.\n")


def test_reduce_lr_on_plateau_by_hand():
    model = make_model(tf.keras)
    rl = cbks.ReduceLROnPlateau("loss", factor=0.5, patience=2, cooldown=1, min_lr=0.02)
    lrs, _ = _epochs([rl], model, [1.0] * 10)
    f32 = lambda x: float(np.float32(x))
    # Epochs 0-1 wait; 2 reduces (then a cooldown epoch, then wait again); clipped at 0.02.
    assert lrs == [f32(0.1), f32(0.1), f32(0.05), f32(0.05), f32(0.025), f32(0.025),
                   f32(0.02), f32(0.02), f32(0.02), f32(0.02)]
    with pytest.raises(ValueError, match="does not support a factor >= 1.0"):
        cbks.ReduceLROnPlateau(factor=2.0)


def test_learning_rate_scheduler_sets_and_logs_the_rate():
    model = make_model(tf.keras)
    sched = cbks.LearningRateScheduler(lambda epoch, lr: 0.5 ** (epoch + 1))
    history = cbks.History()
    lrs, _ = _epochs([sched, history], model, [1.0, 1.0, 1.0])
    assert lrs == [0.5, 0.25, 0.125]
    assert history.history["learning_rate"] == [0.5, 0.25, 0.125]
    model.optimizer = SimpleNamespace()
    with pytest.raises(ValueError, match='Optimizer must have a "learning_rate" attribute'):
        sched.on_epoch_begin(0)


def test_terminate_on_nan_through_the_train_batch_hook(capsys):
    model = make_model(tf.keras)
    cbl = cbks.CallbackList([cbks.TerminateOnNaN()], model=model)
    model.stop_training = False
    cbl.on_train_batch_end(0, {"loss": 1.0})
    assert not model.stop_training
    cbl.on_train_batch_end(1, {"loss": tf.constant(math.nan)})
    assert model.stop_training
    assert capsys.readouterr().out == "Batch 1: Invalid loss, terminating training\n"


def test_csv_logger_text(tmp_path):
    path = tmp_path / "sub.csv"
    cbl = cbks.CallbackList([cbks.CSVLogger(path)])
    cbl.on_train_begin()
    cbl.on_epoch_end(0, {"loss": 0.5, "acc": 1})
    assert path.read_bytes() == b"epoch,acc,loss,val_acc,val_loss\r\n0,1.0,0.5,NA,NA\r\n"
    cbl.on_epoch_end(1, {"loss": 0.25, "val_acc": 0.5})  # flushed at every epoch
    assert path.read_bytes().endswith(b"1,NA,0.25,0.5,NA\r\n")
    cbl.on_train_end()
    assert cbl.callbacks[0].csv_file.closed


# -- monitor direction and comparisons -------------------------------------------------------
def test_keras_comparisons_take_python_floats_as_float32():
    # keras.ops.less in TF 2.21: less(0.5 - 1e-9, 0.5) is False (both float32 0.5), but with
    # a float64 NumPy operand it is True.
    assert not less(0.5 - 1e-9, 0.5)
    assert less(np.float64(0.5 - 1e-9), 0.5)
    assert greater(0.30000001 + 1e-7, 0.3) and not greater(0.30000001, 0.3)
    assert less(1, 2) and not greater(1, 1.0)


def test_auto_mode_follows_the_compiled_metrics_direction():
    accuracy = SimpleNamespace(name="accuracy", _direction="up")
    mse = SimpleNamespace(name="mse", _direction="down")
    model = SimpleNamespace(metrics=[SimpleNamespace(metrics=[accuracy, mse])],
                            stop_training=False)
    for monitor, op in [("val_accuracy", greater), ("mse", less), ("val_loss", less)]:
        es = cbks.EarlyStopping(monitor)
        es.set_model(model)
        es._set_monitor_op()
        assert es.monitor_op is op, monitor
    es = cbks.EarlyStopping("val_f1")
    es.set_model(model)
    with pytest.raises(ValueError, match="isn't able to automatically determine"):
        es._set_monitor_op()


# -- real saving -----------------------------------------------------------------------------
def test_model_checkpoint_writes_weights_files(tmp_path):
    model = make_model(tf.keras)
    model.set_weights([np.full(w.shape, 0.5, w.dtype) for w in model.get_weights()])
    mc = cbks.ModelCheckpoint(str(tmp_path / "w" / "{epoch:02d}.weights.h5"),
                              save_weights_only=True)
    cbl = cbks.CallbackList([mc], model=model)
    cbl.on_train_begin()
    for e in range(2):
        cbl.on_epoch_begin(e)
        cbl.on_epoch_end(e, {"loss": 1.0})
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["01.weights.h5",
                                                                   "02.weights.h5"]
    fresh = make_model(tf.keras)  # zeros
    fresh.load_weights(str(tmp_path / "w" / "02.weights.h5"))
    for loaded, saved in zip(fresh.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(loaded, saved)
