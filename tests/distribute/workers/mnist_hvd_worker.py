"""Data-parallel training of the MNIST example's model with ndflow's horovod API, for
tests/distribute/test_horovod.py. Usage: mnist_hvd_worker.py MODE OUT_DIR [STEPS]

MODE:
- "tf2": tf.function step, hvd.DistributedGradientTape, hvd.broadcast_variables;
- "tf1": Graph + Session, hvd.DistributedOptimizer(GradientDescentOptimizer),
  hvd.broadcast_global_variables(0);
- "keras_lso": hvd.DistributedOptimizer(LossScaleOptimizer(SGD)), one worker's gradients
  made non-finite on step 1;
- "tf1_lso": MixedPrecisionLossScaleOptimizer(hvd.DistributedOptimizer(...)), an overflow on
  one worker on step 1;
- "keras_fit": model.fit with hvd.DistributedOptimizer and BroadcastGlobalVariablesCallback.
The global batch of every step is split between the workers; a run without the launcher's
variables is the single-process reference on the whole batch. Rank r starts from perturbed
weights, so equal results prove the broadcast. Writes OUT_DIR/rank<r>.npz.
"""

import os
import sys

import numpy as np

import ndflow as tf
import ndflow.distribute.horovod as hvd
from ndflow.models.image.mnist import model as mnist

GLOBAL_BATCH = 16
LR = 0.05


def batches(steps):
    rng = np.random.RandomState(1234)
    for _ in range(steps):
        x = rng.rand(GLOBAL_BATCH, 28, 28, 1).astype(np.float32) - 0.5
        y = rng.randint(0, 10, size=GLOBAL_BATCH).astype(np.int64)
        yield x, y


def shard(x, y):
    per = GLOBAL_BATCH // hvd.size()
    lo = hvd.rank() * per
    return x[lo:lo + per], y[lo:lo + per]


def perturbed(p):
    for v in p.values():  # the broadcast must undo this
        v.assign(v + 0.01 * hvd.rank())


def run_tf2(steps):
    p = mnist.build_variables(tf.float32)
    perturbed(p)
    hvd.broadcast_variables(list(p.values()), root_rank=0)
    opt = tf.compat.v1.train.GradientDescentOptimizer(LR)
    names = sorted(p)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = mnist.regularized_loss(p, mnist.model(p, x), y)
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, [p[k] for k in names])
        opt.apply_gradients(zip(grads, [p[k] for k in names]))
        return loss

    for x, y in batches(steps):
        step(*shard(x, y))
    return {k: p[k].numpy() for k in names}


def run_tf1(steps):
    with tf.Graph().as_default():
        p = mnist.build_variables(tf.float32)
        x = tf.compat.v1.placeholder(tf.float32, [GLOBAL_BATCH // hvd.size(), 28, 28, 1])
        y = tf.compat.v1.placeholder(tf.int64, [GLOBAL_BATCH // hvd.size()])
        loss = mnist.regularized_loss(p, mnist.model(p, x), y)
        opt = hvd.DistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(LR))
        train = opt.minimize(loss)
        perturb = tf.group(*[v.assign(v + 0.01 * hvd.rank()) for v in p.values()])
        bcast = hvd.broadcast_global_variables(0)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(perturb)
            sess.run(bcast)
            for bx, by in batches(steps):
                sx, sy = shard(bx, by)
                sess.run(train, {x: sx, y: sy})
            return {k: v for k, v in zip(sorted(p), sess.run([p[k] for k in sorted(p)]))}


def run_keras_lso(steps):
    p = mnist.build_variables(tf.float32)
    hvd.broadcast_variables(list(p.values()), root_rank=0)
    names = sorted(p)
    opt = hvd.DistributedOptimizer(tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(LR), initial_scale=2.0 ** 10))
    for i, (x, y) in enumerate(batches(steps)):
        sx, sy = shard(x, y)
        with tf.GradientTape() as tape:
            loss = opt.get_scaled_loss(mnist.regularized_loss(p, mnist.model(p, sx), sy))
        grads = opt.get_unscaled_gradients(tape.gradient(loss, [p[k] for k in names]))
        if i == 1 and hvd.rank() == hvd.size() - 1:  # an overflow on one worker only
            grads[0] = grads[0] * float("inf")
        opt.apply_gradients(zip(grads, [p[k] for k in names]))
    out = {k: p[k].numpy() for k in names}
    out["loss_scale"] = np.array(opt.loss_scale.numpy())
    out["iterations"] = np.array(opt.iterations.numpy())
    return out


def run_tf1_lso(steps):
    """NVIDIA's TF1 order: the loss-scale optimizer wraps hvd's; step 1 overflows on the
    last worker only, and every worker must skip it."""
    with tf.Graph().as_default():
        p = mnist.build_variables(tf.float32)
        x = tf.compat.v1.placeholder(tf.float32, [GLOBAL_BATCH // hvd.size(), 28, 28, 1])
        y = tf.compat.v1.placeholder(tf.int64, [GLOBAL_BATCH // hvd.size()])
        blow_up = tf.compat.v1.placeholder(tf.float32, [])
        loss = mnist.regularized_loss(p, mnist.model(p, x), y) * blow_up
        opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
            hvd.DistributedOptimizer(tf.compat.v1.train.GradientDescentOptimizer(LR)),
            "dynamic")
        train = opt.minimize(loss)
        scale = opt._loss_scale()
        bcast = hvd.broadcast_global_variables(0)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(bcast)
            for i, (bx, by) in enumerate(batches(steps)):
                sx, sy = shard(bx, by)
                overflow = i == 1 and hvd.rank() == hvd.size() - 1
                sess.run(train, {x: sx, y: sy, blow_up: float("inf") if overflow else 1.0})
            out = {k: v for k, v in zip(sorted(p), sess.run([p[k] for k in sorted(p)]))}
            out["loss_scale"] = np.array(sess.run(scale))
            return out


def run_keras_fit(steps):
    """Keras fit with hvd.DistributedOptimizer and the broadcast callback (rank 1 starts
    from other weights; the callback must replace them with rank 0's)."""
    init = tf.keras.initializers.GlorotUniform(seed=7)
    model = tf.keras.Sequential([
        tf.keras.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(8, 5, activation="relu", kernel_initializer=init),
        tf.keras.layers.MaxPooling2D(2),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10, kernel_initializer=init)])
    for w in model.weights:
        w.assign(w + 0.01 * hvd.rank())
    model.compile(optimizer=hvd.DistributedOptimizer(tf.keras.optimizers.SGD(LR)),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    xs, ys = zip(*batches(steps))
    shards = [shard(x, y) for x, y in zip(xs, ys)]
    x = np.concatenate([a for a, _ in shards])
    y = np.concatenate([b for _, b in shards])
    model.fit(x, y, batch_size=GLOBAL_BATCH // hvd.size(), epochs=1, shuffle=False, verbose=0,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    return {w.path.replace("/", "_"): w.numpy() for w in model.weights}


if __name__ == "__main__":
    mode, out_dir = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    hvd.init(timeout_seconds=30)
    result = {"tf2": run_tf2, "tf1": run_tf1, "keras_lso": run_keras_lso,
              "tf1_lso": run_tf1_lso, "keras_fit": run_keras_fit}[mode](steps)
    np.savez(os.path.join(out_dir, f"rank{hvd.rank()}.npz"), **result)
    print(f"done rank {hvd.rank()} of {hvd.size()}")
