"""Simple, end-to-end, LeNet-5-like convolutional MNIST model example.

The classic `tensorflow/models/image/mnist/convolutional.py`, written with ndflow's TF1 API
(graph + Session). `--api=tf2` trains the same model with `tf.function` + `GradientTape`.
Run: `python -m ndflow.models.image.mnist.convolutional [--data_dir DIR] [--self_test]`.
Without MNIST files and without network it trains on the bundled UCI digits.
"""

from __future__ import annotations

import argparse
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


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data_dir", default=None,
                   help="directory of the four MNIST .gz files (default ~/.ndflow/datasets/mnist)")
    p.add_argument("--use_fp16", action="store_true", help="use half floats instead of float32")
    p.add_argument("--self_test", action="store_true", help="train on generated data (0%% error)")
    p.add_argument("--api", choices=("tf1", "tf2"), default="tf1",
                   help="tf1: graph + Session (default); tf2: tf.function + GradientTape")
    p.add_argument("--num_epochs", type=float, default=None)
    return p.parse_args(argv)


def train_tf1(d, num_epochs: int, dtype) -> float:
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

        start_time = time.time()
        with v1.Session() as sess:
            v1.global_variables_initializer().run()
            print("Initialized!")

            def predict(x):
                return sess.run(eval_prediction, feed_dict={eval_data: x})

            for step in range(int(num_epochs * train_size) // BATCH_SIZE):
                offset = (step * BATCH_SIZE) % (train_size - BATCH_SIZE)
                batch_data = d.train_data[offset:(offset + BATCH_SIZE), ...]
                batch_labels = d.train_labels[offset:(offset + BATCH_SIZE)]
                feed_dict = {train_data_node: batch_data, train_labels_node: batch_labels}
                sess.run(optimizer, feed_dict=feed_dict)
                if step % EVAL_FREQUENCY == 0:
                    l_, lr, predictions = sess.run([loss, learning_rate, train_prediction],
                                                   feed_dict=feed_dict)
                    elapsed = time.time() - start_time
                    start_time = time.time()
                    report(step, train_size, elapsed, l_, lr, predictions, batch_labels,
                           error_rate(eval_in_batches(d.validation_data, predict),
                                      d.validation_labels))
            return error_rate(eval_in_batches(d.test_data, predict), d.test_labels)


def main(argv=None) -> float:
    args = parse_args(argv)
    d = load(args.data_dir, args.self_test, EVAL_BATCH_SIZE)
    num_epochs = num_epochs_for(args.num_epochs, args.self_test, d.source)
    dtype = data_type(args.use_fp16)
    if args.api == "tf2":
        test_error = convolutional_tf2.train(d, num_epochs, dtype)
    else:
        test_error = train_tf1(d, num_epochs, dtype)
    print(f"Test error: {test_error:.1f}%")
    if args.self_test:
        print("test_error", test_error)
        assert test_error == 0.0, f"expected 0.0 test_error, got {test_error:.2f}"
    return test_error


if __name__ == "__main__":
    main()
