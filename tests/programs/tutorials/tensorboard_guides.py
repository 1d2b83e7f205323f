# TensorBoard guides (tensorflow/tensorboard docs/): "Get started with TensorBoard"
# (get_started.ipynb), "TensorBoard Scalars: Logging training metrics in Keras"
# (scalars_and_keras.ipynb) and "Displaying image data in TensorBoard" (image_summaries.ipynb).
# Adapted: seeded random stand-ins of MNIST / Fashion-MNIST's shapes and dtypes replace the
# downloads (fewer examples), fewer epochs, fit's progress bar off (verbose=0: it prints
# timings) with the history printed instead, rounded; `%tensorboard` and `!rm -rf` cells left
# out; the TensorBoard UI is replaced by reading the event files back (summary_iterator) and
# printing, per run directory (timestamps shown as <stamp>), the sorted (tag, step, kind,
# value) rows. scalars_and_keras: `from keras import backend as K` -> `K = keras.ops` (Keras 3,
# which TF 2.21 uses, has no `K.max`), `self._train_counter` -> `self.optimizer.iterations`
# (Keras 3 has no train counter), `self.optimizer.minimize(loss, ..., tape=tape)` ->
# tape.gradient + apply_gradients (Keras 3's optimizers have no `minimize`),
# `tf.keras.losses.mean_squared_error` -> `tf.keras.losses.MSE` (Keras 3's name), the list
# given to `predict` -> a NumPy array (Keras 3 rejects a list of numbers). image_summaries: no
# matplotlib, so the plot_to_image cells are left out and the confusion matrix
# (tf.math.confusion_matrix instead of sklearn's) is logged as a [1, 10, 10, 1] image of the
# row-normalized matrix.
# Still differs from TF 2.21: the event files' wall times; ndflow's Keras TensorBoard callback
# also writes the run's graph (a graph_def event) and a RunMetadata under tag
# "train_function", which TF 2.21's does not (its Keras 3 looks for `function_spec`, which
# TF 2.21's tf.function lacks). The printed values are rounded to 3 significant digits (the
# Keras model JSON of tag "keras", shown by presence only, equals TF's).
import datetime
import os
import re

import numpy as np
import ndflow as tf
import ndflow.compat.v1 as tf1
from ndflow import keras

K = keras.ops

tf.keras.utils.set_random_seed(0)


def describe(value):
  # What a TensorBoard dashboard would show of one summary value.
  if value.HasField('simple_value'):
    return ('simple_value', float('%.3g' % value.simple_value))
  plugin = value.metadata.plugin_data.plugin_name
  a = tf.make_ndarray(value.tensor)
  head = (plugin, a.dtype.name, a.shape)
  if plugin == 'scalars':
    return head + (float('%.3g' % a),)
  if plugin == 'histograms':
    return head + (int(round(a[:, 2].sum())),)
  if plugin == 'images':
    return head + (a[0].decode(), a[1].decode())
  if plugin == 'text':
    return head + (a.tolist(),)
  return head


def readback(root):
  runs = {}
  for dirpath, _, files in os.walk(root):
    for name in sorted(files):
      if '.tfevents.' not in name:
        continue
      rows = runs.setdefault(re.sub(r'\d{8}-\d{6}', '<stamp>', dirpath), set())
      for event in tf1.train.summary_iterator(os.path.join(dirpath, name)):
        if event.HasField('graph_def'):
          rows.add(('<graph_def>', event.step, 'graph_def'))
        for value in event.summary.value:
          rows.add((value.tag, event.step) + describe(value))
  for run in sorted(runs):
    print(run)
    for row in sorted(runs[run], key=repr):
      print('  ', row)


def rounded(history):
  return {k: [float('%.3g' % x) for x in v] for k, v in history.items()}


