# TF guide "NumPy API on TensorFlow" (tf_numpy.ipynb) as the guide writes it, after its
# `tnp.experimental_enable_numpy_behavior()` cell. Seeded with tnp.random.seed, so the random
# ND arrays are TF's. Left out: the matplotlib histogram (np.histogram stands in), the
# timings' numbers (printed as done) and the benchmark plots; tf.vectorized_map/map_fn run
# on a batch of 4.
import timeit

import numpy as np
import ndflow as tf
import ndflow.experimental.numpy as tnp

tnp.experimental_enable_numpy_behavior()
tnp.random.seed(0)
print("Using TensorFlow version %s" % tf.__version__)

# Create an ND array and check out different attributes.
ones = tnp.ones([5, 3], dtype=tnp.float32)
print("Created ND array with shape = %s, rank = %s, "
      "dtype = %s on device = %s\n" % (
          ones.shape, ones.ndim, ones.dtype, ones.data.device))
print("The ND array wraps a tf.Tensor: %s\n" % ones.data)
print("ndarray.T has shape %s" % str(ones.T.shape))
print("narray.reshape(-1) has shape %s" % ones.reshape(-1).shape)

print("Type promotion for operations")
values = [tnp.asarray(1, dtype=d) for d in
          (tnp.int32, tnp.int64, tnp.float32, tnp.float64)]
for i, v1 in enumerate(values):
  for v2 in values[i+1:]:
    print("%s + %s => %s" % (v1.dtype, v2.dtype, (v1 + v2).dtype))
print("Type inference during array creation")
print("tnp.asarray(1).dtype == tnp.%s" % tnp.asarray(1).dtype)
print("tnp.asarray(1.).dtype == tnp.%s\n" % tnp.asarray(1.).dtype)

tnp.experimental_enable_numpy_behavior(prefer_float32=True)
print("When prefer_float32 is True:")
print("tnp.asarray(1.).dtype == tnp.%s" % tnp.asarray(1.).dtype)
print("tnp.add(1., 2.).dtype == tnp.%s" % tnp.add(1., 2.).dtype)
tnp.experimental_enable_numpy_behavior(prefer_float32=False)
print("When prefer_float32 is False:")
print("tnp.asarray(1.).dtype == tnp.%s" % tnp.asarray(1.).dtype)
print("tnp.add(1., 2.).dtype == tnp.%s" % tnp.add(1., 2.).dtype)

x = tnp.ones([2, 3])
y = tnp.ones([3])
z = tnp.ones([1, 2, 1])
print("Broadcasting shapes %s, %s and %s gives shape %s" % (
    x.shape, y.shape, z.shape, (x + y + z).shape))

x = tnp.arange(24).reshape(2, 3, 4)
print("Basic indexing")
print(x[1, tnp.newaxis, 1:3, ...], "\n")
print("Boolean indexing")
print(x[:, (True, False, True)], "\n")
print("Advanced indexing")
print(x[1, (0, 0, 1), tnp.asarray([0, 1, 1])])

# Mutation is currently not supported
try:
  tnp.arange(6)[1] = -1
except TypeError:
  print("Currently, TensorFlow NumPy does not support mutation.")


class Model(object):
  """Model with a dense and a linear layer."""

  def __init__(self):
    self.weights = None

  def predict(self, inputs):
    if self.weights is None:
      size = inputs.shape[1]
      # Note that type `tnp.float32` is used for performance.
      stddev = tnp.sqrt(size).astype(tnp.float32)
      w1 = tnp.random.randn(size, 64).astype(tnp.float32) / stddev
      bias = tnp.random.randn(64).astype(tnp.float32)
      w2 = tnp.random.randn(64, 2).astype(tnp.float32) / 8
      self.weights = (w1, bias, w2)
    else:
      w1, bias, w2 = self.weights
    y = tnp.matmul(inputs, w1) + bias
    y = tnp.maximum(y, 0)  # Relu
    return tnp.matmul(y, w2)  # Linear projection


model = Model()
print(model.predict(tnp.ones([2, 32], dtype=tnp.float32)))

np_sum = np.sum(tnp.ones([2, 3]))
print("sum = %s. Class: %s" % (float(np_sum), np_sum.__class__))
tnp_sum = tnp.sum(np.ones([2, 3]))
print("sum = %s. Class: %s" % (float(tnp_sum), tnp_sum.__class__.__name__))
labels = 15 + 2 * tnp.random.randn(1000)
counts, _ = np.histogram(labels)
print("histogram of", counts.sum(), "labels")

