"""Builds the CIFAR-10 network (the tutorial's cifar10.py), TF1 graph style.

    images, labels = distorted_inputs(data_dir, batch_size)  # or inputs(...) for evaluation
    logits = inference(images)
    total_loss = loss(logits, labels)
    train_op = train(total_loss, global_step, batch_size)

The model: conv 5x5x64 + ReLU, max-pool 3x3/2, LRN; conv 5x5x64 + ReLU, LRN, max-pool;
fully connected 384 and 192 (ReLU, L2 weight decay 0.004 added to the 'losses' collection);
a linear softmax layer of 10 logits. Variables are created with `tf.compat.v1.get_variable`
on the CPU, so towers built under `variable_scope(..., reuse)` share them
(cifar10_multi_gpu_train). Their dtype follows the images' (float16 with `--use_fp16`).
"""

from __future__ import annotations

import argparse
import math
import re

import ndflow as tf
from ndflow.models.image.cifar10 import cifar10_input

v1 = tf.compat.v1

IMAGE_SIZE = cifar10_input.IMAGE_SIZE
NUM_CLASSES = cifar10_input.NUM_CLASSES
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_EVAL

MOVING_AVERAGE_DECAY = 0.9999     # The decay of the weights' moving averages.
NUM_EPOCHS_PER_DECAY = 350.0      # Epochs after which the learning rate decays.
LEARNING_RATE_DECAY_FACTOR = 0.1  # Learning rate decay factor.
INITIAL_LEARNING_RATE = 0.1       # Initial learning rate.

# Multi-tower training prefixes every op name with 'tower_N/'; summaries drop the prefix.
TOWER_NAME = "tower"
DEFAULT_DATA_DIR = "/tmp/cifar10_data"


def add_model_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The flags every CIFAR-10 program takes (the original's cifar10.parser)."""
    parser.add_argument("--batch_size", type=int, default=128,
                        help="Number of images to process in a batch.")
    parser.add_argument("--data_dir", type=str, default=DEFAULT_DATA_DIR,
                        help="Directory holding cifar-10-batches-bin (or the tarball).")
    parser.add_argument("--use_fp16", action="store_true", help="Train the model using fp16.")
    return parser


def add_training_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The flags of the training programs (single- and multi-GPU) besides the model's."""
    parser.add_argument("--train_dir", type=str, default="/tmp/cifar10_train",
                        help="Directory where to write event logs and checkpoint.")
    parser.add_argument("--max_steps", type=int, default=1000000,
                        help="Number of batches to run.")
    parser.add_argument("--log_device_placement", action="store_true",
                        help="Whether to log device placement.")
    return parser


def _activation_summary(x) -> None:
    """Histogram and sparsity (fraction of zeros) summaries of an activation."""
    tensor_name = re.sub(f"{TOWER_NAME}_[0-9]*/", "", x.op.name)
    v1.summary.histogram(tensor_name + "/activations", x)
    v1.summary.scalar(tensor_name + "/sparsity", tf.nn.zero_fraction(x))


def _variable_on_cpu(name, shape, initializer, dtype=tf.float32):
    with tf.device("/cpu:0"):
        return v1.get_variable(name, shape, initializer=initializer, dtype=dtype)


def _variable_with_weight_decay(name, shape, stddev, wd, dtype=tf.float32):
    """A truncated-normal variable; with `wd`, its L2 loss times `wd` joins 'losses'."""
    var = _variable_on_cpu(name, shape,
                           v1.truncated_normal_initializer(stddev=stddev, dtype=dtype), dtype)
    if wd is not None:
        weight_decay = tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss")
        v1.add_to_collection("losses", weight_decay)
    return var


def distorted_inputs(data_dir: str, batch_size: int, use_fp16: bool = False):
    """Distorted training batches from `data_dir` (which holds cifar-10-batches-bin)."""
    images, labels = cifar10_input.distorted_inputs(cifar10_input.locate_data(data_dir),
                                                    batch_size)
    return (tf.cast(images, tf.float16), labels) if use_fp16 else (images, labels)


def inputs(eval_data: bool, data_dir: str, batch_size: int, use_fp16: bool = False):
    """Evaluation batches (test set when `eval_data`, else the training set)."""
    images, labels = cifar10_input.inputs(eval_data, cifar10_input.locate_data(data_dir),
                                          batch_size)
    return (tf.cast(images, tf.float16), labels) if use_fp16 else (images, labels)


def _conv_relu(scope_name: str, x, bias_init: float, dtype):
    with v1.variable_scope(scope_name) as scope:
        kernel = _variable_with_weight_decay("weights", [5, 5, x.shape[-1], 64], stddev=5e-2,
                                             wd=0.0, dtype=dtype)
        conv = tf.nn.conv2d(x, kernel, [1, 1, 1, 1], padding="SAME")
        biases = _variable_on_cpu("biases", [64], v1.constant_initializer(bias_init), dtype)
        out = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
    _activation_summary(out)
    return out


def _fully_connected(scope_name: str, x, units: int, dtype):
    with v1.variable_scope(scope_name) as scope:
        weights = _variable_with_weight_decay("weights", [x.shape[-1], units], stddev=0.04,
                                              wd=0.004, dtype=dtype)
        biases = _variable_on_cpu("biases", [units], v1.constant_initializer(0.1), dtype)
        out = tf.nn.relu(tf.matmul(x, weights) + biases, name=scope.name)
    _activation_summary(out)
    return out


def inference(images):
    """The CIFAR-10 model: images [batch, 24, 24, 3] -> logits [batch, 10] (unscaled: the
    loss applies the softmax)."""
    dtype = images.dtype
    conv1 = _conv_relu("conv1", images, 0.0, dtype)
    pool1 = v1.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME",
                           name="pool1")
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
    conv2 = _conv_relu("conv2", norm1, 0.1, dtype)
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm2")
    pool2 = v1.nn.max_pool(norm2, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME",
                           name="pool2")
    # Everything into depth for one matrix multiply (the batch size may be unknown).
    dim = math.prod(int(d) for d in pool2.shape[1:])
    local3 = _fully_connected("local3", tf.reshape(pool2, [-1, dim]), 384, dtype)
    local4 = _fully_connected("local4", local3, 192, dtype)
    with v1.variable_scope("softmax_linear") as scope:
        weights = _variable_with_weight_decay("weights", [192, NUM_CLASSES], stddev=1 / 192.0,
                                              wd=0.0, dtype=dtype)
        biases = _variable_on_cpu("biases", [NUM_CLASSES], v1.constant_initializer(0.0),
                                  dtype)
        softmax_linear = tf.add(tf.matmul(local4, weights), biases, name=scope.name)
    _activation_summary(softmax_linear)
    return softmax_linear


