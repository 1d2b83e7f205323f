# TF guides "Validating correctness & numerical equivalence" (migrate/validate_correctness)
# and "Use TF1.x models in TF2 workflows" (migrate/model_mapping).
# Adapted: TF 2.21 ships Keras 3 without tf_keras, so `tf.compat.v1.keras.utils.
# track_tf1_style_variables`, `get_or_create_layer`, `DeterministicRandomTestTool` and
# `tf.compat.v1.layers` do not exist (the script prints TF's errors for them); the cells built
# on them run as a TF 2.21 user must: the decorator is dropped (Keras 3 layers create their
# variables eagerly), the TF1.x code (`get_variable`/`variable_scope`/`make_template`,
# regularizers in the REGULARIZATION_LOSSES collection) runs in a `tf.Graph` and `Session`
# beside its Keras 3 counterpart (the guide's `DenseLayer` holds a Keras `Dense`), and the
# random-tool cells use explicit op seeds 0, 1, 2 (as the tool's 'num_random_ops' mode numbers
# the ops) to show graph and eager random numbers match. The slim Inception-ResNet-v2 cells
# (tf_slim and the tensorflow/models clone are downloads) are left out: the dense layer stands
# in for it in the validation steps (variables, then output and regularization loss with
# weights fixed to 0.001, TF1.x graph against TF2). traceback.print_exc() -> print(err).
# Notebook cell results are printed; seeded. The output equals TF 2.21's; printed rounded
# where the last float digits depend on summation order (regularization losses,
# FullyNativeModel's outputs), and the missing names' AttributeErrors without the module's
# name (TF's is keras.utils).
from contextlib import contextmanager
import numpy as np
import ndflow as tf
import ndflow.compat.v1 as v1

tf.keras.utils.set_random_seed(0)

# The tf_keras-only APIs the guides use are missing in TF 2.21 (Keras 3).
for name in ["track_tf1_style_variables", "get_or_create_layer",
             "DeterministicRandomTestTool"]:
  try:
    getattr(tf.compat.v1.keras.utils, name)
  except AttributeError as err:   # the module's name differs: TF's is keras.utils
    print(type(err).__name__, str(err).split("'", 2)[-1])
try:
  tf.compat.v1.layers.dense
except AttributeError as err:
  print(type(err).__name__, err)

# ---- validate_correctness: checking that no variables are created on later calls


@contextmanager
def assert_no_variable_creations():
  """Assert no variables are created in this context manager scope."""
  def invalid_variable_creator(next_creator, **kwargs):
    raise ValueError("Attempted to create a new variable instead of reusing an existing one. "
                     "Args: {}".format(kwargs))

  with tf.variable_creator_scope(invalid_variable_creator):
    yield


@contextmanager
def catch_and_raise_created_variables():
  """Raise all variables created within this context manager scope (if any)."""
  created_vars = []

  def variable_catcher(next_creator, **kwargs):
    var = next_creator(**kwargs)
    created_vars.append(var)
    return var

  with tf.variable_creator_scope(variable_catcher):
    yield
  if created_vars:
    raise ValueError("Created vars:", created_vars)


height, width = 8, 8


class BrokenScalingLayer(tf.keras.layers.Layer):
  """Scaling layer that incorrectly creates new weights each time:"""

  def call(self, inputs):
    var = tf.Variable(initial_value=2.0)
    bias = tf.Variable(initial_value=2.0, name='bias')
    return inputs * var + bias


model = BrokenScalingLayer()
inputs = tf.ones((1, height, width, 3))
model(inputs)

try:
  with assert_no_variable_creations():
    model(inputs)
except ValueError as err:
  print(err)

model = BrokenScalingLayer()
inputs = tf.ones((1, height, width, 3))
model(inputs)

try:
  with catch_and_raise_created_variables():
    model(inputs)
except ValueError as err:
  print(err)


class FixedScalingLayer(tf.keras.layers.Layer):
  """Scaling layer that incorrectly creates new weights each time:"""
  def __init__(self):
    super().__init__()
    self.var = None
    self.bias = None

  def call(self, inputs):
    if self.var is None:
      self.var = tf.Variable(initial_value=2.0)
      self.bias = tf.Variable(initial_value=2.0, name='bias')
    return inputs * self.var + self.bias