x = tnp.ones([2]) + np.ones([2])
print("x = %s\nclass = %s" % (x, x.__class__.__name__))

x = tf.constant([1, 2])
tnp_x = tnp.asarray(x)
print(tnp_x)
print(tnp_x.data)
print(tf.convert_to_tensor(tnp_x))
print(x.numpy(), x.numpy().__class__)

tf_sum = tf.reduce_sum(tnp.ones([2, 3], tnp.float32))
print("Output = %s" % tf_sum)
tnp_sum = tnp.sum(tf.ones([2, 3]))
print("Output = %s" % tnp_sum)
x = tnp.ones([2, 2]) + tf.ones([2, 1])
print("x = %s\nClass = %s" % (x, x.__class__.__name__))


def create_batch(batch_size=32):
  """Creates a batch of input and labels."""
  return (tnp.random.randn(batch_size, 32).astype(tnp.float32),
          tnp.random.randn(batch_size, 2).astype(tnp.float32))


def compute_gradients(model, inputs, labels):
  """Computes gradients of squared loss between model prediction and labels."""
  with tf.GradientTape() as tape:
    assert model.weights is not None
    tape.watch(model.weights)
    prediction = model.predict(inputs)
    loss = tnp.sum(tnp.square(prediction - labels))
  return tape.gradient(loss, model.weights)


inputs, labels = create_batch()
gradients = compute_gradients(model, inputs, labels)
print("Parameter shapes:", [w.shape for w in model.weights])
print("Gradient shapes:", [g.shape for g in gradients])
assert isinstance(gradients[0], tnp.ndarray)
print("gradient sums: %.4f %.4f %.4f" % tuple(float(tnp.sum(g)) for g in gradients))


def prediction_batch_jacobian(inputs):
  with tf.GradientTape() as tape:
    tape.watch(inputs)
    prediction = model.predict(inputs)
  return prediction, tape.batch_jacobian(prediction, inputs)


inp_batch = tnp.ones([16, 32], tnp.float32)
output, batch_jacobian = prediction_batch_jacobian(inp_batch)
print("Output shape: %s, input shape: %s" % (output.shape, inp_batch.shape))
print("Batch jacobian shape:", batch_jacobian.shape)

inputs, labels = create_batch(512)
print("Eager performance")
compute_gradients(model, inputs, labels)
timeit.timeit(lambda: compute_gradients(model, inputs, labels), number=2)
print("\ntf.function compiled performance")
compiled_compute_gradients = tf.function(compute_gradients)
compiled = compiled_compute_gradients(model, inputs, labels)  # warmup
eager = compute_gradients(model, inputs, labels)
print("compiled == eager:", all(bool(tnp.allclose(a, b, rtol=1e-4, atol=1e-4))
                                for a, b in zip(compiled, eager)))


@tf.function
def vectorized_per_example_gradients(inputs, labels):
  def single_example_gradient(arg):
    inp, label = arg
    return compute_gradients(model,
                             tnp.expand_dims(inp, 0),
                             tnp.expand_dims(label, 0))
  return tf.vectorized_map(single_example_gradient, (inputs, labels))


batch_size = 4
inputs, labels = create_batch(batch_size)
per_example_gradients = vectorized_per_example_gradients(inputs, labels)
for w, p in zip(model.weights, per_example_gradients):
  print("Weight shape: %s, batch size: %s, per example gradient shape: %s " % (
      w.shape, batch_size, p.shape))


@tf.function
def unvectorized_per_example_gradients(inputs, labels):
  def single_example_gradient(arg):
    inp, label = arg
    output = compute_gradients(model,
                               tnp.expand_dims(inp, 0),
                               tnp.expand_dims(label, 0))
    return output

  return tf.map_fn(single_example_gradient, (inputs, labels),
                   fn_output_signature=(tf.float32, tf.float32, tf.float32))


unvectorized = unvectorized_per_example_gradients(inputs, labels)
print("map_fn == vectorized_map:", all(bool(tnp.allclose(a, b, rtol=1e-4, atol=1e-4))
                                       for a, b in zip(unvectorized, per_example_gradients)))

try:
  device = tf.config.list_logical_devices(device_type="GPU")[0]
except IndexError:
  device = "/device:CPU:0"
with tf.device(device):
  prediction = model.predict(create_batch(5)[0])
print("prediction shape %s" % prediction.shape)
with tf.device("/device:CPU:0"):
  prediction_cpu = tnp.copy(prediction)
print(prediction_cpu.data.device)
print("tf numpy guide done")