# ---- Get started with TensorBoard ----
rng = np.random.RandomState(0)
x_train = rng.randint(0, 256, (256, 28, 28)).astype('uint8')
y_train = rng.randint(0, 10, 256).astype('uint8')
x_test = rng.randint(0, 256, (64, 28, 28)).astype('uint8')
y_test = rng.randint(0, 10, 64).astype('uint8')
x_train, x_test = x_train / 255.0, x_test / 255.0


def create_model():
  return tf.keras.models.Sequential([
    tf.keras.layers.Input(shape=(28, 28), name='layers_input'),
    tf.keras.layers.Flatten(name='layers_flatten'),
    tf.keras.layers.Dense(512, activation='relu', name='layers_dense'),
    tf.keras.layers.Dropout(0.2, name='layers_dropout'),
    tf.keras.layers.Dense(10, activation='softmax', name='layers_dense_2')
  ])


model = create_model()
model.compile(optimizer='adam',
              loss='sparse_categorical_crossentropy',
              metrics=['accuracy'])

log_dir = "logs/fit/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
tensorboard_callback = tf.keras.callbacks.TensorBoard(log_dir=log_dir, histogram_freq=1)

history = model.fit(x=x_train,
                    y=y_train,
                    epochs=2,
                    validation_data=(x_test, y_test),
                    callbacks=[tensorboard_callback], verbose=0)
print(rounded(history.history))

train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
test_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test))

train_dataset = train_dataset.shuffle(60000).batch(64)
test_dataset = test_dataset.batch(64)

loss_object = tf.keras.losses.SparseCategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam()

# Define our metrics
train_loss = tf.keras.metrics.Mean('train_loss', dtype=tf.float32)
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy('train_accuracy')
test_loss = tf.keras.metrics.Mean('test_loss', dtype=tf.float32)
test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy('test_accuracy')


def train_step(model, optimizer, x_train, y_train):
  with tf.GradientTape() as tape:
    predictions = model(x_train, training=True)
    loss = loss_object(y_train, predictions)
  grads = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))

  train_loss(loss)
  train_accuracy(y_train, predictions)


def test_step(model, x_test, y_test):
  predictions = model(x_test)
  loss = loss_object(y_test, predictions)

  test_loss(loss)
  test_accuracy(y_test, predictions)


current_time = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
train_log_dir = 'logs/gradient_tape/' + current_time + '/train'
test_log_dir = 'logs/gradient_tape/' + current_time + '/test'
train_summary_writer = tf.summary.create_file_writer(train_log_dir)
test_summary_writer = tf.summary.create_file_writer(test_log_dir)

model = create_model() # reset our model

EPOCHS = 2

for epoch in range(EPOCHS):
  for (x_train_b, y_train_b) in train_dataset:
    train_step(model, optimizer, x_train_b, y_train_b)
  with train_summary_writer.as_default():
    tf.summary.scalar('loss', train_loss.result(), step=epoch)
    tf.summary.scalar('accuracy', train_accuracy.result(), step=epoch)

  for (x_test_b, y_test_b) in test_dataset:
    test_step(model, x_test_b, y_test_b)
  with test_summary_writer.as_default():
    tf.summary.scalar('loss', test_loss.result(), step=epoch)
    tf.summary.scalar('accuracy', test_accuracy.result(), step=epoch)

  template = 'Epoch {}, Loss: {:.3f}, Accuracy: {:.3f}, Test Loss: {:.3f}, Test Accuracy: {:.3f}'
  print (template.format(epoch+1,
                         float(train_loss.result()),
                         float(train_accuracy.result()*100),
                         float(test_loss.result()),
                         float(test_accuracy.result()*100)))

  # Reset metrics every epoch
  train_loss.reset_state()
  test_loss.reset_state()
  train_accuracy.reset_state()
  test_accuracy.reset_state()

readback('logs/fit')
readback('logs/gradient_tape')
print("get started guide done")

# ---- TensorBoard Scalars: Logging training metrics in Keras ----
data_size = 1000
# 80% of the data is for training.
train_pct = 0.8

