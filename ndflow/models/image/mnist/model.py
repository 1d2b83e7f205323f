"""The LeNet-5-like model of the MNIST example, shared by its TF1 and TF2 trainers."""

from __future__ import annotations

import sys

import numpy as np

import ndflow as tf
from ndflow.models.image.mnist.dataset import IMAGE_SIZE, NUM_CHANNELS, NUM_LABELS, error_rate

SEED = 66478  # Set to None for random seed.
BATCH_SIZE = 64
NUM_EPOCHS = 10
DIGITS_NUM_EPOCHS = 20  # the digits set is 1/40 of MNIST: more passes, still ~2x fewer steps


def num_epochs_for(requested, self_test: bool, source: str) -> int:
    """The epochs an example runs: as asked, 1 for a self-test, else by dataset."""
    if requested is not None:
        return requested
    if self_test:
        return 1
    return DIGITS_NUM_EPOCHS if source == "digits" else NUM_EPOCHS
EVAL_BATCH_SIZE = 64
EVAL_FREQUENCY = 100  # Number of steps between evaluations.


def data_type(use_fp16: bool):
    return tf.float16 if use_fp16 else tf.float32


def build_variables(dtype):
    """The model's parameters, initialized as in the original example."""
    v1 = tf.compat.v1
    return {
        "conv1_weights": tf.Variable(v1.truncated_normal(
            [5, 5, NUM_CHANNELS, 32], stddev=0.1, seed=SEED, dtype=dtype)),
        "conv1_biases": tf.Variable(tf.zeros([32], dtype=dtype)),
        "conv2_weights": tf.Variable(v1.truncated_normal(
            [5, 5, 32, 64], stddev=0.1, seed=SEED, dtype=dtype)),
        "conv2_biases": tf.Variable(tf.constant(0.1, shape=[64], dtype=dtype)),
        "fc1_weights": tf.Variable(v1.truncated_normal(
            [IMAGE_SIZE // 4 * IMAGE_SIZE // 4 * 64, 512], stddev=0.1, seed=SEED, dtype=dtype)),
        "fc1_biases": tf.Variable(tf.constant(0.1, shape=[512], dtype=dtype)),
        "fc2_weights": tf.Variable(v1.truncated_normal(
            [512, NUM_LABELS], stddev=0.1, seed=SEED, dtype=dtype)),
        "fc2_biases": tf.Variable(tf.constant(0.1, shape=[NUM_LABELS], dtype=dtype)),
    }


def model(p, data, train=False):
    """The Model definition: 2x (conv 5x5 SAME + ReLU + max-pool 2), FC 512, FC 10."""
    conv = tf.nn.conv2d(data, p["conv1_weights"], strides=[1, 1, 1, 1], padding="SAME")
    relu = tf.nn.relu(tf.nn.bias_add(conv, p["conv1_biases"]))
    pool = tf.nn.max_pool(relu, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    conv = tf.nn.conv2d(pool, p["conv2_weights"], strides=[1, 1, 1, 1], padding="SAME")
    relu = tf.nn.relu(tf.nn.bias_add(conv, p["conv2_biases"]))
    pool = tf.nn.max_pool(relu, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    pool_shape = pool.get_shape().as_list()
    batch = pool_shape[0] if pool_shape[0] is not None else -1
    reshape = tf.reshape(pool, [batch, pool_shape[1] * pool_shape[2] * pool_shape[3]])
    hidden = tf.nn.relu(tf.matmul(reshape, p["fc1_weights"]) + p["fc1_biases"])
    if train:
        hidden = tf.nn.dropout(hidden, rate=0.5, seed=SEED)
    return tf.matmul(hidden, p["fc2_weights"]) + p["fc2_biases"]


def regularized_loss(p, logits, labels):
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    regularizers = (tf.nn.l2_loss(p["fc1_weights"]) + tf.nn.l2_loss(p["fc1_biases"]) +
                    tf.nn.l2_loss(p["fc2_weights"]) + tf.nn.l2_loss(p["fc2_biases"]))
    return loss + 5e-4 * regularizers


def eval_in_batches(data, predict):
    """Predictions for `data` by running `predict(batch)` on EVAL_BATCH_SIZE slices."""
    size = data.shape[0]
    if size < EVAL_BATCH_SIZE:
        raise ValueError(f"batch size for evals larger than dataset: {size}")
    predictions = np.ndarray(shape=(size, NUM_LABELS), dtype=np.float32)
    for begin in range(0, size, EVAL_BATCH_SIZE):
        end = begin + EVAL_BATCH_SIZE
        if end <= size:
            predictions[begin:end, :] = predict(data[begin:end, ...])
        else:
            batch_predictions = predict(data[-EVAL_BATCH_SIZE:, ...])
            predictions[begin:, :] = batch_predictions[begin - size:, :]
    return predictions


def report(step, train_size, elapsed, loss, lr, predictions, labels, validation_error):
    print(f"Step {step} (epoch {float(step) * BATCH_SIZE / train_size:.2f}), "
          f"{1000 * elapsed / EVAL_FREQUENCY:.1f} ms")
    print(f"Minibatch loss: {loss:.3f}, learning rate: {lr:.6f}")
    print(f"Minibatch error: {error_rate(predictions, labels):.1f}%")
    print(f"Validation error: {validation_error:.1f}%")
    sys.stdout.flush()
