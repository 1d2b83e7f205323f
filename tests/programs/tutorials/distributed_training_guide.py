# TF guide "Distributed training with TensorFlow" (site/en/guide/distributed_training.ipynb):
# the cells one machine runs, as written, the notebook's displayed cell results printed.
# MirroredStrategy() mirrors on 2 logical CPU devices (no GPU here, as TF does).
# Adapted: the guide's devices=["/gpu:0", "/gpu:1"] names GPUs this machine lacks, which TF
# soft-places on the CPU and ndflow refuses (InvalidArgumentError): DEVICES names the 2
# logical CPUs instead; seeded; fit/evaluate use verbose=2 (timings masked); the custom
# loop's 100 step losses are printed every 10th step, rounded to 4 digits; a few cells print
# more (devices, replicas, a OneDeviceStrategy run). Left out: TPUStrategy,
# MultiWorkerMirroredStrategy (and its CommunicationOptions), ParameterServerStrategy and the
# TF_CONFIG cells (several machines); CentralStorageStrategy is made but not trained with (the
# guide only makes it). The whole output equals TF 2.21's.
import re
import sys
import ndflow as tf

cpus = tf.config.list_physical_devices('CPU')
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
DEVICES = ["/cpu:0", "/cpu:1"]
tf.keras.utils.set_random_seed(0)


class MaskTimes:
    # Keras' verbose=2 epoch lines carry timings ("1s 20ms/step"): blank them for the diff.
    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        return self.stream.write(re.sub(r"\d+(\.\d+)?[mu]?s(/step)?", "Ts", text))

    def flush(self):
        self.stream.flush()


sys.stdout = MaskTimes(sys.stdout)

mirrored_strategy = tf.distribute.MirroredStrategy()
print(mirrored_strategy.num_replicas_in_sync, mirrored_strategy.extended.worker_devices)
mirrored_strategy = tf.distribute.MirroredStrategy(devices=DEVICES)
print(mirrored_strategy.num_replicas_in_sync, mirrored_strategy.extended.worker_devices)
mirrored_strategy = tf.distribute.MirroredStrategy(
    cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
print(mirrored_strategy.num_replicas_in_sync)
central_storage_strategy = tf.distribute.experimental.CentralStorageStrategy()
print(central_storage_strategy.num_replicas_in_sync,
      central_storage_strategy.extended.parameter_devices)

default_strategy = tf.distribute.get_strategy()
print(type(default_strategy).__name__, default_strategy.num_replicas_in_sync)
# In optimizer or other library code
# Get currently active strategy
strategy = tf.distribute.get_strategy()
print(strategy.reduce("SUM", 1., axis=None))  # reduce some values

if tf.config.list_physical_devices('GPU'):
  strategy = tf.distribute.MirroredStrategy()
else:  # Use the Default Strategy
  strategy = tf.distribute.get_strategy()

with strategy.scope():
  # Do something interesting
  print(tf.Variable(1.))

strategy = tf.distribute.OneDeviceStrategy(device="/cpu:0")
print(type(strategy).__name__, strategy.num_replicas_in_sync, strategy.extended.worker_devices)
with strategy.scope():
  v = tf.Variable(1.)
print(v)
print(strategy.run(lambda x: x * 2, args=(tf.constant(3.),)))

mirrored_strategy = tf.distribute.MirroredStrategy()

with mirrored_strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(1, input_shape=(1,),
                            kernel_regularizer=tf.keras.regularizers.L2(1e-4))])
  model.compile(loss='mse', optimizer='sgd')

dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(10)
model.fit(dataset, epochs=2, verbose=2)
print(model.evaluate(dataset, verbose=2))

import numpy as np  # noqa: E402 - where the guide imports it

inputs, targets = np.ones((100, 1)), np.ones((100, 1))
model.fit(inputs, targets, epochs=2, batch_size=10, verbose=2)

print(mirrored_strategy.num_replicas_in_sync)

# Compute a global batch size using a number of replicas.
BATCH_SIZE_PER_REPLICA = 5
global_batch_size = (BATCH_SIZE_PER_REPLICA *
                     mirrored_strategy.num_replicas_in_sync)
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100)
dataset = dataset.batch(global_batch_size)

LEARNING_RATES_BY_BATCH_SIZE = {5: 0.1, 10: 0.15, 20:0.175}
learning_rate = LEARNING_RATES_BY_BATCH_SIZE[global_batch_size]
print(learning_rate)

with mirrored_strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Dense(1, input_shape=(1,),
                            kernel_regularizer=tf.keras.regularizers.L2(1e-4))])
  optimizer = tf.keras.optimizers.SGD()

dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(1000).batch(
    global_batch_size)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)

# Sets `reduction=NONE` to leave it to tf.nn.compute_average_loss() below.
loss_object = tf.keras.losses.BinaryCrossentropy(
  from_logits=True,
  reduction=tf.keras.losses.Reduction.NONE)


def train_step(inputs):
  features, labels = inputs

  with tf.GradientTape() as tape:
    predictions = model(features, training=True)
    per_example_loss = loss_object(labels, predictions)
    loss = tf.nn.compute_average_loss(per_example_loss)
    model_losses = model.losses
    if model_losses:
      loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))

  gradients = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))
  return loss


@tf.function
def distributed_train_step(dist_inputs):
  per_replica_losses = mirrored_strategy.run(train_step, args=(dist_inputs,))
  return mirrored_strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses,
                         axis=None)


# (the guide prints all 100 steps: every 10th here, rounded to 4 digits)
for step, dist_inputs in enumerate(dist_dataset):
  loss = distributed_train_step(dist_inputs)
  if step % 10 == 0:
    print(step, np.round(loss.numpy(), 4))

iterator = iter(dist_dataset)
for _ in range(10):
  print(np.round(distributed_train_step(next(iterator)).numpy(), 4))
print([np.round(w, 4).tolist() for w in model.get_weights()])
print("distributed training guide done")