train_size = int(data_size * train_pct)

# Create some input data between -1 and 1 and randomize it.
np.random.seed(0)
x = np.linspace(-1, 1, data_size)
np.random.shuffle(x)

# Generate the output data.
# y = 0.5x + 2 + noise
y = 0.5 * x + 2 + np.random.normal(0, 0.05, (data_size, ))

# Split into test and train pairs.
x_train, y_train = x[:train_size], y[:train_size]
x_test, y_test = x[train_size:], y[train_size:]

logdir = "logs/scalars/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
tensorboard_callback = keras.callbacks.TensorBoard(log_dir=logdir)

model = keras.models.Sequential([
    keras.layers.Dense(16, input_dim=1),
    keras.layers.Dense(1),
])

model.compile(
    loss='mse', # keras.losses.mean_squared_error
    optimizer=keras.optimizers.SGD(learning_rate=0.2),
)

print("Training ... With default parameters, this takes less than 10 seconds.")
training_history = model.fit(
    x_train, # input
    y_train, # output
    batch_size=train_size,
    verbose=0, # Suppress chatty output; use Tensorboard instead
    epochs=20,
    validation_data=(x_test, y_test),
    callbacks=[tensorboard_callback],
)

print("Average test loss: ", round(float(np.average(training_history.history['loss'])), 3))
print(np.round(model.predict(np.array([60, 25, 2]), verbose=0), 2))
readback(logdir)

logdir = "logs/scalars/lr-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
file_writer = tf.summary.create_file_writer(logdir + "/metrics")
file_writer.set_as_default()


def lr_schedule(epoch):
  """
  Returns a custom learning rate that decreases as epochs progress.
  """
  learning_rate = 0.2
  if epoch > 10:
    learning_rate = 0.02
  if epoch > 20:
    learning_rate = 0.01
  if epoch > 50:
    learning_rate = 0.005

  tf.summary.scalar('learning rate', data=learning_rate, step=epoch)
  return learning_rate


lr_callback = keras.callbacks.LearningRateScheduler(lr_schedule)
tensorboard_callback = keras.callbacks.TensorBoard(log_dir=logdir)

model = keras.models.Sequential([
    keras.layers.Dense(16, input_dim=1),
    keras.layers.Dense(1),
])

model.compile(
    loss='mse', # keras.losses.mean_squared_error
    optimizer=keras.optimizers.SGD(),
)

training_history = model.fit(
    x_train, # input
    y_train, # output
    batch_size=train_size,
    verbose=0, # Suppress chatty output; use Tensorboard instead
    epochs=25,
    validation_data=(x_test, y_test),
    callbacks=[tensorboard_callback, lr_callback],
)
print(np.round(model.predict(np.array([60, 25, 2]), verbose=0), 2))
file_writer.flush()
readback(logdir)

rng = np.random.RandomState(1)
x_train = rng.randint(0, 256, (1000, 28, 28)).astype('uint8')
y_train = rng.randint(0, 10, 1000).astype('uint8')
x_test = rng.randint(0, 256, (200, 28, 28)).astype('uint8')
y_test = rng.randint(0, 10, 200).astype('uint8')
x_train, x_test = x_train / 255.0, x_test / 255.0


def create_model():
  return tf.keras.models.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(512, activation='relu'),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(10, activation='softmax')
  ])


log_dir = 'logs/batch_level/' + datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + '/train'
train_writer = tf.summary.create_file_writer(log_dir)


