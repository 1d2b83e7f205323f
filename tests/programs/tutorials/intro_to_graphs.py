# TF guide "Introduction to graphs and tf.function" (site/en/guide/intro_to_graphs.ipynb), whole.
# Adapted: the timing cells run 5 calls of power(x, 20) and print whether they took time
# (timings are machine noise); tf.random.set_seed makes the random inputs TF's. AutoGraph's
# generated code and the graph's node list are summarized: ndflow's converter writes its own
# code (no `fscope`/try blocks) and its `cond` has one output where TF's has two.
import timeit
from datetime import datetime  # noqa: F401 - imported by the guide

import ndflow as tf

tf.random.set_seed(0)


# Define a Python function.
def a_regular_function(x, y, b):
  x = tf.matmul(x, y)
  x = x + b
  return x


# The Python type of `a_function_that_uses_a_graph` will now be a
# `PolymorphicFunction`.
a_function_that_uses_a_graph = tf.function(a_regular_function)
print(type(a_function_that_uses_a_graph).__name__)
# Make some tensors.
x1 = tf.constant([[1.0, 2.0]])
y1 = tf.constant([[2.0], [3.0]])
b1 = tf.constant(4.0)
orig_value = a_regular_function(x1, y1, b1).numpy()
# Call a `tf.function` like a Python function.
tf_function_value = a_function_that_uses_a_graph(x1, y1, b1).numpy()
assert(orig_value == tf_function_value)


def inner_function(x, y, b):
  x = tf.matmul(x, y)
  x = x + b
  return x


@tf.function
def outer_function(x):
  y = tf.constant([[2.0], [3.0]])
  b = tf.constant(4.0)
  return inner_function(x, y, b)


print(outer_function(tf.constant([[1.0, 2.0]])).numpy())


def simple_relu(x):
  if tf.greater(x, 0):
    return x
  else:
    return 0


tf_simple_relu = tf.function(simple_relu)
print("First branch, with graph:", tf_simple_relu(tf.constant(1)).numpy())
print("Second branch, with graph:", tf_simple_relu(tf.constant(-1)).numpy())
# This is the graph-generating output of AutoGraph.
code = tf.autograph.to_code(simple_relu)
print("ag__.if_stmt" in code, "def else_body():" in code)
# This is the graph itself.
graph_def = tf_simple_relu.get_concrete_function(tf.constant(1)).graph.as_graph_def()
print(sorted({(n.name.split("_")[0], n.op) for n in graph_def.node}))


@tf.function
def my_relu(x):
  return tf.maximum(0., x)


# `my_relu` creates new graphs as it observes different input types.
print(my_relu(tf.constant(5.5)))
print(my_relu([1, -1]))
print(my_relu(tf.constant([3., -3.])))
# These two calls do *not* create new graphs.
print(my_relu(tf.constant(-2.5)))  # Input type matches `tf.constant(5.5)`.
print(my_relu(tf.constant([-1., 1.])))  # Input type matches `tf.constant([3., -3.])`.
# There are three `ConcreteFunction`s (one for each graph) in `my_relu`.
print(my_relu.pretty_printed_concrete_signatures())


@tf.function
def get_MSE(y_true, y_pred):
  sq_diff = tf.pow(y_true - y_pred, 2)
  return tf.reduce_mean(sq_diff)


y_true = tf.random.uniform([5], maxval=10, dtype=tf.int32)
y_pred = tf.random.uniform([5], maxval=10, dtype=tf.int32)
print(y_true)
print(y_pred)
print(get_MSE(y_true, y_pred))
tf.config.run_functions_eagerly(True)
print(get_MSE(y_true, y_pred))
# Don't forget to set it back when you are done.
tf.config.run_functions_eagerly(False)


@tf.function
def get_MSE(y_true, y_pred):  # noqa: F811 - the guide redefines it
  print("Calculating MSE!")
  sq_diff = tf.pow(y_true - y_pred, 2)
  return tf.reduce_mean(sq_diff)


error = get_MSE(y_true, y_pred)
error = get_MSE(y_true, y_pred)
error = get_MSE(y_true, y_pred)
# Now, globally set everything to run eagerly to force eager execution.
tf.config.run_functions_eagerly(True)
# Observe what is printed below.
error = get_MSE(y_true, y_pred)
error = get_MSE(y_true, y_pred)
error = get_MSE(y_true, y_pred)
tf.config.run_functions_eagerly(False)
print(error)


def unused_return_eager(x):
  # Get index 1 will fail when `len(x) == 1`
  tf.gather(x, [1])  # unused
  return x


try:
  print(unused_return_eager(tf.constant([0.0])))
except tf.errors.InvalidArgumentError as e:
  # All operations are run during eager execution so an error is raised.
  print(f'{type(e).__name__}: {e}')


@tf.function
def unused_return_graph(x):
  tf.gather(x, [1])  # unused
  return x


# Only needed operations are run during graph execution. The error is not raised.
print(unused_return_graph(tf.constant([0.0])))
x = tf.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=tf.dtypes.int32)


def power(x, y):
  result = tf.eye(10, dtype=tf.dtypes.int32)
  for _ in range(y):
    result = tf.matmul(x, result)
  return result


print("Eager execution:", timeit.timeit(lambda: power(x, 20), number=5) > 0)
power_as_graph = tf.function(power)
print("Graph execution:", timeit.timeit(lambda: power_as_graph(x, 20), number=5) > 0)
print(bool(tf.reduce_all(power(x, 20) == power_as_graph(x, 20))))


@tf.function
def a_function_with_python_side_effect(x):
  print("Tracing!")  # An eager-only side effect.
  return x * x + tf.constant(2)


# This is traced the first time.
print(a_function_with_python_side_effect(tf.constant(2)))
# The second time through, you won't see the side effect.
print(a_function_with_python_side_effect(tf.constant(3)))
# This retraces each time the Python argument changes,
# as a Python argument could be an epoch count or other
# hyperparameter.
print(a_function_with_python_side_effect(2))
print(a_function_with_python_side_effect(3))
print("intro to graphs done")
