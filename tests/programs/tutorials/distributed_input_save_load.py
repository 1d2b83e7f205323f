# TF tutorials "Distributed Input" (site/en/tutorials/distribute/input.ipynb) and "Save and load
# a model using a distribution strategy" (site/en/tutorials/distribute/save_and_load.ipynb),
# run as written with the notebooks' displayed cell results printed. MirroredStrategy()
# mirrors on the guide's 2 logical CPU devices (no GPU here, as TF does).
# Adapted: no print of tf.__version__; tf.print writes to sys.stdout (for the comparison);
# the OutOfRangeError's message is checked, not printed (TF's names its internal function);
# the generator cell is seeded; a few cells print more (the InputContext, the element_spec, a
# partial batch, InputOptions); save_and_load: a seeded MNIST stand-in of the same shape and
# dtypes (tfds is not used), fewer examples, paths relative to the working directory, fit
# with verbose=2 (timings, export's capture ids and Keras' symbolic tensor numbers masked);
# the signatures' outputs are printed as shapes; Keras 3 (TF 2.21) rejects model.save to a
# directory, model.save(..., options=) and load_model(..., options=) and has no save_spec():
# those cells print the errors and go on with model.export / tf.saved_model.save / .load;
# tensorflow_hub is not installed, so its hub.KerasLayer cell is left out.
# The output equals TF 2.21's but for one fit's loss in the last printed digit (2.2347 for
# TF's 2.2348: float summation order).
import os
import re
import sys
import numpy as np
import ndflow as tf


class MaskTimes:
    # Keras' verbose=2 epoch lines carry timings ("1s 20ms/step"): blank them for the diff.
    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        text = re.sub(r"\d+(\.\d+)?[mu]?s(/step)?", "Ts", text)
        text = re.sub(r"^  \d+: ", "  <id>: ", text, flags=re.M)  # export's capture ids
        # (Keras numbers its symbolic tensors by how many it has made: TF's make more)
        text = re.sub(r"keras_tensor_\d+", "keras_tensor_N", text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


tf.keras.utils.set_random_seed(0)

# == Distributed Input ==============================================================================
# Simulate multiple CPUs with virtual devices
N_VIRTUAL_DEVICES = 2
physical_devices = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    physical_devices[0], [tf.config.LogicalDeviceConfiguration() for _ in range(N_VIRTUAL_DEVICES)])
print("Available devices:")
for i, device in enumerate(tf.config.list_logical_devices()):
  print("%d) %s" % (i, device))

global_batch_size = 16
# Create a tf.data.Dataset object.
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(global_batch_size)


@tf.function
def train_step(inputs):
  features, labels = inputs
  return labels - 0.3 * features


# Iterate over the dataset using the for..in construct.
for inputs in dataset:
  print(train_step(inputs))

global_batch_size = 16
mirrored_strategy = tf.distribute.MirroredStrategy()
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(global_batch_size)
# Distribute input using the `experimental_distribute_dataset`.
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)
# 1 global batch of data fed to the model in 1 step.
print(next(iter(dist_dataset)))

dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(64).batch(16)
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
dataset = dataset.with_options(options)
print(dataset.options().experimental_distribute.auto_shard_policy)

mirrored_strategy = tf.distribute.MirroredStrategy()


def dataset_fn(input_context):
  print(type(input_context).__name__, input_context.num_input_pipelines,
        input_context.input_pipeline_id, input_context.num_replicas_in_sync)
  batch_size = input_context.get_per_replica_batch_size(global_batch_size)
  dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(64).batch(16)
  dataset = dataset.shard(
      input_context.num_input_pipelines, input_context.input_pipeline_id)
  dataset = dataset.batch(batch_size)
  dataset = dataset.prefetch(2)  # This prefetches 2 batches per device.
  return dataset


dist_dataset = mirrored_strategy.distribute_datasets_from_function(dataset_fn)
print(dist_dataset.element_spec)
print(next(iter(dist_dataset)))

global_batch_size = 16
mirrored_strategy = tf.distribute.MirroredStrategy()
dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(global_batch_size)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)