class MyModel(tf.keras.Model):
  def __init__(self, model):
    super().__init__()
    self.model = model

  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      y_pred = self.model(x, training=True)
      loss = self.compiled_loss(y, y_pred)
      mse = tf.keras.losses.MSE(y, K.max(y_pred, axis=-1))
    grads = tape.gradient(loss, self.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    with train_writer.as_default(step=self.optimizer.iterations):
      tf.summary.scalar('batch_loss', loss)
      tf.summary.scalar('batch_mse', mse)
    return self.compute_metrics(x, y, y_pred, None)

  def call(self, x):
    x = self.model(x)
    return x


# Adds custom batch-level metrics to our previous Functional API model
model = MyModel(create_model())
model.compile(optimizer='adam',
              loss='sparse_categorical_crossentropy',
              metrics=['accuracy'])

tensorboard_callback = tf.keras.callbacks.TensorBoard(log_dir=log_dir)

history = model.fit(x=x_train,
                    y=y_train,
                    epochs=2,
                    batch_size=500,
                    validation_data=(x_test, y_test),
                    callbacks=[tensorboard_callback], verbose=0)
print(rounded(history.history))
train_writer.flush()
readback('logs/batch_level')
print("scalars guide done")

# ---- Displaying image data in TensorBoard ----
train_images = rng.randint(0, 256, (500, 28, 28)).astype('uint8')
train_labels = rng.randint(0, 10, 500).astype('uint8')
test_images = rng.randint(0, 256, (100, 28, 28)).astype('uint8')
test_labels = rng.randint(0, 10, 100).astype('uint8')

# Names of the integer classes, i.e., 0 -> T-short/top, 1 -> Trouser, etc.
class_names = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat',
    'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot']

print("Shape: ", train_images[0].shape)
print("Label: ", train_labels[0], "->", class_names[train_labels[0]])

# Reshape the image for the Summary API.
img = np.reshape(train_images[0], (-1, 28, 28, 1))

# Sets up a timestamped log directory.
logdir = "logs/train_data/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
# Creates a file writer for the log directory.
file_writer = tf.summary.create_file_writer(logdir)

# Using the file writer, log the reshaped image.
with file_writer.as_default():
  tf.summary.image("Training data", img, step=0)

with file_writer.as_default():
  # Don't forget to reshape.
  images = np.reshape(train_images[0:25], (-1, 28, 28, 1))
  tf.summary.image("25 training data examples", images, max_outputs=25, step=0)

model = keras.models.Sequential([
    keras.layers.Flatten(input_shape=(28, 28)),
    keras.layers.Dense(32, activation='relu'),
    keras.layers.Dense(10, activation='softmax')
])

model.compile(
    optimizer='adam',
    loss='sparse_categorical_crossentropy',
    metrics=['accuracy']
)

logdir = "logs/image/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
# Define the basic TensorBoard callback.
tensorboard_callback = keras.callbacks.TensorBoard(log_dir=logdir)
file_writer_cm = tf.summary.create_file_writer(logdir + '/cm')


def log_confusion_matrix(epoch, logs):
  # Use the model to predict the values from the validation dataset.
  test_pred_raw = model.predict(test_images, verbose=0)
  test_pred = np.argmax(test_pred_raw, axis=1)

  # Calculate the confusion matrix.
  cm = tf.math.confusion_matrix(test_labels, test_pred, num_classes=10).numpy()
  # Log the confusion matrix as an image summary.
  cm_image = (cm / np.maximum(cm.sum(axis=1, keepdims=True), 1)).reshape(1, 10, 10, 1)

  # Log the confusion matrix as an image summary.
  with file_writer_cm.as_default():
    tf.summary.image("epoch_confusion_matrix", cm_image, step=epoch)


# Define the per-epoch callback.
cm_callback = keras.callbacks.LambdaCallback(on_epoch_end=log_confusion_matrix)

# Train the classifier.
history = model.fit(
    train_images,
    train_labels,
    epochs=2,
    verbose=0, # Suppress chatty output
    callbacks=[tensorboard_callback, cm_callback],
    validation_data=(test_images, test_labels),
)
print(rounded(history.history))
file_writer.flush()
file_writer_cm.flush()
readback('logs/train_data')
readback('logs/image')
print("image summaries guide done")
