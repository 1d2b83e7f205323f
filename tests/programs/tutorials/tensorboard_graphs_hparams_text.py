# TensorBoard guides (tensorflow/tensorboard docs/): "Examining the TensorFlow Graph"
# (graphs.ipynb), "Hyperparameter Tuning with the HParams Dashboard"
# (hyperparameter_tuning_with_hparams.ipynb) and "Displaying text data in TensorBoard"
# (text_summaries.ipynb).
# Adapted: seeded random stand-ins of Fashion-MNIST's shapes and dtypes replace the downloads
# (fewer examples), fewer epochs, fit/evaluate's progress bars off (verbose=0: they print
# timings) with the history and accuracies printed instead, rounded; `%tensorboard`, `!rm -rf`
# and the cell downloading hparams_demo_logs.zip left out; the TensorBoard UI is replaced by
# reading the event files back (summary_iterator) and printing, per run directory
# (timestamps shown as <stamp>), the sorted (tag, step, kind, value) rows; the hparams
# plugin's data is printed without its start/end times; the trace's RunMetadata as the op
# types of its function graphs less argument/return nodes (TF's runtime also records the
# function of an `_EagerConst` it instantiates while tracing).
# graphs: the guide's `trace_on(graph=True, profiler=True)` + `trace_export(...,
# profiler_outdir=logdir)` fails in TF 2.21 (a warning that the profiler won't be enabled,
# then UnavailableError "Cannot export profiling results. No profiler is running."; ndflow
# does the same), so `profiler_outdir` is passed to trace_on, as TF 2.21's warning says.
# Still differs from TF 2.21: the event files' wall times; ndflow's Keras TensorBoard callback
# also writes the run's graph (a graph_def event) and a RunMetadata under tag
# "train_function", which TF 2.21's does not; on stderr, ndflow logs TF's frequent-retracing
# warning for `Trainer.test_step` in the hparams loop (TF 2.21's Keras counts the train and
# test calls under one tf.function code object and stays below the threshold).
import json
import os
import re
import tempfile
from datetime import datetime

import numpy as np
import tensorboard
import ndflow as tf
import ndflow.compat.v1 as tf1
from ndflow import keras
from tensorboard.plugins.hparams import api as hp
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.compat.proto import config_pb2

tf.keras.utils.set_random_seed(0)

print("TensorFlow version: ", tf.__version__)
print(tensorboard.__version__)


PLUMBING = {'_Arg', '_Retval', 'Placeholder', 'Identity', '_EagerConst'}


def describe(value):
  # What a TensorBoard dashboard would show of one summary value.
  plugin = value.metadata.plugin_data.plugin_name
  a = tf.make_ndarray(value.tensor)
  head = (plugin, a.dtype.name, a.shape)
  if plugin == 'scalars':
    return head + (float('%.3g' % a),)
  if plugin == 'text':
    return head + (a.tolist(),)
  if plugin == 'hparams':
    data = plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    if data.HasField('session_start_info'):   # a map: printed sorted
      info = data.session_start_info
      values = tuple(sorted((k, getattr(v, v.WhichOneof('kind')))
                            for k, v in info.hparams.items()))
      return head + ('session_start_info', values, info.group_name)
    if data.HasField('session_end_info'):
      data.session_end_info.end_time_secs = 0
    return head + (str(data).replace('\n', ' '),)
  if plugin in ('graph_run_metadata', 'graph_run_metadata_graph') and \
      value.tag != 'train_function':
    # the op types of the traced functions, less their argument and return nodes
    meta = config_pb2.RunMetadata.FromString(a.item())
    ops = [tuple(sorted({n.op for n in fg.pre_optimization_graph.node} - PLUMBING))
           for fg in meta.function_graphs]
    return head + tuple(o for o in ops if o)
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


# ---- Examining the TensorFlow Graph ----
# Define the model.
model = keras.models.Sequential([
    keras.layers.Flatten(input_shape=(28, 28)),
    keras.layers.Dense(32, activation='relu'),
    keras.layers.Dropout(0.2),
    keras.layers.Dense(10, activation='softmax')
])

model.compile(
    optimizer='adam',
    loss='sparse_categorical_crossentropy',
    metrics=['accuracy'])

rng = np.random.RandomState(0)
train_images = rng.randint(0, 256, (256, 28, 28)).astype('uint8')
train_labels = rng.randint(0, 10, 256).astype('uint8')
train_images = train_images / 255.0

# Define the Keras TensorBoard callback.
logdir="logs/fit/" + datetime.now().strftime("%Y%m%d-%H%M%S")
tensorboard_callback = keras.callbacks.TensorBoard(log_dir=logdir)

# Train the model.
history = model.fit(
    train_images,
    train_labels,
    batch_size=64,
    epochs=2,
    callbacks=[tensorboard_callback], verbose=0)
print(rounded(history.history))
readback('logs/fit')


# The function to be traced.
@tf.function
def my_func(x, y):
  # A simple hand-rolled layer.
  return tf.nn.relu(tf.matmul(x, y))


# Set up logging.
stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
logdir = 'logs/func/%s' % stamp
writer = tf.summary.create_file_writer(logdir)

# Sample data for your function.
x = tf.random.uniform((3, 3))
y = tf.random.uniform((3, 3))

# Bracket the function call with
# tf.summary.trace_on() and tf.summary.trace_export().
tf.summary.trace_on(graph=True, profiler=True, profiler_outdir=logdir)
# Call only one tf.function when tracing.
z = my_func(x, y)
with writer.as_default():
  tf.summary.trace_export(
      name="my_func_trace",
      step=0)
