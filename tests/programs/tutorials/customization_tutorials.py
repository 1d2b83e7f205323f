# TF tutorials "Customization basics: tensors and operations"
# (site/en/tutorials/customization/basics.ipynb), "Custom layers"
# (site/en/tutorials/customization/custom_layers.ipynb) and "Custom training: walkthrough"
# (site/en/tutorials/customization/custom_training_walkthrough.ipynb), run as written; the
# notebooks' displayed cell results are printed. Adaptations:
# - basics: the matmul timings are printed as a check (they are not deterministic); the
#   shuffled dataset is seeded (tf.random.set_seed) so its order is comparable.
# - walkthrough: no tfds and no download: a seeded local CSV of the same columns as
#   "penguins/processed" (species, then four features scaled to [0, 1]) is written by the
#   script and read with tf.data (TextLineDataset + tf.io.decode_csv) into the same
#   (features, label) pairs; tfds.as_dataframe's tables are printed as the elements they show;
#   no plots (matplotlib is not installed); 51 epochs instead of 201 (printed every 10);
#   seeded (tf.keras.utils.set_random_seed); the TensorFlow Datasets version line is left out.
# - custom layers: `self.add_weight("kernel", shape=...)` -> `self.add_weight(name="kernel",
#   shape=...)`: Keras 3's add_weight takes `shape` first, so TF 2.21 rejects the guide's line
#   ("ValueError: `name` must be passed as a keyword argument. ...").
# - walkthrough: the first predictions are printed rounded to 5 digits (float32 last digits
#   depend on the GEMM's summation order).
# The whole output equals TF 2.21's.
import numpy as np
import ndflow as tf

tf.keras.utils.set_random_seed(0)

# ---------------------------------------------------------------- Customization basics
print(tf.math.add(1, 2))
print(tf.math.add([1, 2], [3, 4]))
print(tf.math.square(5))
print(tf.math.reduce_sum([1, 2, 3]))

# Operator overloading is also supported
print(tf.math.square(2) + tf.math.square(3))

x = tf.linalg.matmul([[1]], [[2, 3]])
print(x)
print(x.shape)
print(x.dtype)

ndarray = np.ones([3, 3])

print("TensorFlow operations convert numpy arrays to Tensors automatically")
tensor = tf.math.multiply(ndarray, 42)
print(tensor)

print("And NumPy operations convert Tensors to NumPy arrays automatically")
print(np.add(tensor, 1))

print("The .numpy() method explicitly converts a Tensor to a numpy array")
print(tensor.numpy())

x = tf.random.uniform([3, 3])

print("Is there a GPU available: "),
print(tf.config.list_physical_devices("GPU"))

print("Is the Tensor on GPU #0:  "),
print(x.device.endswith('GPU:0'))

import time  # noqa: E402


def time_matmul(x):
  start = time.time()
  for loop in range(10):
    tf.linalg.matmul(x, x)

  result = time.time()-start

  # the guide prints "10 loops: {:0.2f}ms" (a timing): checked instead
  print("10 loops timed:", result >= 0)


# Force execution on CPU
print("On CPU:")
with tf.device("CPU:0"):
  x = tf.random.uniform([1000, 1000])
  assert x.device.endswith("CPU:0")
  time_matmul(x)

# Force execution on GPU #0 if available
if tf.config.list_physical_devices("GPU"):
  print("On GPU:")
  with tf.device("GPU:0"):  # Or GPU:1 for the 2nd GPU, GPU:2 for the 3rd etc.
    x = tf.random.uniform([1000, 1000])
    assert x.device.endswith("GPU:0")
    time_matmul(x)

ds_tensors = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6])

# Create a CSV file
import tempfile  # noqa: E402
_, filename = tempfile.mkstemp()

with open(filename, 'w') as f:
  f.write("""Line 1
Line 2
Line 3
  """)

ds_file = tf.data.TextLineDataset(filename)

tf.random.set_seed(1)
ds_tensors = ds_tensors.map(tf.math.square).shuffle(2).batch(2)

