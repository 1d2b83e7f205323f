"""Simple, end-to-end, LeNet-5-like convolutional MNIST model example.

The classic `tensorflow/models/image/mnist/convolutional.py`, written with ndflow's TF1 API
(graph + Session). `--api=tf2` trains the same model with `tf.function` + `GradientTape`.
Run: `python -m ndflow.models.image.mnist.convolutional [--data_dir DIR] [--self_test]
[--logdir DIR] [--checkpoint_dir DIR]`.
Without MNIST files and without network it trains on the bundled UCI digits.

`--logdir` writes TensorBoard logs as a TF1 program does: `tf.compat.v1.summary` scalars
(loss, learning rate, validation error) and weight histograms merged by `merge_all`, and
the graph, through a `FileWriter`. `--checkpoint_dir` saves the variables with a
`tf.compat.v1.train.Saver` (`model.ckpt-<global step>`) every EVAL_FREQUENCY steps and at
the end; a rerun with the same directory restores the latest checkpoint and continues at
its global step.
"""

from __future__ import annotations

import argparse
import os
import time

import ndflow as tf
from ndflow.models.image.mnist import convolutional_tf2
from ndflow.models.image.mnist.dataset import (
    IMAGE_SIZE,
    NUM_CHANNELS,
    error_rate,
    load,
)
from ndflow.models.image.mnist.model import (
    BATCH_SIZE,
    EVAL_BATCH_SIZE,
    EVAL_FREQUENCY,
    SEED,
    build_variables,
    data_type,
    eval_in_batches,
    model,
    num_epochs_for,
    regularized_loss,
    report,
)
from ndflow.models.image.mnist.run_info import run_line


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data_dir", default=None,
                   help="directory of the four MNIST .gz files (default ~/.ndflow/datasets/mnist)")
    p.add_argument("--use_fp16", action="store_true", help="use half floats instead of float32")
    p.add_argument("--self_test", action="store_true", help="train on generated data (0%% error)")
    p.add_argument("--api", choices=("tf1", "tf2"), default="tf1",
                   help="tf1: graph + Session (default); tf2: tf.function + GradientTape")
    p.add_argument("--num_epochs", type=float, default=None)
    p.add_argument("--logdir", default=None,
                   help="write TensorBoard logs (scalars, histograms, graph) here (tf1)")
    p.add_argument("--checkpoint_dir", default=None,
                   help="save checkpoints here; resume from the latest one (tf1)")
    args = p.parse_args(argv)
    if args.api == "tf2" and (args.logdir or args.checkpoint_dir):
        p.error("--logdir and --checkpoint_dir are options of the TF1 program (--api=tf1)")
    return args