print(z.shape, z.dtype)
print('profile written:', os.path.isdir(os.path.join(logdir, 'plugins', 'profile')))
readback('logs/func')
print("graphs guide done")

# ---- Hyperparameter Tuning with the HParams Dashboard ----
x_train = rng.randint(0, 256, (300, 28, 28)).astype('uint8')
y_train = rng.randint(0, 10, 300).astype('uint8')
x_test = rng.randint(0, 256, (100, 28, 28)).astype('uint8')
y_test = rng.randint(0, 10, 100).astype('uint8')
x_train, x_test = x_train / 255.0, x_test / 255.0

HP_NUM_UNITS = hp.HParam('num_units', hp.Discrete([16, 32]))
HP_DROPOUT = hp.HParam('dropout', hp.RealInterval(0.1, 0.2))
HP_OPTIMIZER = hp.HParam('optimizer', hp.Discrete(['adam', 'sgd']))

METRIC_ACCURACY = 'accuracy'

with tf.summary.create_file_writer('logs/hparam_tuning').as_default():
  hp.hparams_config(
    hparams=[HP_NUM_UNITS, HP_DROPOUT, HP_OPTIMIZER],
    metrics=[hp.Metric(METRIC_ACCURACY, display_name='Accuracy')],
  )


def train_test_model(hparams):
  model = tf.keras.models.Sequential([
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(hparams[HP_NUM_UNITS], activation=tf.nn.relu),
    tf.keras.layers.Dropout(hparams[HP_DROPOUT]),
    tf.keras.layers.Dense(10, activation=tf.nn.softmax),
  ])
  model.compile(
      optimizer=hparams[HP_OPTIMIZER],
      loss='sparse_categorical_crossentropy',
      metrics=['accuracy'],
  )

  model.fit(x_train, y_train, epochs=1, verbose=0) # Run with 1 epoch to speed things up for demo purposes
  _, accuracy = model.evaluate(x_test, y_test, verbose=0)
  print('accuracy', round(accuracy, 2))
  return accuracy


def run(run_dir, hparams):
  with tf.summary.create_file_writer(run_dir).as_default():
    hp.hparams(hparams)  # record the values used in this trial
    accuracy = train_test_model(hparams)
    tf.summary.scalar(METRIC_ACCURACY, accuracy, step=1)


session_num = 0

for num_units in HP_NUM_UNITS.domain.values:
  for dropout_rate in (HP_DROPOUT.domain.min_value, HP_DROPOUT.domain.max_value):
    for optimizer in HP_OPTIMIZER.domain.values:
      hparams = {
          HP_NUM_UNITS: num_units,
          HP_DROPOUT: dropout_rate,
          HP_OPTIMIZER: optimizer,
      }
      run_name = "run-%d" % session_num
      print('--- Starting trial: %s' % run_name)
      print({h.name: hparams[h] for h in hparams})
      run('logs/hparam_tuning/' + run_name, hparams)
      session_num += 1

readback('logs/hparam_tuning')
print("hparams guide done")

# ---- Displaying text data in TensorBoard ----
my_text = "Hello world! 😃"

# Sets up a timestamped log directory.
logdir = "logs/text_basics/" + datetime.now().strftime("%Y%m%d-%H%M%S")
# Creates a file writer for the log directory.
file_writer = tf.summary.create_file_writer(logdir)

# Using the file writer, log the text.
with file_writer.as_default():
  tf.summary.text("first_text", my_text, step=0)

# Sets up a second directory to not overwrite the first one.
logdir = "logs/multiple_texts/" + datetime.now().strftime("%Y%m%d-%H%M%S")
# Creates a file writer for the log directory.
file_writer = tf.summary.create_file_writer(logdir)

# Using the file writer, log the text.
with file_writer.as_default():
  with tf.name_scope("name_scope_1"):
    for step in range(20):
      tf.summary.text("a_stream_of_text", f"Hello from step {step}", step=step)
      tf.summary.text("another_stream_of_text", f"This can be kept separate {step}", step=step)
  with tf.name_scope("name_scope_2"):
    tf.summary.text("just_from_step_0", "This is an important announcement from step 0", step=0)

# Sets up a third timestamped log directory under "logs"
logdir = "logs/markdown/" + datetime.now().strftime("%Y%m%d-%H%M%S")
# Creates a file writer for the log directory.
file_writer = tf.summary.create_file_writer(logdir)

some_obj_worth_noting = {
  "tfds_training_data": {
      "name": "mnist",
      "split": "train",
      "shuffle_files": "True",
  },
  "keras_optimizer": {
      "name": "Adagrad",
      "learning_rate": "0.001",
      "epsilon": 1e-07,
  },
  "hardware": "Cloud TPU",
}


# TODO: Update this example when TensorBoard is released with
# https://github.com/tensorflow/tensorboard/pull/4585
# which supports fenced codeblocks in Markdown.
def pretty_json(hp):
  json_hp = json.dumps(hp, indent=2)
  return "".join("\t" + line for line in json_hp.splitlines(True))


markdown_text = """
### Markdown Text

TensorBoard supports basic markdown syntax, including:

    preformatted code

**bold text**

| and | tables |
| ---- | ---------- |
| among | others |
"""

with file_writer.as_default():
  tf.summary.text("run_params", pretty_json(some_obj_worth_noting), step=0)
  tf.summary.text("markdown_jubiliee", markdown_text, step=0)

readback('logs/text_basics')
readback('logs/multiple_texts')
readback('logs/markdown')
print("text summaries guide done")
