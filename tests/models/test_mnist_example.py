"""The MNIST example trains: generated data to 0% error, the bundled digits to >= 95%."""

import pytest

from ndflow.models.image.mnist import convolutional


@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_self_test_reaches_zero_error(api, capsys):
    assert convolutional.main(["--self_test", f"--api={api}"]) == 0.0
    out = capsys.readouterr().out
    assert "Test error: 0.0%" in out and "Minibatch loss" in out


@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_digits_reach_95_percent_accuracy(api, tmp_path, capsys):
    # An empty data dir with downloads failing fast: the example falls back to the digits.
    error = convolutional.main([f"--data_dir={tmp_path}", f"--api={api}", "--num_epochs=12"])
    out = capsys.readouterr()
    assert "UCI handwritten digits" in out.err or "digits" in out.err
    assert error <= 5.0, out.out
    assert "Validation error" in out.out and "Step 100" in out.out