def train_tf1(d, num_epochs: int, dtype, logdir: str | None = None,
              checkpoint_dir: str | None = None) -> float:
    """Graph + Session training, as the original. Returns the test error in percent."""
    v1 = tf.compat.v1
    train_size = d.train_labels.shape[0]
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(SEED)
        train_data_node = v1.placeholder(
            dtype, shape=(BATCH_SIZE, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS))
        train_labels_node = v1.placeholder(tf.int64, shape=(BATCH_SIZE,))
        eval_data = v1.placeholder(dtype, shape=(EVAL_BATCH_SIZE, IMAGE_SIZE, IMAGE_SIZE,
                                                 NUM_CHANNELS))
        p = build_variables(dtype)
        logits = model(p, train_data_node, True)
        loss = regularized_loss(p, logits, train_labels_node)
        # Decay once per epoch, using an exponential schedule starting at 0.01.
        batch = tf.Variable(0, dtype=dtype)
        learning_rate = v1.train.exponential_decay(0.01, batch * BATCH_SIZE, train_size, 0.95,
                                                   staircase=True)
        optimizer = v1.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss,
                                                                             global_step=batch)
        train_prediction = tf.nn.softmax(logits)
        eval_prediction = tf.nn.softmax(model(p, eval_data))
        summaries = _summary_ops(p, loss, learning_rate) if logdir else None
        saver = v1.train.Saver(max_to_keep=3) if checkpoint_dir else None

        start_time = time.time()
        with v1.Session() as sess:
            v1.global_variables_initializer().run()
            print("Initialized!")
            first_step = _restore(sess, saver, checkpoint_dir, batch) if saver else 0
            writer = v1.summary.FileWriter(logdir, sess.graph) if logdir else None

            def predict(x):
                return sess.run(eval_prediction, feed_dict={eval_data: x})

            num_steps = int(num_epochs * train_size) // BATCH_SIZE
            for step in range(first_step, num_steps):
                offset = (step * BATCH_SIZE) % (train_size - BATCH_SIZE)
                batch_data = d.train_data[offset:(offset + BATCH_SIZE), ...]
                batch_labels = d.train_labels[offset:(offset + BATCH_SIZE)]
                feed_dict = {train_data_node: batch_data, train_labels_node: batch_labels}
                sess.run(optimizer, feed_dict=feed_dict)
                if step % EVAL_FREQUENCY == 0:
                    fetches = [loss, learning_rate, train_prediction]
                    l_, lr, predictions, *summary = sess.run(
                        fetches + ([summaries] if writer else []), feed_dict=feed_dict)
                    elapsed = time.time() - start_time
                    start_time = time.time()
                    validation_error = error_rate(
                        eval_in_batches(d.validation_data, predict), d.validation_labels)
                    report(step, train_size, elapsed, l_, lr, predictions, batch_labels,
                           validation_error)
                    if writer:
                        writer.add_summary(summary[0], step)
                        writer.add_summary(_scalar("validation_error", validation_error), step)
                if saver and (step + 1) % EVAL_FREQUENCY == 0:
                    _save(sess, saver, checkpoint_dir, step + 1)
            if saver and num_steps > first_step and num_steps % EVAL_FREQUENCY:
                _save(sess, saver, checkpoint_dir, num_steps)
            test_error = error_rate(eval_in_batches(d.test_data, predict), d.test_labels)
            if writer:
                writer.add_summary(_scalar("test_error", test_error), max(num_steps, first_step))
                writer.close()
            return test_error


def _summary_ops(p, loss, learning_rate):
    """The TF1 summaries of the training graph, merged into one op."""
    v1 = tf.compat.v1
    v1.summary.scalar("loss", loss)
    v1.summary.scalar("learning_rate", learning_rate)
    for name, variable in p.items():
        v1.summary.histogram(name, variable)
    return v1.summary.merge_all()


def _scalar(tag: str, value: float):
    """A Summary protocol buffer of one Python scalar (for values computed outside the graph)."""
    summary = tf.compat.v1.summary.Summary()
    summary.value.add(tag=tag, simple_value=float(value))
    return summary


def _restore(sess, saver, checkpoint_dir: str, global_step) -> int:
    """Restores the latest checkpoint in `checkpoint_dir`, if any; returns the step to start at."""
    latest = tf.compat.v1.train.latest_checkpoint(checkpoint_dir)
    if latest is None:
        return 0
    saver.restore(sess, latest)
    step = int(sess.run(global_step))
    print(f"Restored {latest}: continuing at step {step}")
    return step


def _save(sess, saver, checkpoint_dir: str, step: int) -> None:
    os.makedirs(checkpoint_dir, exist_ok=True)
    path = saver.save(sess, os.path.join(checkpoint_dir, "model.ckpt"), global_step=step)
    print(f"Saved checkpoint {path}")


def main(argv=None) -> float:
    args = parse_args(argv)
    d = load(args.data_dir, args.self_test, EVAL_BATCH_SIZE)
    num_epochs = num_epochs_for(args.num_epochs, args.self_test, d.source)
    dtype = data_type(args.use_fp16)
    print(run_line(dtype.name))
    if args.api == "tf2":
        test_error = convolutional_tf2.train(d, num_epochs, dtype)
    else:
        test_error = train_tf1(d, num_epochs, dtype, args.logdir, args.checkpoint_dir)
    print(f"Test error: {test_error:.1f}%")
    if args.self_test:
        print("test_error", test_error)
        assert test_error == 0.0, f"expected 0.0 test_error, got {test_error:.2f}"
    return test_error


if __name__ == "__main__":
    main()
