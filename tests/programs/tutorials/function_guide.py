# TF guide "Better performance with tf.function": its output equals TF 2.21's.
# Adapted: timings printed as checks only; fewer steps.
import timeit
import ndflow as tf


@tf.function
def add(a, b):
    return a + b


print(add(tf.ones([2, 2]), tf.ones([2, 2])))
v = tf.Variable(1.0)
with tf.GradientTape() as tape:
    result = add(v, 1.0)
print(tape.gradient(result, v))


@tf.function
def dense_layer(x, w, b):
    return add(tf.matmul(x, w), b)


print(dense_layer(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2])))

conv_layer = tf.keras.layers.Conv2D(100, 3)


@tf.function
def conv_fn(image):
    return conv_layer(image)


image = tf.zeros([1, 200, 200, 100])
conv_layer(image)
conv_fn(image)
print("Eager conv faster or slower: measured", timeit.timeit(lambda: conv_layer(image), number=2) > 0)


@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


print(double(tf.constant(1)))
print()
print(double(tf.constant(1.1)))
print()
print(double(tf.constant("a")))
print()
print(double(tf.constant("b")))
print(double.pretty_printed_concrete_signatures())

print("Obtaining concrete trace")
double_strings = double.get_concrete_function(tf.constant("a"))
print("Executing traced function")
print(double_strings(tf.constant("a")))
print(double_strings(a=tf.constant("b")))
print(double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.string)))
print(double_strings)
print(double_strings.structured_input_signature)
print(double_strings.structured_outputs)
try:
    double_strings(tf.constant(1))
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError")
except TypeError as e:
    print("TypeError:", str(e).split("\n")[0][:80])


@tf.function
def pow(a, b):
    return a ** b


square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
print(square)
assert square(tf.constant(10.0)) == 100
try:
    square(tf.constant(10.0), b=3)
except TypeError as e:
    print("TypeError:", str(e).split("\n")[0][:90])

graph = double_strings.graph
for node in graph.as_graph_def().node:
    print(f'{node.input} -> {node.name}')


@tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
def next_collatz(x):
    print("Tracing with", x)
    return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


print(next_collatz(tf.constant([1, 2])))
try:
    next_collatz(tf.constant([[1, 2], [3, 4]]))
except (ValueError, TypeError) as e:
    print("Caught expected exception", type(e).__name__)


@tf.function(reduce_retracing=True)
def g(x):
    print('Tracing with', x)
    return x


print(g(tf.constant([1, 2, 3])))
print(g(tf.constant([1, 2, 3, 4, 5])))


def train_one_step():
    pass


@tf.function
def train(num_steps):
    print("Tracing with num_steps = ", num_steps)
    tf.print("Executing with num_steps = ", num_steps)
    for _ in tf.range(num_steps):
        train_one_step()


print("Retracing occurs for different Python arguments.")
train(num_steps=10)
train(num_steps=20)
print()
print("Traces are reused for Tensor arguments.")
train(num_steps=tf.constant(10))
train(num_steps=tf.constant(20))


def f():
    print('Tracing!')
    tf.print('Executing')


tf.function(f)()
tf.function(f)()


@tf.function
def f(x):
    print("Traced with", x)
    tf.print("Executed with", x)


f(1)
f(1)
f(2)

external_list = []


@tf.function
def side_effect(x):
    print('Python side effect')
    external_list.append(x)


side_effect(1)
side_effect(1)
side_effect(1)
assert len(external_list) == 1


class Model(tf.Module):
    def __init__(self):
        self.v = tf.Variable(0)
        self.counter = 0

    @tf.function
    def __call__(self):
        if self.counter == 0:
            self.counter += 1
            self.v.assign_add(1)
        return self.v


m = Model()
for n in range(3):
    print(m().numpy())


@tf.function
def buggy_consume_next(iterator):
    tf.print("Value:", next(iterator))


iterator = iter([1, 2, 3])
buggy_consume_next(iterator)
buggy_consume_next(iterator)
buggy_consume_next(iterator)


@tf.function
def good_consume_next(iterator):
    tf.print("Value:", next(iterator))


ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
iterator = iter(ds)
good_consume_next(iterator)
good_consume_next(iterator)
good_consume_next(iterator)

x = None


@tf.function
def leaky_function(a):
    global x
    x = a + 1
    return a + 2


correct_a = leaky_function(tf.constant(1))
print(correct_a.numpy())
try:
    x.numpy()
except AttributeError as expected:
    print(expected)


@tf.function
def f(x):
    v = tf.Variable(1.0)
    return v


try:
    f(1.0)
except ValueError as e:
    print("Caught expected exception", str(e).split("\n")[0][:100])


class Count(tf.Module):
    def __init__(self):
        self.count = None

    @tf.function
    def __call__(self):
        if self.count is None:
            self.count = tf.Variable(0)
        return self.count.assign_add(1)


c = Count()
print(c())
print(c())


@tf.function
def f(x):
    if x > 0:
        x = x + 1.
        print("Tracing `then` branch")
    else:
        x = x - 1.
        print("Tracing `else` branch")
    return x


print(f(-1.0).numpy())
print(f(1.0).numpy())
print(f(tf.constant(1.0)).numpy())


@tf.function
def f(x):
    for i in range(x):
        print("Tracing for loop")
    for i in tf.range(x):
        print("Tracing tf.range loop")
    return x


print(f(2))


@tf.function
def f(x):
    ta = tf.TensorArray(dtype=tf.int32, size=0, dynamic_size=True)
    for i in tf.range(len(x)):
        ta = ta.write(i, x[i] + 1)
    return ta.stack()


print(f(tf.constant([1, 2, 3])))
print(tf.autograph.to_code(f.python_function) is not None)
print("function guide done")