ds_file = ds_file.batch(2)

print('Elements of ds_tensors:')
for x in ds_tensors:
  print(x)

print('\nElements in ds_file:')
for x in ds_file:
  print(x)

# ---------------------------------------------------------------- Custom layers
print(tf.config.list_physical_devices('GPU'))

layer = tf.keras.layers.Dense(100)
layer = tf.keras.layers.Dense(10, input_shape=(None, 5))
print(layer(tf.zeros([10, 5])))
print(layer.variables)
print((layer.kernel, layer.bias))


class MyDenseLayer(tf.keras.layers.Layer):
  def __init__(self, num_outputs):
    super(MyDenseLayer, self).__init__()
    self.num_outputs = num_outputs

  def build(self, input_shape):
    self.kernel = self.add_weight(name="kernel",
                                  shape=[int(input_shape[-1]),
                                         self.num_outputs])

  def call(self, inputs):
    return tf.matmul(inputs, self.kernel)


layer = MyDenseLayer(10)
_ = layer(tf.zeros([10, 5]))  # Calling the layer `.builds` it.
print([var.name for var in layer.trainable_variables])


class ResnetIdentityBlock(tf.keras.Model):
  def __init__(self, kernel_size, filters):
    super(ResnetIdentityBlock, self).__init__(name='')
    filters1, filters2, filters3 = filters

    self.conv2a = tf.keras.layers.Conv2D(filters1, (1, 1))
    self.bn2a = tf.keras.layers.BatchNormalization()

    self.conv2b = tf.keras.layers.Conv2D(filters2, kernel_size, padding='same')
    self.bn2b = tf.keras.layers.BatchNormalization()

    self.conv2c = tf.keras.layers.Conv2D(filters3, (1, 1))
    self.bn2c = tf.keras.layers.BatchNormalization()

  def call(self, input_tensor, training=False):
    x = self.conv2a(input_tensor)
    x = self.bn2a(x, training=training)
    x = tf.nn.relu(x)

    x = self.conv2b(x)
    x = self.bn2b(x, training=training)
    x = tf.nn.relu(x)

    x = self.conv2c(x)
    x = self.bn2c(x, training=training)

    x += input_tensor
    return tf.nn.relu(x)


block = ResnetIdentityBlock(1, [1, 2, 3])
_ = block(tf.zeros([1, 2, 3, 3]))
print(block.layers)
print(len(block.variables))
block.summary()

my_seq = tf.keras.Sequential([tf.keras.layers.Conv2D(1, (1, 1),
                                                    input_shape=(
                                                        None, None, 3)),
                             tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Conv2D(2, 1,
                                                    padding='same'),
                             tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Conv2D(3, (1, 1)),
                             tf.keras.layers.BatchNormalization()])
print(my_seq(tf.zeros([1, 2, 3, 3])))
my_seq.summary()

# ---------------------------------------------------------------- Custom training: walkthrough
import os  # noqa: E402

print("TensorFlow version: {}".format(tf.__version__))

# Local stand-in for tfds' "penguins/processed": species (0, 1, 2) and four features scaled
# to [0, 1], each species around its own centre.
rng = np.random.RandomState(42)
centres = np.array([[0.25, 0.65, 0.25, 0.25], [0.55, 0.65, 0.35, 0.3],
                    [0.55, 0.25, 0.75, 0.7]])
species = rng.randint(0, 3, 150)
feats = np.clip(centres[species] + rng.normal(0, 0.08, (150, 4)), 0, 1)
with open("penguins_processed.csv", "w") as f:
  f.write("species,culmen_length_mm,culmen_depth_mm,flipper_length_mm,body_mass_g\n")
  for s, row in zip(species, feats):
    f.write("%d,%s\n" % (s, ",".join("%.6f" % v for v in row)))


def parse_line(line):
  cols = tf.io.decode_csv(line, record_defaults=[[0]] + [[0.0]] * 4)
  return tf.stack(cols[1:]), tf.cast(cols[0], tf.int64)


