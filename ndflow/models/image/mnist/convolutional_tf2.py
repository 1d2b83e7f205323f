"""The MNIST example's model trained TF2-style: `tf.function` + `GradientTape` + Keras SGD."""

from __future__ import annotations

import time

import ndflow as tf
from ndflow.models.image.mnist.dataset import IMAGE_SIZE, NUM_CHANNELS, error_rate
from ndflow.models.image.mnist.model import (
    BATCH_SIZE,
    EVAL_BATCH_SIZE,
    EVAL_FREQUENCY,
    SEED,
    build_variables,
    eval_in_batches,
    model,
    regularized_loss,
    report,
)


def train(d, num_epochs: float, dtype) -> float:
    """Trains on `d` and returns the test error in percent."""
    tf.random.set_seed(SEED)
    train_size = d.train_labels.shape[0]
    p = build_variables(dtype)
    # Decay once per epoch (train_size examples), as the TF1 example's exponential_decay.
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(
        0.01, decay_steps=train_size / BATCH_SIZE, decay_rate=0.95, staircase=True)
    optimizer = tf.keras.optimizers.SGD(learning_rate=schedule, momentum=0.9)
    variables = list(p.values())
    image = tf.TensorSpec([None, IMAGE_SIZE, IMAGE_SIZE, NUM_CHANNELS], dtype)

    @tf.function(input_signature=[image, tf.TensorSpec([None], tf.int64)])
    def train_step(data, labels):
        with tf.GradientTape() as tape:
            logits = model(p, data, train=True)
            loss = regularized_loss(p, logits, labels)
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss, tf.nn.softmax(logits)

    @tf.function(input_signature=[image])
    def predict(data):
        return tf.nn.softmax(model(p, data))

    def predict_numpy(x):
        return predict(x).numpy()

    start_time = time.time()
    for step in range(int(num_epochs * train_size) // BATCH_SIZE):
        offset = (step * BATCH_SIZE) % (train_size - BATCH_SIZE)
        batch_data = d.train_data[offset:(offset + BATCH_SIZE), ...]
        batch_labels = d.train_labels[offset:(offset + BATCH_SIZE)]
        loss, predictions = train_step(batch_data, batch_labels)
        if step % EVAL_FREQUENCY == 0:
            elapsed = time.time() - start_time
            start_time = time.time()
            lr = float(schedule(step))
            report(step, train_size, elapsed, float(loss), lr, predictions.numpy(), batch_labels,
                   error_rate(eval_in_batches(d.validation_data, predict_numpy),
                              d.validation_labels))
    assert EVAL_BATCH_SIZE <= d.test_data.shape[0]
    return error_rate(eval_in_batches(d.test_data, predict_numpy), d.test_labels)