model = FixedScalingLayer()
inputs = tf.ones((1, height, width, 3))
print(model(inputs)[0, 0, 0])

with assert_no_variable_creations():
  model(inputs)
with catch_and_raise_created_variables():
  model(inputs)
print("weights:", [(w.name, w.shape) for w in model.weights])

# ---- validate_correctness: random numbers in a TF1.x graph and eagerly (explicit op seeds
# stand in for DeterministicRandomTestTool's 'num_random_ops' mode)
tf.random.set_seed(1)
graph = tf.Graph()
with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
  tf.compat.v1.set_random_seed(1)
  a = tf.random.uniform(shape=(3, 1), seed=0)
  a = a * 3
  b = tf.random.uniform(shape=(3, 3), seed=1)
  b = b * 3
  c = tf.random.uniform(shape=(3, 3), seed=2)
  c = c * 3
  graph_a, graph_b, graph_c = sess.run([a, b, c])

print(graph_a, graph_b, graph_c, sep="\n")

a = tf.random.uniform(shape=(3, 1), seed=0)
a = a * 3
b = tf.random.uniform(shape=(3, 3), seed=1)
b = b * 3
c = tf.random.uniform(shape=(3, 3), seed=2)
c = c * 3
print(a, b, c, sep="\n")

tol_dict = {'rtol': 1e-06, 'atol': 1e-05}
np.testing.assert_allclose(graph_a, a.numpy(), **tol_dict)
np.testing.assert_allclose(graph_b, b.numpy(), **tol_dict)
np.testing.assert_allclose(graph_c, c.numpy(), **tol_dict)
assert not np.allclose(b.numpy(), c.numpy(), **tol_dict)
print("graph and eager random numbers match")

# ---- model_mapping: the TF1.x layer (get_variable in variable_scope, a regularizer) in a
# graph, then the same forward pass eagerly and with Keras 3 layers


def tf1_dense(out, units):
  with tf.compat.v1.variable_scope("dense"):
    # The weights are created with a `regularizer`,
    # so the layer should track their regularization losses
    kernel = tf.compat.v1.get_variable(
        shape=[out.shape[-1], units],
        regularizer=tf.keras.regularizers.L2(),
        initializer=tf.compat.v1.initializers.glorot_normal,
        name="kernel")
    bias = tf.compat.v1.get_variable(
        shape=[units,],
        initializer=tf.compat.v1.initializers.zeros,
        name="bias")
    out = tf.linalg.matmul(out, kernel)
    out = tf.compat.v1.nn.bias_add(out, bias)
  return out


x_value = np.linspace(-1., 1., 8 * 20, dtype=np.float32).reshape(8, 20)
graph = tf.Graph()
with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
  out = tf1_dense(tf.constant(x_value), 10)
  print([(v.name, v.shape.as_list(), v.trainable) for v in v1.global_variables()])
  reg_losses = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES)
  print([t.name for t in reg_losses])   # TF's list holds a _LazyEvalTensor, printed by address
  var_reset = tf.group([var.assign(tf.ones_like(var) * 0.001)
                        for var in tf.compat.v1.global_variables()])
  sess.run(var_reset)
  tf1_regularization_loss = sess.run(tf.math.add_n(reg_losses))
  tf1_output = sess.run(out)
print("Regularization loss: %.6e" % tf1_regularization_loss)   # last digits: summation order
print(tf1_output[0][:5])


