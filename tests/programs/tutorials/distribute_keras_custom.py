# TF tutorials "Distributed training with Keras" and "Custom training with tf.distribute.Strategy"
# (site/en/tutorials/distribute/keras.ipynb and custom_training.ipynb).
# Adapted: MirroredStrategy runs on 2 logical CPU devices, as TF would on 2 GPUs; seeded
# MNIST/Fashion-MNIST stand-ins of the same shape (fewer examples, fewer epochs); the shell
# `!ls` cells print directory listings; Keras 3 metrics have `reset_state`, not the guide's
# `reset_states`; no TensorBoard callback (the TF venv here lacks the tensorboard package; the
# migrate_feature_columns_tensorboard.py program covers it); fit/evaluate use verbose=2 (per-epoch lines) and their timings are masked.
import os
import pathlib
import re
import sys
import numpy as np
import ndflow as tf

tf.keras.utils.set_random_seed(0)
cpus = tf.config.list_physical_devices('CPU')
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
print(tf.config.list_logical_devices('CPU'))
DEVICES = ["/cpu:0", "/cpu:1"]


class MaskTimes:
    # Keras' verbose=2 epoch lines carry timings ("1s 20ms/step"): blank them for the diff.
    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        text = re.sub(r"\d+(\.\d+)?m?s(/step)?", "Ts", text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


sys.stdout = MaskTimes(sys.stdout)

# == Distributed training with Keras ================================================================
rng = np.random.default_rng(0)


def fake_mnist(n):
    images = rng.integers(0, 256, (n, 28, 28, 1)).astype(np.uint8)
    return tf.data.Dataset.from_tensor_slices((images, rng.integers(0, 10, n)))


mnist_train, mnist_test = fake_mnist(256), fake_mnist(128)
strategy = tf.distribute.MirroredStrategy(DEVICES)
print('Number of devices: {}'.format(strategy.num_replicas_in_sync))
num_train_examples = 256
num_test_examples = 128
BUFFER_SIZE = 10000
BATCH_SIZE_PER_REPLICA = 64
BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync


def scale(image, label):
  image = tf.cast(image, tf.float32)
  image /= 255
  return image, label


train_dataset = mnist_train.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)
eval_dataset = mnist_test.map(scale).batch(BATCH_SIZE)
with strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
      tf.keras.layers.MaxPooling2D(),
      tf.keras.layers.Flatten(),
      tf.keras.layers.Dense(64, activation='relu'),
      tf.keras.layers.Dense(10)
  ])
  model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.Adam(learning_rate=0.001),
                metrics=['accuracy'])
print(model.trainable_variables[0].shape)
checkpoint_dir = './training_checkpoints'
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch:04d}.weights.h5")


def decay(epoch):
  if epoch < 3:
    return 1e-3
  elif epoch >= 3 and epoch < 7:
    return 1e-4
  else:
    return 1e-5


class PrintLR(tf.keras.callbacks.Callback):
  def on_epoch_end(self, epoch, logs=None):
    print('\nLearning rate for epoch {} is {}'.format(epoch + 1, model.optimizer.learning_rate.numpy()))


callbacks = [
    tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_prefix,
                                       save_weights_only=True),
    tf.keras.callbacks.LearningRateScheduler(decay),
    PrintLR()
]
EPOCHS = 4
history = model.fit(train_dataset, epochs=EPOCHS, callbacks=callbacks, verbose=2)
print(sorted(os.listdir(checkpoint_dir)))
latest_checkpoint = sorted(pathlib.Path(checkpoint_dir).glob('*'))[-1]
model.load_weights(latest_checkpoint)
eval_loss, eval_acc = model.evaluate(eval_dataset, verbose=2)
print('Eval loss: {}, Eval accuracy: {}'.format(eval_loss, eval_acc))
path = 'my_model.keras'
model.save(path)
unreplicated_model = tf.keras.models.load_model(path)
unreplicated_model.compile(
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer=tf.keras.optimizers.Adam(),
    metrics=['accuracy'])
eval_loss, eval_acc = unreplicated_model.evaluate(eval_dataset, verbose=2)
print('Eval loss: {}, Eval Accuracy: {}'.format(eval_loss, eval_acc))
with strategy.scope():
  replicated_model = tf.keras.models.load_model(path)
  replicated_model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                           optimizer=tf.keras.optimizers.Adam(),
                           metrics=['accuracy'])
  eval_loss, eval_acc = replicated_model.evaluate(eval_dataset, verbose=2)
  print ('Eval loss: {}, Eval Accuracy: {}'.format(eval_loss, eval_acc))
print("keras distribute done")

# == Custom training with tf.distribute.Strategy ====================================================
train_images = rng.integers(0, 256, (320, 28, 28)).astype(np.uint8)
train_labels = rng.integers(0, 10, 320).astype(np.uint8)
test_images = rng.integers(0, 256, (96, 28, 28)).astype(np.uint8)
test_labels = rng.integers(0, 10, 96).astype(np.uint8)
train_images = train_images[..., None]
test_images = test_images[..., None]
train_images = train_images / np.float32(255)
test_images = test_images / np.float32(255)
# (the guide makes a new MirroredStrategy here; TF 2.21 then fails the first step with
# "Shape mismatch in the collective instance" as the Keras part's strategy is still alive)
print('Number of devices: {}'.format(strategy.num_replicas_in_sync))
BUFFER_SIZE = len(train_images)
BATCH_SIZE_PER_REPLICA = 64
GLOBAL_BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync
EPOCHS = 3
train_dataset = tf.data.Dataset.from_tensor_slices((train_images, train_labels)).shuffle(BUFFER_SIZE).batch(GLOBAL_BATCH_SIZE)
test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(GLOBAL_BATCH_SIZE)
train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)
test_dist_dataset = strategy.experimental_distribute_dataset(test_dataset)
print(train_dist_dataset.element_spec)


