# TF guides "Migrate metrics and optimizers" (migrate/metrics_optimizers), "Migrate early
# stopping" (migrate/early_stopping), "Migrate LoggingTensorHook and StopAtStepHook to Keras
# callbacks" (migrate/logging_stop_hook) and "Migrate the fault tolerance mechanism"
# (migrate/fault_tolerance): their TF2 (Keras and custom loop) cells.
# Adapted: the TF1 Estimator cells are left out (TF 2.21 has no tf.estimator), and so are the
# multi-worker ones; seeded random stand-ins replace MNIST (tfds / mnist.load_data are
# downloads): 28x28 uint8 images, 10 classes, fewer samples; fewer epochs and steps; fit's
# progress bars (timings) are off (verbose=0) and the results they show are printed from
# the History instead; the time-limit callback gets a 0 s limit (stops after the first batch,
# as a too-slow run would) and the loop's "Time taken" is printed as its type; the early
# stopping data is one image with random labels (the loss stops improving, so the callback
# stops fit); the step-interrupted run has 4 epochs and the interruption is at step 14 with
# save_freq=3 (later epochs differ from TF's in the 4th decimal: float last digits); a
# callback printing each epoch's start shows where BackupAndRestore resumes; temporary
# directories are printed relative to themselves; `reset_states` (Keras 3's metrics lack
# it, so TF 2.21 rejects the guide's line) -> `reset_state`; Keras 3's warning for
# `Flatten(input_shape=...)` is avoided with an `Input` layer; `tf.math.argmax` on a
# KerasTensor, which TF 2.21 rejects (its error is printed), -> `tf.keras.ops.argmax`.
# Notebook cell results are printed. The output equals TF 2.21's.
import os
import tempfile
import time
import numpy as np
import ndflow as tf

tf.keras.utils.set_random_seed(0)

# ---- Migrate metrics and optimizers
features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [0, 0, 1]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [0, 1, 1]

dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)
eval_dataset = tf.data.Dataset.from_tensor_slices(
      (eval_features, eval_labels)).batch(1)

inputs = tf.keras.Input((2,))
logits = tf.keras.layers.Dense(2)(inputs)
try:
  predictions = tf.math.argmax(input=logits, axis=1)
except ValueError as err:   # TF 2.21 rejects the guide's line: Keras 3 has no TF-op layers
  print(type(err).__name__, str(err).splitlines()[0])
predictions = tf.keras.ops.argmax(logits, axis=1)
model = tf.keras.models.Model(inputs, predictions)
optimizer = tf.keras.optimizers.Adagrad(learning_rate=0.05)

model.compile(optimizer, loss='mse', metrics=[tf.keras.metrics.Accuracy()])
print(model.evaluate(eval_dataset, return_dict=True, verbose=0))

accuracy = tf.keras.metrics.Accuracy()

accuracy.update_state(y_true=[0, 0, 1, 1], y_pred=[0, 0, 0, 1])
print(accuracy.result().numpy())

accuracy.update_state(y_true=[0, 0, 1, 1], y_pred=[0, 0, 0, 0])
accuracy.update_state(y_true=[0, 0, 1, 1], y_pred=[1, 1, 0, 0])
print(accuracy.result().numpy())

# ---- Migrate early stopping
rng = np.random.RandomState(0)
# one image for all samples (random labels): the loss stops improving, so early stopping acts
x_train_images = np.repeat(rng.randint(0, 256, (1, 28, 28)).astype("uint8"), 512, axis=0)
y_train_labels = rng.randint(0, 10, 512).astype("int64")
x_test_images = rng.randint(0, 256, (128, 28, 28)).astype("uint8")
y_test_labels = rng.randint(0, 10, 128).astype("int64")


def normalize_img(image, label):
  return tf.cast(image, tf.float32) / 255., label


ds_train = tf.data.Dataset.from_tensor_slices((x_train_images, y_train_labels))
ds_test = tf.data.Dataset.from_tensor_slices((x_test_images, y_test_labels))

ds_train = ds_train.map(
    normalize_img, num_parallel_calls=tf.data.AUTOTUNE)
ds_train = ds_train.batch(128)

ds_test = ds_test.map(
    normalize_img, num_parallel_calls=tf.data.AUTOTUNE)
ds_test = ds_test.batch(128)

model = tf.keras.models.Sequential([
  tf.keras.Input((28, 28)),
  tf.keras.layers.Flatten(),
  tf.keras.layers.Dense(128, activation='relu'),
  tf.keras.layers.Dense(10)
])

model.compile(
    optimizer=tf.keras.optimizers.Adam(0.005),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[tf.keras.metrics.SparseCategoricalAccuracy()],
)

callback = tf.keras.callbacks.EarlyStopping(monitor='loss', patience=3)

history = model.fit(
    ds_train,
    epochs=100,
    validation_data=ds_test,
    callbacks=[callback],
    verbose=0,
)