def loss(logits, labels):
    """Mean cross entropy + every weight decay term in the 'losses' collection."""
    labels = tf.cast(labels, tf.int64)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name="cross_entropy_per_example")
    cross_entropy_mean = tf.reduce_mean(cross_entropy, name="cross_entropy")
    v1.add_to_collection("losses", cross_entropy_mean)
    return tf.add_n(v1.get_collection("losses"), name="total_loss")


def _add_loss_summaries(total_loss):
    """Moving averages (decay 0.9) of every loss and the total, with '(raw)' and averaged
    scalar summaries; returns the op updating the averages."""
    loss_averages = tf.train.ExponentialMovingAverage(0.9, name="avg")
    losses = v1.get_collection("losses")
    loss_averages_op = loss_averages.apply(losses + [total_loss])
    for item in losses + [total_loss]:
        v1.summary.scalar(item.op.name + " (raw)", item)
        v1.summary.scalar(item.op.name, loss_averages.average(item))
    return loss_averages_op


def learning_rate(global_step, batch_size: int):
    """0.1, divided by 10 every 350 epochs (staircase)."""
    num_batches_per_epoch = NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN / batch_size
    decay_steps = int(num_batches_per_epoch * NUM_EPOCHS_PER_DECAY)
    return v1.train.exponential_decay(INITIAL_LEARNING_RATE, global_step, decay_steps,
                                      LEARNING_RATE_DECAY_FACTOR, staircase=True)


def train(total_loss, global_step, batch_size: int = 128):
    """The training op: SGD with the decayed learning rate (after the loss averages update),
    then the moving averages of all trainable variables."""
    lr = learning_rate(global_step, batch_size)
    v1.summary.scalar("learning_rate", lr)
    loss_averages_op = _add_loss_summaries(total_loss)
    with tf.control_dependencies([loss_averages_op]):
        opt = v1.train.GradientDescentOptimizer(lr)
        grads = opt.compute_gradients(total_loss)
    apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)
    for var in v1.trainable_variables():
        v1.summary.histogram(var.op.name, var)
    for grad, var in grads:
        if grad is not None:
            v1.summary.histogram(var.op.name + "/gradients", grad)
    variable_averages = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY, global_step)
    # The original leaves the averages' read of the weights unordered with the update; here
    # they average the updated weights, so a run is deterministic.
    with tf.control_dependencies([apply_gradient_op]):
        variables_averages_op = variable_averages.apply(v1.trainable_variables())
    with tf.control_dependencies([apply_gradient_op, variables_averages_op]):
        return tf.no_op(name="train")


def prepare_dir(path: str) -> None:
    """Empties (or creates) an output directory, as the original's main() does."""
    if tf.io.gfile.exists(path):
        tf.io.gfile.rmtree(path)
    tf.io.gfile.makedirs(path)