@tf.function
def train_step(inputs):
  features, labels = inputs
  return labels - 0.3 * features


for x in dist_dataset:
  # train_step trains the model using the dataset elements
  loss = mirrored_strategy.run(train_step, args=(x,))
  print("Loss is ", loss)

num_epochs = 10
steps_per_epoch = 5
for epoch in range(num_epochs):
  dist_iterator = iter(dist_dataset)
  for step in range(steps_per_epoch):
    # train_step trains the model using the dataset elements
    loss = mirrored_strategy.run(train_step, args=(next(dist_iterator),))
    # which is the same as
    # loss = mirrored_strategy.run(train_step, args=(dist_iterator.get_next(),))
    print("Loss is ", loss)

dist_iterator = iter(dist_dataset)
for step in range(7):
  dist_iterator.get_next()
try:
  next(dist_iterator)
except StopIteration:
  print("StopIteration")
try:
  dist_iterator.get_next()
except tf.errors.OutOfRangeError as e:  # (TF's message names its internal function)
  print("OutOfRangeError:", "End of sequence" in e.message)

# You can break the loop with `get_next_as_optional` by checking if the `Optional` contains a value
global_batch_size = 4
steps_per_loop = 5
strategy = tf.distribute.MirroredStrategy()

dataset = tf.data.Dataset.range(9).batch(global_batch_size)
distributed_iterator = iter(strategy.experimental_distribute_dataset(dataset))


@tf.function
def train_fn(distributed_iterator):
  for _ in tf.range(steps_per_loop):
    optional_data = distributed_iterator.get_next_as_optional()
    if not optional_data.has_value():
      break
    per_replica_results = strategy.run(lambda x: x, args=(optional_data.get_value(),))
    tf.print(strategy.experimental_local_results(per_replica_results), output_stream=sys.stdout)


sys.stdout.flush()
train_fn(distributed_iterator)
sys.stdout.flush()

global_batch_size = 16
epochs = 5
steps_per_epoch = 5
mirrored_strategy = tf.distribute.MirroredStrategy()

dataset = tf.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(global_batch_size)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)
print(dist_dataset.element_spec)


@tf.function(input_signature=[dist_dataset.element_spec])
def train_step(per_replica_inputs):
  def step_fn(inputs):
    return 2 * inputs

  return mirrored_strategy.run(step_fn, args=(per_replica_inputs,))


sys.stdout.flush()
for _ in range(epochs):
  iterator = iter(dist_dataset)
  for _ in range(steps_per_epoch):
    output = train_step(next(iterator))
    tf.print(output, output_stream=sys.stdout)
sys.stdout.flush()

strategy = tf.distribute.MirroredStrategy()
vocab = ["a", "b", "c", "d", "f"]

with strategy.scope():
  # Create the layer(s) under scope.
  layer = tf.keras.layers.StringLookup(vocabulary=vocab)


def dataset_fn(input_context):
  # a tf.data.Dataset
  dataset = tf.data.Dataset.from_tensor_slices(["a", "c", "e"]).repeat()

  # Custom your batching, sharding, prefetching, etc.
  global_batch_size = 4
  batch_size = input_context.get_per_replica_batch_size(global_batch_size)
  dataset = dataset.batch(batch_size)
  dataset = dataset.shard(
      input_context.num_input_pipelines,
      input_context.input_pipeline_id)

  # Apply the preprocessing layer(s) to the tf.data.Dataset
  def preprocess_with_kpl(input):
    return layer(input)

  processed_ds = dataset.map(preprocess_with_kpl)
  return processed_ds


distributed_dataset = strategy.distribute_datasets_from_function(dataset_fn)

# Print out a few example batches.
distributed_dataset_iterator = iter(distributed_dataset)
for _ in range(3):
  print(next(distributed_dataset_iterator))

mirrored_strategy = tf.distribute.MirroredStrategy()
dataset_size = 24
batch_size = 6
dataset = tf.data.Dataset.range(dataset_size).enumerate().batch(batch_size)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)


