"""Small programs written as TensorFlow's classic TF1 tutorials write them (the spellings
those tutorials use, unchanged), run on the bundled digits: they must run and learn."""

import numpy as np
import pytest

import ndflow
from ndflow.data.digits import load_digits

tf = ndflow.compat.v1  # `import tensorflow.compat.v1 as tf`, as ported TF1 tutorials do


@pytest.fixture(scope="module")
def digits():
    splits = load_digits()
    x = splits.train.images.reshape(-1, 784).astype(np.float32) / 255.0
    y = np.eye(10, dtype=np.float32)[splits.train.labels]
    return x[:600], y[:600]


def test_softmax_regression_tutorial(digits):
    # "MNIST For ML Beginners": placeholder("float"), reduction_indices, tf.log.
    images, labels = digits
    with ndflow.Graph().as_default():
        x = tf.placeholder("float", [None, 784])
        W = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        y = tf.nn.softmax(tf.matmul(x, W) + b)
        y_ = tf.placeholder("float", [None, 10])
        cross_entropy = -tf.reduce_sum(y_ * tf.log(y + 1e-10), reduction_indices=[1])
        train_step = tf.train.GradientDescentOptimizer(0.5).minimize(
            tf.reduce_mean(cross_entropy))
        correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
        with tf.Session() as sess:
            sess.run(tf.initialize_all_variables())
            before = sess.run(accuracy, feed_dict={x: images, y_: labels})
            for i in range(0, 5 * 600, 50):  # 5 epochs
                batch = slice(i % 600, i % 600 + 50)
                sess.run(train_step, feed_dict={x: images[batch], y_: labels[batch]})
            after = sess.run(accuracy, feed_dict={x: images, y_: labels})
    assert before < 0.2 and after > 0.8, (before, after)


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    initial = tf.constant(0.1, shape=shape)  # float32, as TensorFlow infers it
    return tf.Variable(initial)


def test_deep_mnist_tutorial_helpers_and_dropout(digits):
    # "Deep MNIST for Experts": the helpers, conv/pool, keep_prob dropout, Adam.
    images, labels = digits
    with ndflow.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, shape=[None, 784])
        y_ = tf.placeholder(tf.float32, shape=[None, 10])
        keep_prob = tf.placeholder("float")
        x_image = tf.reshape(x, [-1, 28, 28, 1])
        W_conv1, b_conv1 = weight_variable([5, 5, 1, 8]), bias_variable([8])
        h_conv1 = tf.nn.relu(tf.nn.conv2d(x_image, W_conv1, strides=[1, 1, 1, 1],
                                          padding="SAME") + b_conv1)
        h_pool1 = tf.nn.max_pool(h_conv1, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                 padding="SAME")
        h_flat = tf.reshape(h_pool1, [-1, 14 * 14 * 8])
        h_drop = tf.nn.dropout(h_flat, keep_prob)
        W_fc, b_fc = weight_variable([14 * 14 * 8, 10]), bias_variable([10])
        y_conv = tf.matmul(h_drop, W_fc) + b_fc
        cross_entropy = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv))
        train_step = tf.train.AdamOptimizer(1e-3).minimize(cross_entropy)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1)),
                                          tf.float32))
        assert b_conv1.dtype.base_dtype == tf.float32
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(0, 8 * 600, 50):  # 8 epochs
                batch = slice(i % 600, i % 600 + 50)
                train_step.run(feed_dict={x: images[batch], y_: labels[batch],
                                          keep_prob: 0.5})
            train_accuracy = accuracy.eval(feed_dict={x: images, y_: labels,
                                                      keep_prob: 1.0})
    assert train_accuracy > 0.85, train_accuracy