print(len(history.history['loss']))
print(sorted(history.history))
print([round(v, 4) for v in history.history['loss']])
print([round(v, 4) for v in history.history['val_sparse_categorical_accuracy']])


class LimitTrainingTime(tf.keras.callbacks.Callback):
  def __init__(self, max_time_s):
    super().__init__()
    self.max_time_s = max_time_s
    self.start_time = None

  def on_train_begin(self, logs):
    self.start_time = time.time()

  def on_train_batch_end(self, batch, logs):
    now = time.time()
    if now - self.start_time > self.max_time_s:
      self.model.stop_training = True


callback = LimitTrainingTime(0)
history = model.fit(
    ds_train,
    epochs=100,
    validation_data=ds_test,
    callbacks=[callback],
    verbose=0,
)
print(len(history.history['loss']))

model = tf.keras.models.Sequential([
  tf.keras.Input((28, 28)),
  tf.keras.layers.Flatten(),
  tf.keras.layers.Dense(128, activation='relu'),
  tf.keras.layers.Dense(10)
])

optimizer = tf.keras.optimizers.Adam(0.005)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

train_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()
train_loss_metric = tf.keras.metrics.SparseCategoricalCrossentropy()
val_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()
val_loss_metric = tf.keras.metrics.SparseCategoricalCrossentropy()


@tf.function
def train_step(x, y):
  with tf.GradientTape() as tape:
      logits = model(x, training=True)
      loss_value = loss_fn(y, logits)
  grads = tape.gradient(loss_value, model.trainable_weights)
  optimizer.apply_gradients(zip(grads, model.trainable_weights))
  train_acc_metric.update_state(y, logits)
  train_loss_metric.update_state(y, logits)
  return loss_value


@tf.function
def test_step(x, y):
  logits = model(x, training=False)
  val_acc_metric.update_state(y, logits)
  val_loss_metric.update_state(y, logits)


epochs = 100
patience = 5
wait = 0
best = float('inf')

for epoch in range(epochs):
    print("\nStart of epoch %d" % (epoch,))
    start_time = time.time()

    for step, (x_batch_train, y_batch_train) in enumerate(ds_train):
      loss_value = train_step(x_batch_train, y_batch_train)
      if step % 200 == 0:
        print("Training loss at step %d: %.4f" % (step, loss_value.numpy()))
        print("Seen so far: %s samples" % ((step + 1) * 128))
    train_acc = train_acc_metric.result()
    train_loss = train_loss_metric.result()
    train_acc_metric.reset_state()
    train_loss_metric.reset_state()
    print("Training acc over epoch: %.4f" % (train_acc.numpy()))

    for x_batch_val, y_batch_val in ds_test:
      test_step(x_batch_val, y_batch_val)
    val_acc = val_acc_metric.result()
    val_loss = val_loss_metric.result()
    val_acc_metric.reset_state()
    val_loss_metric.reset_state()
    print("Validation acc: %.4f" % (float(val_acc),))
    print("Time taken: %s" % (type(time.time() - start_time).__name__))

    # The early stopping strategy: stop the training if `val_loss` does not
    # decrease over a certain number of epochs.
    wait += 1
    if val_loss < best:
      best = val_loss
      wait = 0
    if wait >= patience:
      break
print("stopped after epoch", epoch)

# ---- Migrate LoggingTensorHook and StopAtStepHook to Keras callbacks
features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]


class StopAtStepCallback(tf.keras.callbacks.Callback):
  def __init__(self, stop_step=None):
    super().__init__()
    self._stop_step = stop_step

  def on_batch_end(self, batch, logs=None):
    if self.model.optimizer.iterations >= self._stop_step:
      self.model.stop_training = True
      print('\nstop training now')


class LoggingTensorCallback(tf.keras.callbacks.Callback):
  def __init__(self, every_n_iter):
      super().__init__()
      self._every_n_iter = every_n_iter
      self._log_count = every_n_iter

  def on_batch_end(self, batch, logs=None):
    if self._log_count > 0:
      self._log_count -= 1
      print("Logging Tensor Callback: dense/kernel:",
            model.layers[0].weights[0])
      print("Logging Tensor Callback: dense/bias:",
            model.layers[0].weights[1])
      print("Logging Tensor Callback loss:", logs["loss"])
    else:
      self._log_count -= self._every_n_iter


dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)
model = tf.keras.models.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adagrad(learning_rate=0.05)
model.compile(optimizer, "mse")

# Begin training.
# The training will stop after 2 steps, and the weights/loss will also be logged.
history = model.fit(dataset, callbacks=[StopAtStepCallback(stop_step=2),
                                        LoggingTensorCallback(every_n_iter=2)], verbose=0)
print(history.history, history.epoch)

# ---- Migrate the fault tolerance mechanism
x_train = rng.randint(0, 256, (320, 28, 28)).astype("uint8")
y_train = rng.randint(0, 10, 320).astype("uint8")
x_test = rng.randint(0, 256, (64, 28, 28)).astype("uint8")
y_test = rng.randint(0, 10, 64).astype("uint8")
x_train, x_test = x_train / 255.0, x_test / 255.0