def predict(index, inputs):
  outputs = 2 * inputs
  return index, outputs


result = {}
for index, inputs in dist_dataset:
  output_index, outputs = mirrored_strategy.run(predict, args=(index, inputs))
  indices = list(mirrored_strategy.experimental_local_results(output_index))
  rindices = []
  for a in indices:
    rindices.extend(a.numpy())
  outputs = list(mirrored_strategy.experimental_local_results(outputs))
  routputs = []
  for a in outputs:
    routputs.extend(a.numpy())
  for i, value in zip(rindices, routputs):
    result[i] = value

print(result)

# Partial batches: 5 elements in global batches of 4 -> the last step has 1 element on replica 0
# and an empty batch on replica 1.
dist_dataset = mirrored_strategy.experimental_distribute_dataset(
    tf.data.Dataset.range(5).batch(4))
for x in dist_dataset:
  print(mirrored_strategy.experimental_local_results(x))
options = tf.distribute.InputOptions(experimental_fetch_to_device=False)
print(options)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(
    tf.data.Dataset.range(4).batch(4), options)
for x in dist_dataset:
  print([v.device for v in mirrored_strategy.experimental_local_results(x)])

mirrored_strategy = tf.distribute.MirroredStrategy()


def value_fn(ctx):
  return tf.constant(ctx.replica_id_in_sync_group)


distributed_values = mirrored_strategy.experimental_distribute_values_from_function(value_fn)
for _ in range(4):
  result = mirrored_strategy.run(lambda x: x, args=(distributed_values,))
  print(result)

mirrored_strategy = tf.distribute.MirroredStrategy()
rng = np.random.default_rng(0)


def input_gen():
  while True:
    yield rng.random(4)


# use Dataset.from_generator
dataset = tf.data.Dataset.from_generator(
    input_gen, output_types=(tf.float32), output_shapes=tf.TensorShape([4]))
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)
iterator = iter(dist_dataset)
for _ in range(4):
  result = mirrored_strategy.run(lambda x: x, args=(next(iterator),))
  print(result)
print("distributed input done")

# == Save and load a model using a distribution strategy ============================================
sys.stdout = MaskTimes(sys.stdout)
mirrored_strategy = tf.distribute.MirroredStrategy()
rng = np.random.default_rng(1)


def fake_mnist(n):
  images = rng.integers(0, 256, (n, 28, 28, 1)).astype(np.uint8)
  return tf.data.Dataset.from_tensor_slices((images, rng.integers(0, 10, n)))


def get_data():
  datasets = {'train': fake_mnist(256), 'test': fake_mnist(128)}
  mnist_train, mnist_test = datasets['train'], datasets['test']

  BUFFER_SIZE = 10000

  BATCH_SIZE_PER_REPLICA = 64
  BATCH_SIZE = BATCH_SIZE_PER_REPLICA * mirrored_strategy.num_replicas_in_sync

  def scale(image, label):
    image = tf.cast(image, tf.float32)
    image /= 255

    return image, label

  train_dataset = mnist_train.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)
  eval_dataset = mnist_test.map(scale).batch(BATCH_SIZE)

  return train_dataset, eval_dataset


def get_model():
  with mirrored_strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation='relu'),
        tf.keras.layers.Dense(10)
    ])

    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(),
                  metrics=[tf.metrics.SparseCategoricalAccuracy()])
    return model


model = get_model()
train_dataset, eval_dataset = get_data()
model.fit(train_dataset, epochs=2, verbose=2)

keras_model_path = 'keras_save.keras'
model.save(keras_model_path)
restored_keras_model = tf.keras.models.load_model(keras_model_path)
restored_keras_model.fit(train_dataset, epochs=2, verbose=2)

another_strategy = tf.distribute.OneDeviceStrategy('/cpu:0')
with another_strategy.scope():
  restored_keras_model_ds = tf.keras.models.load_model(keras_model_path)
  restored_keras_model_ds.fit(train_dataset, epochs=2, verbose=2)

