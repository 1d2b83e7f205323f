"""Trains CIFAR-10 on several devices with synchronous updates (cifar10_multi_gpu_train.py).

    python -m ndflow.models.image.cifar10.cifar10_multi_gpu_train --num_gpus 2
        [--max_steps N] [--train_dir D] [--batch_size B] [--data_dir DIR]

One tower per device, each under `tf.device(dev)` + `tf.name_scope('tower_i')`, builds the
whole model on its own batch; the variables live on the CPU and are shared across towers
(`variable_scope` reuse). The towers' gradients are averaged — the one synchronization point
— and applied once, followed by the moving averages of the weights. On a machine without
GPUs the towers run on logical CPU devices (`tf.config.set_logical_device_configuration`),
so N towers of batch B compute what one tower of batch N*B computes, to float rounding.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from datetime import datetime

import numpy as np

import ndflow as tf
from ndflow.core import errors
from ndflow.models.image.cifar10 import cifar10, cifar10_input

v1 = tf.compat.v1


def parse_args(argv=None):
    p = cifar10.add_training_arguments(cifar10.add_model_arguments(
        argparse.ArgumentParser(description=__doc__.splitlines()[0])))
    p.add_argument("--num_gpus", type=int, default=1, help="How many GPUs (towers) to use.")
    return p.parse_args(argv)


def tower_devices(num_towers: int) -> list[str]:
    """One device per tower: the GPUs when there are as many, else logical CPU devices,
    configured here when the runtime is not initialized yet. More towers than devices:
    InvalidArgumentError."""
    if num_towers < 1:
        raise errors.InvalidArgumentError(None, None, f"--num_gpus must be >= 1, got "
                                                      f"{num_towers}")
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) >= num_towers:
        kind, available = "GPU", len(gpus)
    else:
        kind = "CPU"
        cpu = tf.config.list_physical_devices("CPU")[0]
        configured = tf.config.get_logical_device_configuration(cpu) or []
        if len(configured) < num_towers and num_towers > 1:
            try:
                tf.config.set_logical_device_configuration(
                    cpu, [tf.config.LogicalDeviceConfiguration()] * num_towers)
            except RuntimeError:
                pass  # devices already initialized: count what there is below
        available = len(tf.config.list_logical_devices("CPU"))
    if num_towers > available:
        raise errors.InvalidArgumentError(
            None, None, f"--num_gpus={num_towers} asks for {num_towers} towers, but only "
                        f"{available} {kind} device(s) are available (logical CPU devices must "
                        "be configured before the runtime is initialized)")
    return [f"/{kind.lower()}:{i}" for i in range(num_towers)]


def tower_loss(scope: str, images, labels):
    """The total loss of one tower: its cross entropy plus its weight decay terms."""
    logits = cifar10.inference(images)
    _ = cifar10.loss(logits, labels)
    losses = v1.get_collection("losses", scope)  # this tower's only
    total_loss = tf.add_n(losses, name="total_loss")
    for item in losses + [total_loss]:
        loss_name = re.sub(f"{cifar10.TOWER_NAME}_[0-9]*/", "", item.op.name)
        v1.summary.scalar(loss_name, item)
    return total_loss


def average_gradients(tower_grads):
    """[(grad, var)] per tower -> [(mean grad over towers, var)] (variables are shared)."""
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(grads, axis=0), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads


def build_train_graph(next_batch, devices: list[str], batch_size: int):
    """In the default graph: towers on `devices`, each fed by `next_batch()`; returns
    (train_op, last tower's loss, global_step, summary_op)."""
    with tf.device("/cpu:0"):
        global_step = v1.get_variable("global_step", [], initializer=v1.constant_initializer(0),
                                      trainable=False)
        lr = cifar10.learning_rate(global_step, batch_size)
        opt = v1.train.GradientDescentOptimizer(lr)
        tower_grads = []
        with v1.variable_scope(v1.get_variable_scope()):
            for i, device in enumerate(devices):
                with tf.device(device), tf.name_scope(f"{cifar10.TOWER_NAME}_{i}") as scope:
                    image_batch, label_batch = next_batch()
                    loss = tower_loss(scope, image_batch, label_batch)
                    v1.get_variable_scope().reuse_variables()
                    summaries = v1.get_collection(v1.GraphKeys.SUMMARIES, scope)
                    tower_grads.append(opt.compute_gradients(loss))
        grads = average_gradients(tower_grads)
        summaries.append(v1.summary.scalar("learning_rate", lr))
        for grad, var in grads:
            if grad is not None:
                summaries.append(v1.summary.histogram(var.op.name + "/gradients", grad))
        apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)
        for var in v1.trainable_variables():
            summaries.append(v1.summary.histogram(var.op.name, var))
        variable_averages = tf.train.ExponentialMovingAverage(cifar10.MOVING_AVERAGE_DECAY,
                                                              global_step)
        # Averages of the updated weights (the original leaves this read unordered).
        with tf.control_dependencies([apply_gradient_op]):
            variables_averages_op = variable_averages.apply(v1.trainable_variables())
        train_op = tf.group(apply_gradient_op, variables_averages_op)
        return train_op, loss, global_step, v1.summary.merge(summaries)


def train(args) -> list[float]:
    """Trains for `args.max_steps` steps; returns the losses printed."""
    devices = tower_devices(args.num_gpus)
    with tf.Graph().as_default():
        # One input pipeline; each tower's get_next takes the next batch from it.
        with tf.device("/cpu:0"):
            data_dir = cifar10_input.locate_data(args.data_dir)
            iterator = v1.data.make_one_shot_iterator(
                cifar10_input.distorted_dataset(data_dir, args.batch_size))

        def next_batch():
            with tf.device("/cpu:0"):
                images, labels = iterator.get_next()
            return (tf.cast(images, tf.float16) if args.use_fp16 else images), labels

        train_op, loss, _, summary_op = build_train_graph(next_batch, devices, args.batch_size)
        saver = v1.train.Saver(v1.global_variables())
        init = v1.global_variables_initializer()
        config = v1.ConfigProto(allow_soft_placement=True,
                                log_device_placement=args.log_device_placement)
        printed = []
        with v1.Session(config=config) as sess:
            sess.run(init)
            summary_writer = v1.summary.FileWriter(args.train_dir, sess.graph)
            for step in range(args.max_steps):
                start_time = time.time()
                _, loss_value = sess.run([train_op, loss])
                duration = time.time() - start_time
                if np.isnan(loss_value):
                    raise errors.InvalidArgumentError(None, None, "Model diverged with loss = "
                                                                  "NaN")
                if step % 10 == 0:
                    examples_per_sec = args.batch_size * args.num_gpus / duration
                    sec_per_batch = duration / args.num_gpus
                    print(f"{datetime.now()}: step {step}, loss = {loss_value:.2f} "
                          f"({examples_per_sec:.1f} examples/sec; {sec_per_batch:.3f} "
                          "sec/batch)")
                    printed.append(float(loss_value))
                if step % 100 == 0:
                    summary_writer.add_summary(sess.run(summary_op), step)
                if step % 1000 == 0 or step + 1 == args.max_steps:
                    saver.save(sess, os.path.join(args.train_dir, "model.ckpt"), global_step=step)
            summary_writer.close()
    return printed


def main(argv=None) -> list[float]:
    args = parse_args(argv)
    cifar10.prepare_dir(args.train_dir)
    return train(args)


if __name__ == "__main__":
    main()
