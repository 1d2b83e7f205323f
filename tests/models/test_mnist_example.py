"""The MNIST example trains: generated data to 0% error, the bundled digits to >= 95%."""

import pytest

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