model = get_model()  # get a fresh model
saved_model_path = 'tf_save'
tf.saved_model.save(model, saved_model_path)

DEFAULT_FUNCTION_KEY = 'serving_default'
loaded = tf.saved_model.load(saved_model_path)
inference_func = loaded.signatures[DEFAULT_FUNCTION_KEY]
print(inference_func.structured_input_signature)
print(inference_func.structured_outputs)

predict_dataset = eval_dataset.map(lambda image, label: image)
for batch in predict_dataset.take(1):
  print({k: (v.shape, v.dtype) for k, v in inference_func(batch).items()})

another_strategy = tf.distribute.MirroredStrategy()
with another_strategy.scope():
  loaded = tf.saved_model.load(saved_model_path)
  inference_func = loaded.signatures[DEFAULT_FUNCTION_KEY]

  dist_predict_dataset = another_strategy.experimental_distribute_dataset(
      predict_dataset)

  # Calling the function in a distributed manner
  for batch in dist_predict_dataset:
    result = another_strategy.run(inference_func, args=(batch,))
    print(type(result).__name__, list(result),
          [v.shape for v in another_strategy.experimental_local_results(result['output_0'])])
    break

model = get_model()

# Saving the model using Keras `Model.save`
try:
  model.save(saved_model_path)
except ValueError as e:
  print(f'{type(e).__name__}: ', *e.args)
model.export(saved_model_path)

another_strategy = tf.distribute.MirroredStrategy()
# Loading the model using the lower-level API
with another_strategy.scope():
  loaded = tf.saved_model.load(saved_model_path)
print(list(loaded.signatures))

model = get_model()

# Saving the model to a path on localhost.
saved_model_path = 'tf_save'
save_options = tf.saved_model.SaveOptions(experimental_io_device='/job:localhost')
try:
  model.save(saved_model_path, options=save_options)
except ValueError as e:
  print(f'{type(e).__name__}: ', *e.args)
tf.saved_model.save(model, saved_model_path, options=save_options)

# Loading the model from a path on localhost.
another_strategy = tf.distribute.MirroredStrategy()
with another_strategy.scope():
  load_options = tf.saved_model.LoadOptions(experimental_io_device='/job:localhost')
  try:
    loaded = tf.keras.models.load_model(saved_model_path, options=load_options)
  except TypeError as e:
    print(f'{type(e).__name__}: ', *e.args)
  loaded = tf.saved_model.load(saved_model_path, options=load_options)
print(list(loaded.signatures))


class SubclassedModel(tf.keras.Model):
  """Example model defined by subclassing `tf.keras.Model`."""

  output_name = 'output_layer'

  def __init__(self):
    super(SubclassedModel, self).__init__()
    self._dense_layer = tf.keras.layers.Dense(
        5, dtype=tf.dtypes.float32, name=self.output_name)

  def call(self, inputs):
    return self._dense_layer(inputs)


my_model = SubclassedModel()
try:
  my_model.save(saved_model_path)
except ValueError as e:
  print(f'{type(e).__name__}: ', *e.args)

try:
  tf.saved_model.save(my_model, saved_model_path)
  x = tf.saved_model.load(saved_model_path)
  print(x.signatures)
except ValueError as e:
  print(f'{type(e).__name__}: ', *e.args)

try:
  print(my_model.save_spec() is None)
except AttributeError as e:
  print(f'{type(e).__name__}: ', *e.args)

BATCH_SIZE_PER_REPLICA = 4
BATCH_SIZE = BATCH_SIZE_PER_REPLICA * mirrored_strategy.num_replicas_in_sync

dataset_size = 100
dataset = tf.data.Dataset.from_tensors(
    (tf.range(5, dtype=tf.float32), tf.range(5, dtype=tf.float32))
    ).repeat(dataset_size).batch(BATCH_SIZE)

my_model.compile(optimizer='adam', loss='mean_squared_error')
my_model.fit(dataset, epochs=2, verbose=2)

my_model.save('my_model.keras')
print(os.path.exists('my_model.keras'), sorted(os.listdir(saved_model_path)))
print("save and load done")