class InterruptAtEpoch(tf.keras.callbacks.Callback):
  # A callback for artificially interrupting training.
  def __init__(self, interrupting_epoch=3):
    self.interrupting_epoch = interrupting_epoch

  def on_epoch_end(self, epoch, log=None):
    if epoch == self.interrupting_epoch:
      raise RuntimeError('Interruption')


def create_model():
  return tf.keras.models.Sequential([
    tf.keras.Input((28, 28)),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(512, activation='relu'),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(10)
  ])


loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
model = create_model()
model.compile(optimizer='adam',
              loss=loss,
              metrics=['accuracy'])
log_dir = tempfile.mkdtemp()
backup_restore_callback = tf.keras.callbacks.BackupAndRestore(
    backup_dir = log_dir)


def print_history(history):
  print(history.epoch, {k: [round(v, 4) for v in vs] for k, vs in history.history.items()})


class RecordEpochs(tf.keras.callbacks.Callback):
  def on_epoch_begin(self, epoch, logs=None):
    print("epoch", epoch, "begins")


try:
  model.fit(x=x_train,
            y=y_train,
            epochs=6,
            steps_per_epoch=10,
            validation_data=(x_test, y_test),
            callbacks=[backup_restore_callback, InterruptAtEpoch(), RecordEpochs()],
            verbose=0)
except Exception as e:
  print(f'{type(e).__name__}:{e}')
print(sorted(os.listdir(log_dir)))

model = create_model()
model.compile(optimizer='adam',
              loss=loss,
              metrics=['accuracy'],
              steps_per_execution=10)
print_history(model.fit(x=x_train,
                        y=y_train,
                        epochs=6,
                        steps_per_epoch=10,
                        validation_data=(x_test, y_test),
                        callbacks=[backup_restore_callback, RecordEpochs()],
                        verbose=0))
print(os.path.exists(log_dir))   # BackupAndRestore deletes its backup once training ends


class InterruptAtStep(tf.keras.callbacks.Callback):
  # A callback for artificially interrupting training.
  def __init__(self, interrupting_step=14):
    self.total_step_count = 0
    self.interrupting_step = interrupting_step

  def on_batch_begin(self, batch, logs=None):
    self.total_step_count += 1

  def on_batch_end(self, batch, logs=None):
    if self.total_step_count == self.interrupting_step:
      print("\nInterrupting at step count", self.total_step_count)
      raise RuntimeError('Interruption')


log_dir_2 = tempfile.mkdtemp()

backup_restore_callback = tf.keras.callbacks.BackupAndRestore(
    backup_dir = log_dir_2, save_freq=3
)
model = create_model()
model.compile(optimizer='adam',
              loss=loss,
              metrics=['accuracy'])
try:
  model.fit(x=x_train,
            y=y_train,
            epochs=4,
            steps_per_epoch=10,
            validation_data=(x_test, y_test),
            callbacks=[backup_restore_callback, InterruptAtStep(), RecordEpochs()],
            verbose=0)
except Exception as e:
  print(f'{type(e).__name__}:{e}')
print(sorted(os.listdir(log_dir_2)))

model = create_model()
model.compile(optimizer='adam',
              loss=loss,
              metrics=['accuracy'],
              steps_per_execution=10)
print_history(model.fit(x=x_train,
                        y=y_train,
                        epochs=4,
                        steps_per_epoch=10,
                        validation_data=(x_test, y_test),
                        callbacks=[backup_restore_callback, RecordEpochs()],
                        verbose=0))

model = create_model()
optimizer = tf.keras.optimizers.SGD(learning_rate=0.001)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
log_dir = tempfile.mkdtemp()
epochs = 3
steps_per_epoch = 3

checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
checkpoint_manager = tf.train.CheckpointManager(
            checkpoint, log_dir, max_to_keep=2)

for epoch in range(epochs):
  if epoch > 0:
      tf.train.load_checkpoint(save_path)
  print(f"\nStart of epoch {epoch}")

  for step in range(steps_per_epoch):
    with tf.GradientTape() as tape:

      logits = model(x_train, training=True)
      loss_value = loss_fn(y_train, logits)

      grads = tape.gradient(loss_value, model.trainable_weights)
      optimizer.apply_gradients(zip(grads, model.trainable_weights))

    save_path = checkpoint_manager.save()
    print(f"Checkpoint saved to {os.path.relpath(save_path, log_dir)}")
    print(f"Training loss at step {step}: {loss_value:.5f}")
print(sorted(os.listdir(log_dir)))
print(checkpoint_manager.checkpoints == [os.path.join(log_dir, "ckpt-8"),
                                         os.path.join(log_dir, "ckpt-9")])
print("migrate metrics/callbacks done")
