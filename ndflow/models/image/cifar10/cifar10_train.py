"""Trains the CIFAR-10 model on one device (the tutorial's cifar10_train.py).

    python -m ndflow.models.image.cifar10.cifar10_train [--max_steps N] [--train_dir D]
        [--batch_size B] [--data_dir DIR] [--log_frequency K]

A `tf.compat.v1.train.MonitoredTrainingSession` runs the train op until StopAtStepHook's
`--max_steps`, checkpoints into `--train_dir` (every 600 s, and at the end), fails on a NaN
loss (NanTensorHook), and a logger hook prints `step N, loss = X (R examples/sec; S
sec/batch)` every `--log_frequency` steps. Without CIFAR-10 files in `--data_dir` it says so
and trains on a small generated dataset in CIFAR-10's binary format.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

import ndflow as tf
from ndflow.models.image.cifar10 import cifar10

v1 = tf.compat.v1


def parse_args(argv=None):
    p = cifar10.add_training_arguments(cifar10.add_model_arguments(
        argparse.ArgumentParser(description=__doc__.splitlines()[0])))
    p.add_argument("--log_frequency", type=int, default=10,
                   help="How often to log results to the console.")
    return p.parse_args(argv)


class LoggerHook(v1.train.SessionRunHook):
    """Logs loss and speed every `log_frequency` steps (asks for the loss with each run)."""

    def __init__(self, loss, batch_size: int, log_frequency: int, printer=print):
        self._loss = loss
        self._batch_size = batch_size
        self._log_frequency = log_frequency
        self._print = printer
        self.losses: list[float] = []   # every step's loss, for callers and tests

    def begin(self):
        self._step = -1
        self._start_time = time.time()

    def before_run(self, run_context):
        self._step += 1
        return v1.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))
        if self._step % self._log_frequency == 0:
            now = time.time()
            duration = now - self._start_time
            self._start_time = now
            steps = self._log_frequency if self._step else 1
            examples_per_sec = steps * self._batch_size / duration
            sec_per_batch = duration / steps
            self._print(f"{datetime.now()}: step {self._step}, loss = {run_values.results:.2f} "
                        f"({examples_per_sec:.1f} examples/sec; {sec_per_batch:.3f} sec/batch)")


def train(args) -> LoggerHook:
    """Builds the graph and trains for `args.max_steps` steps; returns the logger hook."""
    with tf.Graph().as_default():
        global_step = v1.train.get_or_create_global_step()
        # The input pipeline stays on the CPU.
        with tf.device("/cpu:0"):
            images, labels = cifar10.distorted_inputs(args.data_dir, args.batch_size,
                                                      args.use_fp16)
        logits = cifar10.inference(images)
        loss = cifar10.loss(logits, labels)
        train_op = cifar10.train(loss, global_step, args.batch_size)
        logger = LoggerHook(loss, args.batch_size, args.log_frequency)
        config = v1.ConfigProto(log_device_placement=args.log_device_placement)
        with v1.train.MonitoredTrainingSession(
                checkpoint_dir=args.train_dir,
                hooks=[v1.train.StopAtStepHook(last_step=args.max_steps),
                       v1.train.NanTensorHook(loss), logger],
                config=config) as mon_sess:
            while not mon_sess.should_stop():
                mon_sess.run(train_op)
    return logger


def main(argv=None) -> LoggerHook:
    args = parse_args(argv)
    cifar10.prepare_dir(args.train_dir)
    return train(args)


if __name__ == "__main__":
    main()