ds_all = tf.data.TextLineDataset("penguins_processed.csv").skip(1).map(parse_line)
print(ds_all.element_spec)
for features, label in ds_all.take(5):
  print(features.numpy(), label.numpy())

class_names = ['Adélie', 'Chinstrap', 'Gentoo']

ds_test = ds_all.take(30)    # train[:20%]
ds_train = ds_all.skip(30)   # train[20%:]
assert isinstance(ds_test, tf.data.Dataset)

print("Test dataset sample: ")
for features, label in ds_test.take(5):
  print(features.numpy(), label.numpy())
print("Train dataset sample: ")
for features, label in ds_train.take(5):
  print(features.numpy(), label.numpy())

ds_train_batch = ds_train.batch(32)

features, labels = next(iter(ds_train_batch))

print(features)
print(labels)

model = tf.keras.Sequential([
  tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # input shape required
  tf.keras.layers.Dense(10, activation=tf.nn.relu),
  tf.keras.layers.Dense(3)
])

predictions = model(features)
# rounded: the last float32 digits depend on the GEMM's summation order
print(np.round(predictions[:5].numpy(), 5))
print(np.round(tf.nn.softmax(predictions[:5]).numpy(), 5))

print("Prediction: {}".format(tf.math.argmax(predictions, axis=1)))
print("    Labels: {}".format(labels))

loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def loss(model, x, y, training):
  # training=training is needed only if there are layers with different
  # behavior during training versus inference (e.g. Dropout).
  y_ = model(x, training=training)

  return loss_object(y_true=y, y_pred=y_)


l = loss(model, features, labels, training=False)
print("Loss test: {}".format(l))


def grad(model, inputs, targets):
  with tf.GradientTape() as tape:
    loss_value = loss(model, inputs, targets, training=True)
  return loss_value, tape.gradient(loss_value, model.trainable_variables)


optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)

loss_value, grads = grad(model, features, labels)

print("Step: {}, Initial Loss: {}".format(optimizer.iterations.numpy(),
                                          loss_value.numpy()))

optimizer.apply_gradients(zip(grads, model.trainable_variables))

print("Step: {},         Loss: {}".format(optimizer.iterations.numpy(),
                                          loss(model, features, labels, training=True).numpy()))

# Keep results for plotting
train_loss_results = []
train_accuracy_results = []

num_epochs = 51

for epoch in range(num_epochs):
  epoch_loss_avg = tf.keras.metrics.Mean()
  epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

  # Training loop - using batches of 32
  for x, y in ds_train_batch:
    # Optimize the model
    loss_value, grads = grad(model, x, y)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

    # Track progress
    epoch_loss_avg.update_state(loss_value)  # Add current batch loss
    # Compare predicted label to actual label
    epoch_accuracy.update_state(y, model(x, training=True))

  # End epoch
  train_loss_results.append(epoch_loss_avg.result())
  train_accuracy_results.append(epoch_accuracy.result())

  if epoch % 10 == 0:
    print("Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(epoch,
                                                                epoch_loss_avg.result(),
                                                                epoch_accuracy.result()))

test_accuracy = tf.keras.metrics.Accuracy()
ds_test_batch = ds_test.batch(10)

for (x, y) in ds_test_batch:
  logits = model(x, training=False)
  prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
  test_accuracy(prediction, y)

print("Test set accuracy: {:.3%}".format(test_accuracy.result()))

print(tf.stack([y, prediction], axis=1))

predict_dataset = tf.convert_to_tensor([
    [0.3, 0.8, 0.4, 0.5,],
    [0.4, 0.1, 0.8, 0.5,],
    [0.7, 0.9, 0.8, 0.4]
])

predictions = model(predict_dataset, training=False)

for i, logits in enumerate(predictions):
  class_idx = tf.math.argmax(logits).numpy()
  p = tf.nn.softmax(logits)[class_idx]
  name = class_names[class_idx]
  print("Example {} prediction: {} ({:4.1f}%)".format(i, name, 100*p))

os.remove(filename)
print("customization tutorials done")
