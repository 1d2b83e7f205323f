"""keras.layers.STFTSpectrogram on a batch of 16 one-second signals (16 x 16000 samples, one
channel, float32): ndflow vs TensorFlow 2.21's Keras 3.15.

    python benchmarks/keras_stft.py [--rounds 3] [--repeats 10] [--tf PYTHON]

Settings: Keras' defaults (mode "log", frame 256, step 128, fft 256, hann, "valid"); speech
frames (mode "magnitude", frame 400, step 160, fft 512, hamming, "same"); and mode "stft" with
frame 512, step 256, fft 512, expand_dims. Figures, each the fastest of `repeats` calls
after a warm-up, the best over `rounds` runs (the machine may be shared): the eager call, the call
inside a `tf.function`, and a training step's gradient (forward, the loss, the gradients of
both kernels) in a `tf.function`. TensorFlow's Keras takes named windows from SciPy, which
its venv lacks: the TensorFlow worker gets the same windows as arrays (Keras' arithmetic is
the same either way). The same source runs in both interpreters (`--worker MODULE`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate, print_ratios

SETTINGS = {
    "defaults_log": dict(mode="log", frame_length=256, frame_step=128, fft_length=256,
                         window="hann"),
    "speech_magnitude": dict(mode="magnitude", frame_length=400, frame_step=160,
                             fft_length=512, window="hamming", padding="same"),
    "stft_image": dict(mode="stft", frame_length=512, frame_step=256, fft_length=512,
                       window="hann", expand_dims=True),
}
BATCH, SAMPLES = 16, 16000


def _symmetric(name, m):
    n = np.arange(m)
    a = 0.5 if name == "hann" else 0.54
    return a - (1 - a) * np.cos(2 * np.pi * n / (m - 1))


def _best_time(fn, repeats):
    """The fastest of `repeats` calls after a warm-up (others share this machine: the
    fastest call is the one least disturbed)."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.min(times))


def worker(module: str, repeats: int) -> dict:
    tf = importlib.import_module(module)
    keras = importlib.import_module("keras") if module == "tensorflow" else tf.keras
    x = tf.constant(np.random.default_rng(0).standard_normal((BATCH, SAMPLES, 1))
                    .astype(np.float32))
    out = {}
    for name, kwargs in SETTINGS.items():
        kwargs = dict(kwargs)
        if module == "tensorflow":   # (no SciPy there: the same window as an array)
            kwargs["window"] = _symmetric(kwargs["window"], kwargs["frame_length"]).tolist()
        layer = keras.layers.STFTSpectrogram(**kwargs)
        layer(x)
        compiled = tf.function(lambda v, layer=layer: layer(v))

        @tf.function
        def grad(v, layer=layer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(layer(v)))
            return tape.gradient(loss, layer.trainable_variables)

        out[f"{name} eager"] = _best_time(lambda f=layer: np.asarray(f(x)), repeats)
        out[f"{name} function"] = _best_time(lambda f=compiled: np.asarray(f(x)), repeats)
        out[f"{name} gradient"] = _best_time(
            lambda f=grad: [np.asarray(g) for g in f(x)], repeats)
    return out



def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeats)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    ours, theirs = alternate(__file__, args.rounds, "--repeats", args.repeats, tf_python=args.tf)
    print(f"STFTSpectrogram on {BATCH} x {SAMPLES} samples (fastest of {args.repeats}, "
          f"best of {args.rounds} runs)")
    print_ratios(ours, theirs, scale=1e3, width=28)


if __name__ == "__main__":
    main()
