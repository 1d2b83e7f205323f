# TF XLA tutorials "Use XLA with tf.function" (jit_compile.ipynb) and "Classifying CIFAR-10
# with XLA" (autoclustering_xla.ipynb), as written but for: random stand-ins for MNIST and
# CIFAR-10 (and fewer steps and epochs), `eager execution` already on in TF 2 (the
# `enable_eager_execution` call is kept), no GPU assertion (the tutorial runs on the CPU
# here), `%time` as `time.perf_counter()`, and RMSprop's `learning_rate=` where the tutorial
# passes `lr=` and `decay=` (Keras 3, in TF 2.21 too, rejects both), and a seed for the
# weights' initializers (unseeded, one initialization in a few left one of the 100 stand-in
# test digits misclassified after the 60 steps: the printed accuracy 0.99 instead of 1.0).
import time
import numpy as np
import ndflow as tf
tf.compat.v1.enable_eager_execution()
tf.keras.utils.set_random_seed(7)

# -- Use XLA with tf.function ----------------------------------------------------------------
IMAGE_SIZE = 28 * 28
NUM_CLASSES = 10
TRAIN_BATCH_SIZE = 100
TRAIN_STEPS = 60
rng = np.random.default_rng(7)
train_labels = rng.integers(0, 10, 600).astype(np.uint8)
# digits stand-in: each class lights its own band of pixels, plus noise
train_images = rng.integers(0, 60, (600, 28, 28)).astype(np.uint8)
for k in range(10):
    train_images[train_labels == k, 2 * k:2 * k + 3, :] = 250
train, test = (train_images[:500], train_labels[:500]), (train_images[500:], train_labels[500:])
train_ds = tf.data.Dataset.from_tensor_slices(train).batch(TRAIN_BATCH_SIZE).repeat()

def cast(images, labels):
  images = tf.cast(
      tf.reshape(images, [-1, IMAGE_SIZE]), tf.float32)
  labels = tf.cast(labels, tf.int64)
  return (images, labels)

layer = tf.keras.layers.Dense(NUM_CLASSES)
optimizer = tf.keras.optimizers.Adam()

@tf.function(jit_compile=True)
def train_mnist(images, labels):
    images, labels = cast(images, labels)

    with tf.GradientTape() as tape:
      predicted_labels = layer(images)
      loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
          logits=predicted_labels, labels=labels
      ))
    layer_variables = layer.trainable_variables
    grads = tape.gradient(loss, layer_variables)
    optimizer.apply_gradients(zip(grads, layer_variables))

for images, labels in train_ds:
  if optimizer.iterations > TRAIN_STEPS:
    break
  train_mnist(images, labels)

images, labels = cast(test[0], test[1])
predicted_labels = layer(images)
correct_prediction = tf.equal(tf.argmax(predicted_labels, 1), labels)
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
print("Prediction accuracy after training: %s" % accuracy)
print("steps", int(optimizer.iterations))

# -- Classifying CIFAR-10 with XLA -----------------------------------------------------------
tf.keras.backend.clear_session()
tf.config.optimizer.set_jit(False) # Start with XLA disabled.

def load_data():
  r = np.random.default_rng(3)
  x_train = r.integers(0, 256, (256, 32, 32, 3)).astype(np.uint8)
  y_train = r.integers(0, 10, (256, 1)).astype(np.uint8)
  x_test, y_test = x_train[:64], y_train[:64]
  x_train = x_train.astype('float32') / 256
  x_test = x_test.astype('float32') / 256

  # Convert class vectors to binary class matrices.
  y_train = tf.keras.utils.to_categorical(y_train, num_classes=10)
  y_test = tf.keras.utils.to_categorical(y_test, num_classes=10)
  return ((x_train, y_train), (x_test, y_test))

(x_train, y_train), (x_test, y_test) = load_data()

def generate_model():
  return tf.keras.models.Sequential([
    tf.keras.layers.Conv2D(32, (3, 3), padding='same', input_shape=x_train.shape[1:]),
    tf.keras.layers.Activation('relu'),
    tf.keras.layers.Conv2D(32, (3, 3)),
    tf.keras.layers.Activation('relu'),
    tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
    tf.keras.layers.Dropout(0.25),

    tf.keras.layers.Conv2D(64, (3, 3), padding='same'),
    tf.keras.layers.Activation('relu'),
    tf.keras.layers.Conv2D(64, (3, 3)),
    tf.keras.layers.Activation('relu'),
    tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
    tf.keras.layers.Dropout(0.25),

    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(512),
    tf.keras.layers.Activation('relu'),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(10),
    tf.keras.layers.Activation('softmax')
  ])

model = generate_model()

def compile_model(model):
  opt = tf.keras.optimizers.RMSprop(learning_rate=0.0001)
  model.compile(loss='categorical_crossentropy',
                optimizer=opt,
                metrics=['accuracy'])
  return model

model = compile_model(model)

def train_model(model, x_train, y_train, x_test, y_test, epochs=2):
  model.fit(x_train, y_train, batch_size=256, epochs=epochs, validation_data=(x_test, y_test), shuffle=True)

def warmup(model, x_train, y_train, x_test, y_test):
  # Warm up the JIT, we do not wish to measure the compilation time.
  initial_weights = model.get_weights()
  train_model(model, x_train, y_train, x_test, y_test, epochs=1)
  model.set_weights(initial_weights)

warmup(model, x_train, y_train, x_test, y_test)
t = time.perf_counter(); train_model(model, x_train, y_train, x_test, y_test)
print("Wall time without XLA: %.2f s" % (time.perf_counter() - t))

scores = model.evaluate(x_test, y_test, verbose=1)
print('Test loss:', scores[0])
print('Test accuracy:', scores[1])

# We need to clear the session to enable JIT in the middle of the program.
tf.keras.backend.clear_session()
tf.config.optimizer.set_jit(True) # Enable XLA.
model = compile_model(generate_model())
(x_train, y_train), (x_test, y_test) = load_data()

warmup(model, x_train, y_train, x_test, y_test)
t = time.perf_counter(); train_model(model, x_train, y_train, x_test, y_test)
print("Wall time with XLA: %.2f s" % (time.perf_counter() - t))
print("xla tutorials done")
