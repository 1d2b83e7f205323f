# TF guides "Migrate tf.feature_column to Keras preprocessing layers"
# (migrate/migrating_feature_columns) and "Migrate TensorBoard" (migrate/tensorboard), plus the
# tf.compat.v1.summary -> tf.summary step that guide describes.
# Adapted: the Estimator cells are left out (TF 2.21 has no tf.estimator); TF 2.21's Keras 3
# has no `tf1.keras.layers.DenseFeatures`, so `call_feature_columns` uses
# `tf1.feature_column.input_layer` (which runs eagerly and gives the same tensor); notebook cell
# results are printed; Keras 3 needs a list, not dict.values(), for Concatenate, and
# keras.ops.expand_dims, not tf.expand_dims, on a KerasTensor; random MNIST stand-in, 2 epochs;
# the TensorBoard UI is replaced by reading the event files back with summary_iterator.
import glob
import math
import os
import tempfile
import numpy as np
import ndflow as tf
import ndflow.compat.v1 as tf1

tf.keras.utils.set_random_seed(0)


def call_feature_columns(feature_columns, inputs):
  # This is a convenient way to call a `feature_column` outside of an estimator
  # to display its output.
  return tf1.feature_column.input_layer(inputs, feature_columns)


input_dict = {
  'foo': tf.constant([1]),
  'bar': tf.constant([0]),
  'baz': tf.constant([-1])
}

columns = [
  tf1.feature_column.numeric_column('foo'),
  tf1.feature_column.numeric_column('bar'),
  tf1.feature_column.numeric_column('baz'),
]
print(call_feature_columns(columns, input_dict))

inputs = {
  'foo': tf.keras.Input(shape=()),
  'bar': tf.keras.Input(shape=()),
  'baz': tf.keras.Input(shape=()),
}
# Inputs are typically transformed by preprocessing layers before concatenation.
outputs = tf.keras.layers.Concatenate()(list(inputs.values()))
model = tf.keras.Model(inputs=inputs, outputs=outputs)
print(model(input_dict))

categorical_col = tf1.feature_column.categorical_column_with_identity(
    'type', num_buckets=3)
indicator_col = tf1.feature_column.indicator_column(categorical_col)
print(call_feature_columns(indicator_col, {'type': [0, 1, 2]}))

one_hot_layer = tf.keras.layers.CategoryEncoding(
    num_tokens=3, output_mode='one_hot')
print(one_hot_layer([0, 1, 2]))


def normalize(x):
  mean, variance = (2.0, 1.0)
  return (x - mean) / math.sqrt(variance)


numeric_col = tf1.feature_column.numeric_column('col', normalizer_fn=normalize)
print(call_feature_columns(numeric_col, {'col': tf.constant([[0.], [1.], [2.]])}))

normalization_layer = tf.keras.layers.Normalization(mean=2.0, variance=1.0)
print(normalization_layer(tf.constant([[0.], [1.], [2.]])))

numeric_col = tf1.feature_column.numeric_column('col')
bucketized_col = tf1.feature_column.bucketized_column(numeric_col, [1, 4, 5])
print(call_feature_columns(bucketized_col, {'col': tf.constant([1., 2., 3., 4., 5.])}))

discretization_layer = tf.keras.layers.Discretization(bin_boundaries=[1, 4, 5])
one_hot_layer = tf.keras.layers.CategoryEncoding(
    num_tokens=4, output_mode='one_hot')
print(one_hot_layer(discretization_layer([1., 2., 3., 4., 5.])))

vocab_col = tf1.feature_column.categorical_column_with_vocabulary_list(
    'sizes',
    vocabulary_list=['small', 'medium', 'large'],
    num_oov_buckets=0)
indicator_col = tf1.feature_column.indicator_column(vocab_col)
print(call_feature_columns(indicator_col, {'sizes': ['small', 'medium', 'large']}))

string_lookup_layer = tf.keras.layers.StringLookup(
    vocabulary=['small', 'medium', 'large'],
    num_oov_indices=0,
    output_mode='one_hot')
print(string_lookup_layer(['small', 'medium', 'large']))

vocab_col = tf1.feature_column.categorical_column_with_vocabulary_list(
    'col',
    vocabulary_list=['small', 'medium', 'large'],
    num_oov_buckets=0)
embedding_col = tf1.feature_column.embedding_column(vocab_col, 4)
print(call_feature_columns(embedding_col, {'col': ['small', 'medium', 'large']}))

string_lookup_layer = tf.keras.layers.StringLookup(
    vocabulary=['small', 'medium', 'large'], num_oov_indices=0)
