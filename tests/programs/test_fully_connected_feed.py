"""TensorFlow's classic `fully_connected_feed.py` tutorial, as a script: `tf.app.flags`,
`tf.app.run()`, an `inference`/`loss`/`training`/`evaluation` module in the style of its
mnist.py (name scopes, truncated-normal weights, `tf.nn.in_top_k`, a global step), feed
dicts and a Session loop printing step/loss lines. It runs in a fresh interpreter with flags
on the command line, trains on the bundled digits and must reach the accuracy printed by its
evaluation.
"""

import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent('''
    import math
    import sys
    import time

    import numpy as np

    import ndflow.compat.v1 as tf
    from ndflow.data.digits import load_digits

    flags = tf.app.flags
    FLAGS = flags.FLAGS
    flags.DEFINE_float("learning_rate", 0.01, "Initial learning rate.")
    flags.DEFINE_integer("max_steps", 2000, "Number of steps to run trainer.")
    flags.DEFINE_integer("hidden1", 128, "Number of units in hidden layer 1.")
    flags.DEFINE_integer("hidden2", 32, "Number of units in hidden layer 2.")
    flags.DEFINE_integer("batch_size", 100, "Batch size.")
    flags.DEFINE_boolean("fake_data", False, "If true, uses fake data for unit testing.")

    NUM_CLASSES = 10
    IMAGE_PIXELS = 28 * 28


    def inference(images, hidden1_units, hidden2_units):
        with tf.name_scope("hidden1"):
            weights = tf.Variable(tf.truncated_normal([IMAGE_PIXELS, hidden1_units],
                                  stddev=1.0 / math.sqrt(float(IMAGE_PIXELS))), name="weights")
            biases = tf.Variable(tf.zeros([hidden1_units]), name="biases")
            hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
        with tf.name_scope("hidden2"):
            weights = tf.Variable(tf.truncated_normal([hidden1_units, hidden2_units],
                                  stddev=1.0 / math.sqrt(float(hidden1_units))), name="weights")
            biases = tf.Variable(tf.zeros([hidden2_units]), name="biases")
            hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
        with tf.name_scope("softmax_linear"):
            weights = tf.Variable(tf.truncated_normal([hidden2_units, NUM_CLASSES],
                                  stddev=1.0 / math.sqrt(float(hidden2_units))), name="weights")
            biases = tf.Variable(tf.zeros([NUM_CLASSES]), name="biases")
            logits = tf.matmul(hidden2, weights) + biases
        return logits


    def loss(logits, labels):
        labels = tf.to_int64(labels)
        return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


    def training(loss, learning_rate):
        optimizer = tf.train.GradientDescentOptimizer(learning_rate)
        global_step = tf.Variable(0, name="global_step", trainable=False)
        return optimizer.minimize(loss, global_step=global_step)


    def evaluation(logits, labels):
        correct = tf.nn.in_top_k(logits, labels, 1)
        return tf.reduce_sum(tf.cast(correct, tf.int32))


    def fill_feed_dict(data, images_pl, labels_pl, step):
        n = len(data[0])
        start = (step * FLAGS.batch_size) % (n - FLAGS.batch_size)
        batch = slice(start, start + FLAGS.batch_size)
        return {images_pl: data[0][batch], labels_pl: data[1][batch]}


    def do_eval(sess, eval_correct, images_placeholder, labels_placeholder, data):
        true_count = sess.run(eval_correct, feed_dict={images_placeholder: data[0],
                                                       labels_placeholder: data[1]})
        precision = float(true_count) / len(data[0])
        print("Num examples: %d  Num correct: %d  Precision @ 1: %0.04f"
              % (len(data[0]), true_count, precision))
        return precision


    def run_training():
        splits = load_digits()
        train = (splits.train.images.reshape(-1, IMAGE_PIXELS).astype(np.float32) / 255.0,
                 splits.train.labels.astype(np.int32))
        test = (splits.test.images.reshape(-1, IMAGE_PIXELS).astype(np.float32) / 255.0,
                splits.test.labels.astype(np.int32))
        with tf.Graph().as_default():
            images_placeholder = tf.placeholder(tf.float32, shape=(None, IMAGE_PIXELS))
            labels_placeholder = tf.placeholder(tf.int32, shape=(None,))
            logits = inference(images_placeholder, FLAGS.hidden1, FLAGS.hidden2)
            loss_op = loss(logits, labels_placeholder)
            train_op = training(loss_op, FLAGS.learning_rate)
            eval_correct = evaluation(logits, labels_placeholder)
            init = tf.global_variables_initializer()
            sess = tf.Session()
            sess.run(init)
            for step in range(FLAGS.max_steps):
                start_time = time.time()
                feed_dict = fill_feed_dict(train, images_placeholder, labels_placeholder, step)
                _, loss_value = sess.run([train_op, loss_op], feed_dict=feed_dict)
                duration = time.time() - start_time
                if step % 100 == 0:
                    print("Step %d: loss = %.2f (%.3f sec)" % (step, loss_value, duration))
            print("Test Data Eval:")
            do_eval(sess, eval_correct, images_placeholder, labels_placeholder, test)


    def main(_):
        run_training()


    if __name__ == "__main__":
        tf.app.run(main=main, argv=[sys.argv[0]] + sys.argv[1:])
''')


@pytest.mark.slow  # trains to an accuracy: CI's slow pass runs it
def test_fully_connected_feed_runs_with_flags_and_learns(tmp_path):
    script = tmp_path / "fully_connected_feed.py"
    script.write_text(PROGRAM)
    out = subprocess.run([sys.executable, str(script), "--max_steps=400", "--batch_size=50",
                          "--hidden1=64", "--hidden2=32", "--learning_rate=0.3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    steps = [line for line in lines if line.startswith("Step ")]
    assert [s.split(":")[0] for s in steps] == [f"Step {i}" for i in range(0, 400, 100)]
    first_loss = float(steps[0].split("loss = ")[1].split()[0])
    assert 2.0 < first_loss < 2.6  # about ln(10) before training
    precision = float(lines[-1].rsplit(" ", 1)[1])
    assert lines[-2] == "Test Data Eval:" and precision > 0.85, out.stdout
