"""The MNIST example trains: generated data to 0% error, the bundled digits to >= 95%."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.models.image.mnist import convolutional
from ndflow.passes.amp.device import cpu_has_bf16_units


@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_self_test_reaches_zero_error(api, capsys):
    assert convolutional.main(["--self_test", f"--api={api}"]) == 0.0
    out = capsys.readouterr().out
    assert "Test error: 0.0%" in out and "Minibatch loss" in out


# 6 epochs (~120 steps) is the shortest run that reaches 95% with a margin (about 97%).
@pytest.mark.slow
@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_digits_reach_95_percent_accuracy(api, tmp_path, capsys):
    # An empty data dir with downloads failing fast: the example falls back to the digits.
    error = convolutional.main([f"--data_dir={tmp_path}", f"--api={api}", "--num_epochs=6"])
    out = capsys.readouterr()
    assert "Training on the bundled UCI handwritten digits" in out.err
    assert error <= 5.0, out.out
    assert "Validation error" in out.out and "Step 100" in out.out


@pytest.mark.slow
@pytest.mark.skipif(not cpu_has_bf16_units(), reason="the CPU has no bf16 units (AVX512_BF16/AMX)")
def test_digits_with_amp_bf16_match_float32_accuracy(tmp_path, monkeypatch, capsys):
    # The NVIDIA container switch: bf16 rewrite on this CPU plus dynamic loss scaling.
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    error = convolutional.main([f"--data_dir={tmp_path}", "--num_epochs=6"])
    out = capsys.readouterr()
    assert "Converted" in out.err and "bfloat16" in out.err  # the rewrite really ran
    assert error <= 5.0, out.out


@pytest.mark.slow  # a full training run: CI's slow pass
def test_tf1_logdir_and_checkpoint_dir_resume_at_the_saved_step(tmp_path, capsys):
    """Half an epoch (2 steps) with a checkpoint, as if interrupted; the rerun restores it and
    continues at step 2. TensorBoard's loader reads the TF1 summaries and the graph."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ckpt, logs = tmp_path / "ckpt", tmp_path / "logs"
    assert convolutional.main(["--self_test", "--num_epochs=0.5", f"--checkpoint_dir={ckpt}",
                               f"--logdir={logs}"]) == 0.0
    assert tf.train.latest_checkpoint(str(ckpt)) == str(ckpt / "model.ckpt-2")
    first = tf.train.load_checkpoint(str(ckpt / "model.ckpt-2"))
    assert first.get_tensor("Variable_8") == 2.0   # the global step (`batch` in the example)
    events = EventAccumulator(str(logs)).Reload()
    assert {"loss", "learning_rate", "validation_error", "test_error"} <= \
        set(events.Tags()["scalars"])
    assert {"conv1_weights", "fc2_biases"} <= set(events.Tags()["histograms"])
    assert events.Tags()["graph"] and events.Scalars("learning_rate")[0].value == \
        pytest.approx(0.01)
    capsys.readouterr()

    assert convolutional.main(["--self_test", "--num_epochs=1",
                               f"--checkpoint_dir={ckpt}"]) == 0.0
    out = capsys.readouterr().out
    assert f"Restored {ckpt / 'model.ckpt-2'}: continuing at step 2" in out
    assert "Step 0 " not in out   # steps 0 and 1 are not run again
    second = tf.train.load_checkpoint(str(ckpt / "model.ckpt-4"))
    assert second.get_tensor("Variable_8") == 4.0
    assert not np.array_equal(second.get_tensor("Variable_7"), first.get_tensor("Variable_7"))


def test_tf2_api_rejects_tf1_only_options(capsys):
    with pytest.raises(SystemExit):
        convolutional.main(["--self_test", "--api=tf2", "--logdir=/tmp/x"])
    assert "--logdir and --checkpoint_dir are options of the TF1 program" in \
        capsys.readouterr().err