embedding = tf.keras.layers.Embedding(3, 4)
print(embedding(string_lookup_layer(['small', 'medium', 'large'])))

ids = tf.constant([[5, 11, 5, 17, 17]])
weights = tf.constant([[0.5, 1.5, 0.7, 1.8, 0.2]])

categorical_col = tf1.feature_column.categorical_column_with_identity(
    'ids', num_buckets=20)
weighted_categorical_col = tf1.feature_column.weighted_categorical_column(
    categorical_col, 'weights')
indicator_col = tf1.feature_column.indicator_column(weighted_categorical_col)
print(call_feature_columns(indicator_col, {'ids': ids, 'weights': weights}))

ids = tf.constant([[5, 11, 5, 17, 17]])
weights = tf.constant([[0.5, 1.5, 0.7, 1.8, 0.2]])

# Using sparse output is more efficient when `num_tokens` is large.
count_layer = tf.keras.layers.CategoryEncoding(
    num_tokens=20, output_mode='count', sparse=True)
print(tf.sparse.to_dense(count_layer(ids, count_weights=weights)))

ids = tf.constant([[5, 11, 5, 17, 17]])
weights = tf.constant([[0.5, 1.5, 0.7, 1.8, 0.2]])

categorical_col = tf1.feature_column.categorical_column_with_identity(
    'ids', num_buckets=20)
weighted_categorical_col = tf1.feature_column.weighted_categorical_column(
    categorical_col, 'weights')
embedding_col = tf1.feature_column.embedding_column(
    weighted_categorical_col, 4, combiner='mean')
print(call_feature_columns(embedding_col, {'ids': ids, 'weights': weights}))

ids = tf.constant([[5, 11, 5, 17, 17]])
weights = tf.constant([[0.5, 1.5, 0.7, 1.8, 0.2]])

# For `combiner='mean'`, normalize your weights to sum to 1. Removing this line
# would be equivalent to an `embedding_column` with `combiner='sum'`.
weights = weights / tf.reduce_sum(weights, axis=-1, keepdims=True)

count_layer = tf.keras.layers.CategoryEncoding(
    num_tokens=20, output_mode='count', sparse=True)
embedding_layer = tf.keras.layers.Dense(4, use_bias=False)
print(embedding_layer(count_layer(ids, count_weights=weights)))

features = {
    'type': [0, 1, 1],
    'size': ['small', 'small', 'medium'],
    'weight': [2.7, 1.8, 1.6],
}
labels = [1, 1, 0]
predict_features = {'type': [0], 'size': ['foo'], 'weight': [-0.7]}

vocab = ['small', 'medium', 'large']
one_hot_dims = 3
embedding_dims = 4
weight_mean = 2.0
weight_variance = 1.0

inputs = {
  'type': tf.keras.Input(shape=(), dtype='int64'),
  'size': tf.keras.Input(shape=(), dtype='string'),
  'weight': tf.keras.Input(shape=(), dtype='float32'),
}
# Convert index to one-hot; e.g., [2] -> [0,0,1].
type_output = tf.keras.layers.CategoryEncoding(
      one_hot_dims, output_mode='one_hot')(inputs['type'])
# Convert size strings to indices; e.g., ['small'] -> [1].
size_output = tf.keras.layers.StringLookup(vocabulary=vocab)(inputs['size'])
# Normalize the numeric inputs; e.g., [2.0] -> [0.0].
weight_output = tf.keras.layers.Normalization(
      axis=None, mean=weight_mean, variance=weight_variance)(inputs['weight'])
outputs = {
  'type': type_output,
  'size': size_output,
  'weight': weight_output,
}
preprocessing_model = tf.keras.Model(inputs, outputs)

# Apply the preprocessing in tf.data.Dataset.map.
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)
dataset = dataset.map(lambda x, y: (preprocessing_model(x), y),
                      num_parallel_calls=tf.data.AUTOTUNE)
# Display a preprocessed input sample.
print(next(dataset.take(1).as_numpy_iterator()))

inputs = {
  'type': tf.keras.Input(shape=(one_hot_dims,), dtype='float32'),
  'size': tf.keras.Input(shape=(), dtype='int64'),
  'weight': tf.keras.Input(shape=(), dtype='float32'),
}
# Since the embedding is trainable, it needs to be part of the training model.
embedding = tf.keras.layers.Embedding(len(vocab), embedding_dims)
outputs = tf.keras.layers.Concatenate()([
  inputs['type'],
  embedding(inputs['size']),
  tf.keras.ops.expand_dims(inputs['weight'], -1),
])
outputs = tf.keras.layers.Dense(1)(outputs)
training_model = tf.keras.Model(inputs, outputs)

