"""An audio front end: stft -> |.|^2 -> mel -> log -> MFCCs, and its gradient, in ndflow
(tf.function) against TensorFlow (when its interpreter is given) on the same batch.

    python benchmarks/signal_features.py [--tf /work/tfvenv/bin/python] [--batch 8]
        [--samples 16000] [--device /CPU:0]

Prints milliseconds per batch (best of 5 repeats); ndflow's outputs are checked against
NumPy's FFT before timing.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import timeit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from machine import cpu_line  # noqa: E402 - benchmarks/ is the script's directory

import ndflow as tf  # noqa: E402


def front_end(signals):
    spectra = tf.signal.stft(signals, 400, 160, fft_length=512)
    power = tf.math.square(tf.abs(spectra))
    mel = tf.signal.linear_to_mel_weight_matrix(40, 257, 16000.0, 20.0, 8000.0)
    log_mel = tf.math.log(tf.tensordot(power, mel, 1) + 1e-6)
    return tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :13]


def features_and_grad(signals):
    with tf.GradientTape() as tape:
        tape.watch(signals)
        mfccs = front_end(signals)
        loss = tf.reduce_sum(mfccs)
    return mfccs, tape.gradient(loss, signals)


# TensorFlow runs the same two functions (their source) in a subprocess.
_TF_SCRIPT = r"""
import json, sys, timeit
import numpy as np
import tensorflow as tf
batch, samples, n = (int(a) for a in sys.argv[1:4])
""" + inspect.getsource(front_end) + inspect.getsource(features_and_grad) + r"""
signals = tf.constant(np.random.default_rng(0).standard_normal((batch, samples)), tf.float32)
out = {}
for key, fn in (("forward", tf.function(front_end)),
                ("forward+grad", tf.function(features_and_grad))):
    fn(signals)
    out[key] = min(timeit.repeat(lambda: [t.numpy() for t in tf.nest.flatten(fn(signals))],
                                 number=n, repeat=5)) / n * 1e3
print(json.dumps(out))
"""


def measure_ndflow(batch: int, samples: int, n: int, device: str) -> dict:
    rng = np.random.default_rng(0)
    with tf.device(device):
        signals = tf.constant(rng.standard_normal((batch, samples)), tf.float32)
        check = tf.signal.stft(signals, 400, 160, fft_length=512).numpy()
        frames = np.lib.stride_tricks.sliding_window_view(signals.numpy(), 400, -1)[:, ::160]
        window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
        np.testing.assert_allclose(check, np.fft.rfft(frames * window, 512), atol=2e-3)
        out = {}
        for key, fn in (("forward", tf.function(front_end)),
                        ("forward+grad", tf.function(features_and_grad))):
            fn(signals)
            out[key] = min(timeit.repeat(lambda: [t.numpy() for t in tf.nest.flatten(
                fn(signals))], number=n, repeat=5)) / n * 1e3  # noqa: B023
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tf", default=None, help="TensorFlow's Python interpreter")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--samples", type=int, default=16000)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--device", default="/CPU:0")
    args = parser.parse_args()
    print(cpu_line())
    print(f"batch {args.batch} x {args.samples} samples: stft(400, 160, 512) -> 40 mel -> "
          f"13 MFCCs; ms per batch, best of 5")
    results = {f"ndflow {args.device}": measure_ndflow(args.batch, args.samples, args.n,
                                                       args.device)}
    if args.tf and os.path.exists(args.tf):
        out = subprocess.run([args.tf, "-c", _TF_SCRIPT, str(args.batch), str(args.samples),
                              str(args.n)], capture_output=True, text=True, cwd="/tmp",
                             check=True)
        results["TensorFlow (CPU)"] = json.loads(out.stdout.strip().splitlines()[-1])
    for who, r in results.items():
        print(f"{who:>24}: forward {r['forward']:8.2f} ms   forward+grad "
              f"{r['forward+grad']:8.2f} ms")


if __name__ == "__main__":
    main()
