"""Evaluates CIFAR-10 checkpoints: precision @ 1 with the moving-average weights
(the tutorial's cifar10_eval.py).

    python -m ndflow.models.image.cifar10.cifar10_eval --run_once
        [--checkpoint_dir /tmp/cifar10_train] [--eval_dir D] [--eval_data test|train_eval]
        [--num_examples N] [--batch_size B] [--data_dir DIR]

The model's variables are restored from the shadow variables the training kept
(`ExponentialMovingAverage.variables_to_restore()` mapped into a TF1 Saver), the central
24x24 crops of the test images run through it, and `tf.nn.in_top_k(logits, labels, 1)`
counts the hits. Without `--run_once` it re-evaluates every `--eval_interval_secs`.
"""

from __future__ import annotations

import argparse
import math
import time
from datetime import datetime

import numpy as np

import ndflow as tf
from ndflow.models.image.cifar10 import cifar10, cifar10_input

v1 = tf.compat.v1


def parse_args(argv=None):
    p = cifar10.add_model_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    p.add_argument("--eval_dir", type=str, default="/tmp/cifar10_eval",
                   help="Directory where to write event logs.")
    p.add_argument("--eval_data", type=str, default="test", choices=("test", "train_eval"),
                   help="Either 'test' or 'train_eval'.")
    p.add_argument("--checkpoint_dir", type=str, default="/tmp/cifar10_train",
                   help="Directory where to read model checkpoints.")
    p.add_argument("--eval_interval_secs", type=int, default=60 * 5,
                   help="How often to run the eval.")
    p.add_argument("--num_examples", type=int, default=10000, help="Number of examples to run.")
    p.add_argument("--run_once", action="store_true", help="Whether to run eval only once.")
    return p.parse_args(argv)


def eval_once(saver, summary_writer, top_k_op, summary_op, checkpoint_dir: str,
              num_examples: int, batch_size: int):
    """Restores the latest checkpoint and computes precision @ 1; None without one."""
    with v1.Session() as sess:
        ckpt = v1.train.get_checkpoint_state(checkpoint_dir)
        if not (ckpt and ckpt.model_checkpoint_path):
            print("No checkpoint file found")
            return None
        saver.restore(sess, ckpt.model_checkpoint_path)
        # The path ends in model.ckpt-<global step>.
        global_step = ckpt.model_checkpoint_path.split("/")[-1].split("-")[-1]
        num_iter = int(math.ceil(num_examples / batch_size))
        true_count = 0
        for _ in range(num_iter):
            true_count += int(np.sum(sess.run(top_k_op)))
        precision = true_count / (num_iter * batch_size)
        print(f"{datetime.now()}: precision @ 1 = {precision:.3f}")
        summary = v1.Summary()
        if summary_op is not None:
            summary.ParseFromString(sess.run(summary_op))
        summary.value.add(tag="Precision @ 1", simple_value=precision)
        summary_writer.add_summary(summary, int(global_step))
        return precision


def evaluate(args):
    """Builds the evaluation graph; evaluates once (`--run_once`) or periodically."""
    data_dir = cifar10_input.locate_data(args.data_dir)
    eval_data = args.eval_data == "test"
    files = cifar10_input.EVAL_FILES if eval_data else cifar10_input.TRAIN_FILES
    available = cifar10_input.check_files([f"{data_dir}/{f}" for f in files])
    num_examples = min(args.num_examples, available)  # the generated data has fewer
    with tf.Graph().as_default() as g:
        images, labels = cifar10.inputs(eval_data, args.data_dir, args.batch_size,
                                        args.use_fp16)
        logits = cifar10.inference(images)
        top_k_op = v1.nn.in_top_k(tf.cast(logits, tf.float32), labels, 1)
        variable_averages = tf.train.ExponentialMovingAverage(cifar10.MOVING_AVERAGE_DECAY)
        saver = v1.train.Saver(variable_averages.variables_to_restore())
        summary_op = v1.summary.merge_all()
        summary_writer = v1.summary.FileWriter(args.eval_dir, g)
        while True:
            precision = eval_once(saver, summary_writer, top_k_op, summary_op,
                                  args.checkpoint_dir, num_examples, args.batch_size)
            if args.run_once:
                summary_writer.close()
                return precision
            time.sleep(args.eval_interval_secs)


def main(argv=None):
    args = parse_args(argv)
    cifar10.prepare_dir(args.eval_dir)
    return evaluate(args)


if __name__ == "__main__":
    main()