# Train on the preprocessed data.
training_model.compile(
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
history = training_model.fit(dataset, verbose=0)
print({k: [round(x, 4) for x in v] for k, v in history.history.items()})

inputs = preprocessing_model.input
outputs = training_model(preprocessing_model(inputs))
inference_model = tf.keras.Model(inputs, outputs)

predict_dataset = tf.data.Dataset.from_tensor_slices(predict_features).batch(1)
print(inference_model.predict(predict_dataset, verbose=0))

inference_model.save('model.keras')
restored_model = tf.keras.models.load_model('model.keras')
print(restored_model.predict(predict_dataset, verbose=0))
print("migrating feature columns guide done")

# ---- Migrate TensorBoard ----
rng = np.random.default_rng(0)
x_train = rng.integers(0, 256, (60, 28, 28)).astype(np.uint8)
y_train = rng.integers(0, 10, 60).astype(np.uint8)
x_test, y_test = x_train[:20], y_train[:20]
x_train, x_test = x_train / 255.0, x_test / 255.0


def create_model():
  return tf.keras.models.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28), name='layers_flatten'),
    tf.keras.layers.Dense(512, activation='relu', name='layers_dense'),
    tf.keras.layers.Dropout(0.2, name='layers_dropout'),
    tf.keras.layers.Dense(10, activation='softmax', name='layers_dense_2')
  ])


model = create_model()
model.compile(optimizer='adam',
              loss='sparse_categorical_crossentropy',
              metrics=['accuracy'],
              steps_per_execution=10)

log_dir = tempfile.mkdtemp()
tensorboard_callback = tf.keras.callbacks.TensorBoard(
  log_dir=log_dir,
  histogram_freq=1) # Enable histogram computation with each epoch.

model.fit(x=x_train,
          y=y_train,
          epochs=2,
          validation_data=(x_test, y_test),
          callbacks=[tensorboard_callback], verbose=0)


def event_tags(pattern):
  # What TensorBoard would show: the (tag, step) pairs of the event files.
  tags = set()
  for path in sorted(glob.glob(pattern)):
    for event in tf1.train.summary_iterator(path):
      for value in event.summary.value:
        tags.add((value.tag, event.step))
  return sorted(tags)


print(sorted(os.listdir(log_dir)))
print(event_tags(os.path.join(log_dir, 'train', 'events.out.tfevents.*')))
print(event_tags(os.path.join(log_dir, 'validation', 'events.out.tfevents.*')))

# TF1: tf.compat.v1.summary ops in a graph, merged and written with a FileWriter.
tf1_dir = tempfile.mkdtemp()
with tf.Graph().as_default():
  step = tf1.placeholder(tf.int64, shape=[])
  loss = tf1.placeholder(tf.float32, shape=[])
  tf1.summary.scalar('loss', loss)
  tf1.summary.histogram('weights', tf.constant([1.0, 2.0, 2.0, 3.0]))
  merged = tf1.summary.merge_all()
  with tf1.Session() as sess:
    writer = tf1.summary.FileWriter(tf1_dir, sess.graph)
    for i in range(3):
      writer.add_summary(sess.run(merged, {loss: 1.0 / (i + 1), step: i}), i)
    writer.close()

# TF2: tf.summary with a default writer.
tf2_dir = tempfile.mkdtemp()
writer = tf.summary.create_file_writer(tf2_dir)
with writer.as_default():
  for i in range(3):
    tf.summary.scalar('loss', 1.0 / (i + 1), step=i)
    tf.summary.histogram('weights', [1.0, 2.0, 2.0, 3.0], step=i)
writer.flush()

for name, d in (("tf1", tf1_dir), ("tf2", tf2_dir)):
  for path in sorted(glob.glob(os.path.join(d, 'events.out.tfevents.*'))):
    for event in tf1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.HasField('simple_value'):
          print(name, event.step, value.tag, 'simple_value', round(value.simple_value, 4))
        elif value.HasField('histo'):
          print(name, event.step, value.tag, 'histo', value.histo.num, value.histo.sum)
        else:
          print(name, event.step, value.tag, value.metadata.plugin_data.plugin_name,
                tf.make_ndarray(value.tensor))
      for field in ('graph_def', 'meta_graph_def'):
        if event.HasField(field):
          print(name, field)
print("migrating tensorboard guide done")