class DenseLayer(tf.keras.layers.Layer):

  def __init__(self, units, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.units = units
    self.dense = tf.keras.layers.Dense(units, kernel_regularizer=tf.keras.regularizers.L2(),
                                       kernel_initializer="glorot_normal")

  def call(self, inputs):
    return self.dense(inputs)


layer = DenseLayer(10)
x = tf.constant(x_value)
layer(x)
print("Resetting variables to:", [var.path for var in layer.trainable_variables])
for var in layer.trainable_variables:
  var.assign(tf.ones_like(var) * 0.001)
tf2_output = layer(x)
tf2_regularization_loss = tf.math.add_n(layer.losses)
print("Regularization loss: %.6e" % tf2_regularization_loss)
print(tf2_output[0][:5])
np.testing.assert_allclose(tf1_regularization_loss, tf2_regularization_loss.numpy(), **tol_dict)
np.testing.assert_allclose(tf1_output, tf2_output.numpy(), **tol_dict)
print("TF1.x graph and Keras 3 outputs match")

print("Resetting variables to zero:", [var.name for var in layer.trainable_variables])
for var in layer.trainable_variables:
  var.assign(var * 0.0)
print("layer.losses:", layer.losses)
print("calling layer again.")
out = layer(x)
print("layer.losses: ", layer.losses)
print(out[:2])

inputs = tf.keras.Input(shape=(20,))
outputs = DenseLayer(10)(inputs)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
x = tf.random.normal(shape=(8, 20))
print(model(x).shape)
print([(w.path, w.shape) for w in model.weights])
print(len(model.losses), model.losses[0].shape, model.losses[0].dtype)

# ---- model_mapping: make_template (the TF1.x way to share variables), eagerly and in a graph


def my_op(x, scalar_name):
  var1 = tf.compat.v1.get_variable(scalar_name,
                                   shape=[],
                                   regularizer=tf.keras.regularizers.L2(),
                                   initializer=tf.compat.v1.constant_initializer(1.5))
  return x * var1


scale_by_y = tf.compat.v1.make_template('scale_by_y', my_op, scalar_name='y')
with tf.compat.v1.variable_scope('layer'):
  out = scale_by_y(tf.ones(shape=(2, 3)))
  out = scale_by_y(out)
print("weights:", scale_by_y.variables)
print("output:", out)

graph = tf.Graph()
with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
  scale_by_y = tf.compat.v1.make_template('scale_by_y', my_op, scalar_name='y')
  with tf.compat.v1.variable_scope('layer'):
    out = scale_by_y(tf.ones(shape=(2, 3)))
    out = scale_by_y(out)
  print("weights:", [v.name for v in v1.global_variables()])
  reg_losses = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES)
  print("regularization loss:", [t.name for t in reg_losses])
  sess.run(v1.global_variables_initializer())
  print("regularization loss:", sess.run(reg_losses))
  print("output:", sess.run(out))

# ---- model_mapping: the fully native Keras model (cells FullyNativeModel and
# FullyNativeKerasLayersModel)


class FullyNativeModel(tf.keras.layers.Layer):

  def __init__(self, units, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.units = units
    self.conv_layer = tf.keras.layers.Conv2D(
      3, 3,
      kernel_regularizer="l2")
    self.flatten_layer = tf.keras.layers.Flatten()
    self.dense_layer = tf.keras.layers.Dense(
      self.units,
      kernel_regularizer="l2")

  def call(self, inputs):
    out = self.conv_layer(inputs)
    out = self.flatten_layer(out)
    out = self.dense_layer(out)
    return out


tf.keras.utils.set_random_seed(42)
layer = FullyNativeModel(10)
inputs = tf.random.normal(shape=(10, 5, 5, 5))
migrated_output = layer(inputs)
migrated_regularization_loss = tf.math.add_n(layer.losses)
print(np.round(migrated_regularization_loss.numpy(), 4))
print(np.round(migrated_output.numpy()[0], 4))


class FullyNativeKerasLayersModel(tf.keras.layers.Layer):

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.conv_1 = tf.keras.layers.Conv2D(
          3, 3,
          kernel_regularizer="l2")
    self.conv_2 = tf.keras.layers.Conv2D(
          4, 4,
          kernel_regularizer="l2")
    self.conv_3 = tf.keras.layers.Conv2D(
          5, 5,
          kernel_regularizer="l2")

  def call(self, inputs, training=None):
    with tf.compat.v1.variable_scope('model'):
      out = self.conv_1(inputs)
      out = self.conv_2(out)
      out = self.conv_3(out)
      return out


layer = FullyNativeKerasLayersModel()
print(layer(tf.ones(shape=(10, 10, 10, 10))).shape)
print([v.name for v in layer.weights])
print([v.path for v in layer.weights])
print(len(layer.losses))
print("migrate validate/model mapping done")
