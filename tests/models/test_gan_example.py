"""The Keras GAN example (ndflow/models/gan/train.py): a subclassed Model with a custom
train_step and two optimizers, under each precision policy and each loss-scaling switch;
per-epoch losses printed and written to CSV."""

import csv
import math

import pytest

import ndflow as tf
from ndflow.models.gan import train

keras = tf.keras


@pytest.fixture(autouse=True)
def float32_policy_afterwards():
    yield
    keras.mixed_precision.set_global_policy("float32")


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("precision,compute", [
    ("float32", "float32"),
    pytest.param("mixed_float16", "float16", marks=pytest.mark.slow),  # CI's slow pass
    pytest.param("mixed_bfloat16", "bfloat16", marks=pytest.mark.slow)])
def test_self_test_under_each_precision(precision, compute, tmp_path, capsys):
    history = train.main(["--self_test", f"--precision={precision}", f"--log_dir={tmp_path}"])
    out = capsys.readouterr().out
    assert f"policy {precision}, loss scaling none" in out and "Self-test passed." in out
    assert "2/2 - " in out and "d_loss: " in out and "g_loss: " in out  # fit's epoch line
    gan = history.model
    for model in (gan.generator, gan.discriminator):
        assert model.layers[0].compute_dtype == compute
        assert model.layers[-1].compute_dtype == "float32"  # the output layers
        assert all(w.dtype == tf.float32 for w in model.weights)
    assert not isinstance(gan.d_optimizer, keras.mixed_precision.LossScaleOptimizer)
    rows = _rows(tmp_path / "losses.csv")
    assert len(rows) == 1 and rows[0]["epoch"] == "0"
    for key in ("d_loss", "g_loss"):
        value = float(rows[0][key])
        assert math.isfinite(value) and 0 < value < 5
        assert value == pytest.approx(history.history[key][0])
    assert "d_loss_scale" not in rows[0]


# float16 convolution gradients are slow on CPU (~60 ms a call): the default pass runs one
# epoch; the two-epoch runs (a CSV row per epoch, no step skipped across epochs) are CI's
# slow pass.
@pytest.mark.parametrize("scaling,scale,epochs", [
    ("dynamic", 2.0 ** 15, 1),
    pytest.param("dynamic", 2.0 ** 15, 2, marks=pytest.mark.slow),
    pytest.param("fixed:128", 128.0, 2, marks=pytest.mark.slow)])
def test_loss_scaling_runs(scaling, scale, epochs, tmp_path, capsys):
    history = train.main(["--self_test", "--precision=mixed_float16", f"--loss_scaling={scaling}",
                          f"--epochs={epochs}", f"--log_dir={tmp_path}"])
    assert f"loss scaling {scaling}" in capsys.readouterr().out
    gan = history.model
    for opt in (gan.d_optimizer, gan.g_optimizer):
        assert isinstance(opt, keras.mixed_precision.LossScaleOptimizer)
        assert opt.dynamic == (scaling == "dynamic")
        assert int(opt.iterations.numpy()) == 2 * epochs  # epochs of 2 steps, none skipped
    rows = _rows(tmp_path / "losses.csv")
    assert [r["epoch"] for r in rows] == [str(e) for e in range(epochs)]
    for row in rows:
        assert float(row["d_loss_scale"]) == float(row["g_loss_scale"]) == scale
        assert all(math.isfinite(float(row[k])) for k in ("d_loss", "g_loss"))


@pytest.mark.slow
def test_scaled_and_unscaled_runs_agree(tmp_path):
    """Loss scaling by a power of two only changes the gradients' exponent: in float32 the
    losses of a scaled and an unscaled run from the same seeds are the same."""
    runs = [train.main(["--self_test", f"--loss_scaling={s}", f"--log_dir={tmp_path / s}"])
            for s in ("none", "fixed:1024")]
    for key in ("d_loss", "g_loss"):
        assert runs[0].history[key] == pytest.approx(runs[1].history[key], rel=1e-5)


@pytest.mark.parametrize("bad", ["fixed:0.5", "fixed:x", "static", "fixed:inf"])
def test_bad_loss_scaling_is_rejected(bad, capsys):
    with pytest.raises(SystemExit):
        train.main(["--self_test", f"--loss_scaling={bad}"])
    assert "--loss_scaling must be none, dynamic or fixed:N" in capsys.readouterr().err