def create_model():
  regularizer = tf.keras.regularizers.L2(1e-5)
  model = tf.keras.Sequential([
      tf.keras.layers.Conv2D(32, 3,
                             activation='relu',
                             kernel_regularizer=regularizer),
      tf.keras.layers.MaxPooling2D(),
      tf.keras.layers.Conv2D(64, 3,
                             activation='relu',
                             kernel_regularizer=regularizer),
      tf.keras.layers.MaxPooling2D(),
      tf.keras.layers.Flatten(),
      tf.keras.layers.Dense(64,
                            activation='relu',
                            kernel_regularizer=regularizer),
      tf.keras.layers.Dense(10, kernel_regularizer=regularizer)
    ])
  return model


checkpoint_dir = './training_checkpoints_custom'
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
with strategy.scope():
  loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
      from_logits=True,
      reduction=tf.keras.losses.Reduction.NONE)

  def compute_loss(labels, predictions, model_losses):
    per_example_loss = loss_object(labels, predictions)
    loss = tf.nn.compute_average_loss(per_example_loss)
    if model_losses:
      loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
    return loss
with strategy.scope():
  test_loss = tf.keras.metrics.Mean(name='test_loss')
  train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(
      name='train_accuracy')
  test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(
      name='test_accuracy')
with strategy.scope():
  model = create_model()
  optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)
  checkpoint = tf.train.Checkpoint(optimizer=optimizer, model=model)
  # TF 2.21 cannot create Adam's slots lazily inside the first distributed step ("You must feed
  # a value for placeholder tensor"): build the model and the optimizer up front
  model.build((None, 28, 28, 1))
  optimizer.build(model.trainable_variables)


def train_step(inputs):
  images, labels = inputs
  with tf.GradientTape() as tape:
    predictions = model(images, training=True)
    loss = compute_loss(labels, predictions, model.losses)
  gradients = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))
  train_accuracy.update_state(labels, predictions)
  return loss


def test_step(inputs):
  images, labels = inputs
  predictions = model(images, training=False)
  t_loss = loss_object(labels, predictions)
  test_loss.update_state(t_loss)
  test_accuracy.update_state(labels, predictions)


@tf.function
def distributed_train_step(dataset_inputs):
  per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
  return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses,
                         axis=None)


@tf.function
def distributed_test_step(dataset_inputs):
  return strategy.run(test_step, args=(dataset_inputs,))


for epoch in range(EPOCHS):
  total_loss = 0.0
  num_batches = 0
  for x in train_dist_dataset:
    total_loss += distributed_train_step(x)
    num_batches += 1
  train_loss = total_loss / num_batches
  for x in test_dist_dataset:
    distributed_test_step(x)
  if epoch % 2 == 0:
    checkpoint.save(checkpoint_prefix)
  template = ("Epoch {}, Loss: {}, Accuracy: {}, Test Loss: {}, "
              "Test Accuracy: {}")
  print(template.format(epoch + 1, train_loss,
                         train_accuracy.result() * 100, test_loss.result(),
                         test_accuracy.result() * 100))
  test_loss.reset_state()
  train_accuracy.reset_state()
  test_accuracy.reset_state()
print(sorted(os.listdir(checkpoint_dir)))
print(tf.train.latest_checkpoint(checkpoint_dir))
eval_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(
      name='eval_accuracy')
new_model = create_model()
new_optimizer = tf.keras.optimizers.Adam()
test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(GLOBAL_BATCH_SIZE)


@tf.function
def eval_step(images, labels):
  predictions = new_model(images, training=False)
  eval_accuracy(labels, predictions)


checkpoint = tf.train.Checkpoint(optimizer=new_optimizer, model=new_model)
checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))
for images, labels in test_dataset:
  eval_step(images, labels)
print('Accuracy after restoring the saved model without strategy: {}'.format(
    eval_accuracy.result() * 100))
for _ in range(EPOCHS):
  total_loss = 0.0
  num_batches = 0
  train_iter = iter(train_dist_dataset)
  for _ in range(2):
    total_loss += distributed_train_step(next(train_iter))
    num_batches += 1
  average_train_loss = total_loss / num_batches
  template = ("Epoch {}, Loss: {}, Accuracy: {}")
  print(template.format(epoch + 1, average_train_loss, train_accuracy.result() * 100))
  train_accuracy.reset_state()


@tf.function
def distributed_train_epoch(dataset):
  total_loss = 0.0
  num_batches = 0
  for x in dataset:
    per_replica_losses = strategy.run(train_step, args=(x,))
    total_loss += strategy.reduce(
      tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)
    num_batches += 1
  return total_loss / tf.cast(num_batches, dtype=tf.float32)


for epoch in range(EPOCHS):
  train_loss = distributed_train_epoch(train_dist_dataset)
  template = ("Epoch {}, Loss: {}, Accuracy: {}")
  print(template.format(epoch + 1, train_loss, train_accuracy.result() * 100))
  train_accuracy.reset_state()
print("custom distributed training done")
