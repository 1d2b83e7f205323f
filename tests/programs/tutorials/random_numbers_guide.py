# TF guide "Random number generation": its output equals TF 2.21's (every printed tensor,
# state and error text; non-deterministic draws are printed by shape and dtype only).
# Adapted: the SavedModel section runs without the strategy. Left out: the distribution-strategy
# sections (ndflow's Generator created in a MirroredStrategy scope gives each replica the same
# stream, where TF hashes the key with the replica id) and the demo that passing different
# tf.Variables retraces a tf.function (ndflow traces once per variable, TF once per spec).
import os
import ndflow as tf

# Creates some virtual devices (cpu:0, cpu:1, etc.) for using distribution strategy
physical_devices = tf.config.list_physical_devices("CPU")
tf.config.experimental.set_virtual_device_configuration(
    physical_devices[0], [
        tf.config.experimental.VirtualDeviceConfiguration(),
        tf.config.experimental.VirtualDeviceConfiguration(),
        tf.config.experimental.VirtualDeviceConfiguration()
    ])

g1 = tf.random.Generator.from_seed(1)
print(g1.normal(shape=[2, 3]))
g2 = tf.random.get_global_generator()
print(g2.normal(shape=[2, 3]).shape)

g1 = tf.random.Generator.from_seed(1, alg='philox')
print(g1.normal(shape=[2, 3]))
g1 = tf.random.Generator.from_seed(1, alg='threefry')
try:
    print(g1.normal(shape=[2, 3]))
except tf.errors.UnimplementedError as e:   # TF's CPU kernels: Philox only
    print("UnimplementedError", "Non-XLA devices don't support the ThreeFry algorithm" in str(e))

g = tf.random.Generator.from_non_deterministic_state()
print(g.normal(shape=[2, 3]).dtype)

g = tf.random.Generator.from_seed(1)
print(g.state)
print(g.uniform([]))
print(g.state)
print(g.uniform([100]).shape)
print(g.state)
g.reset_from_seed(1)
print(g.uniform([]))
g.reset(tf.constant([7, 0, 0], dtype=tf.int64))
print(g.state)
print(g.uniform_full_int([3], dtype=tf.int64))
print(g.uniform([2, 2], minval=3, maxval=7, dtype=tf.int32))
print(g.truncated_normal([4], mean=1.0, stddev=0.5))
print(g.binomial([4], counts=10.0, probs=0.5))
print(g.state)

g = tf.random.Generator.from_seed(1)
new_gs = g.split(3)
for new_g in new_gs:
    print(new_g.normal([]))
print(g.normal([]))

g = tf.random.Generator.from_seed(1)
@tf.function
def foo():
    return g.normal([])
print(foo())
print(foo())

g = None
@tf.function
def foo():
    global g
    if g is None:
        g = tf.random.Generator.from_seed(1)
    return g.normal([])
print(foo())
print(foo())

num_traces = 0
@tf.function
def foo(g):
    global num_traces
    num_traces += 1
    return g.normal([])
foo(tf.random.Generator.from_seed(1))
foo(tf.random.Generator.from_seed(2))
print(num_traces)

filename = "./checkpoint"
g = tf.random.Generator.from_seed(1)
cp = tf.train.Checkpoint(generator=g)
print(g.normal([]))
cp.write(filename)
print("RNG stream from saving point:")
print(g.normal([]))
print(g.normal([]))
cp.restore(filename)
print("RNG stream from restoring point:")
print(g.normal([]))
print(g.normal([]))

filename = "./saved_model"

class MyModule(tf.Module):
    def __init__(self):
        super().__init__()
        self.g = tf.random.Generator.from_seed(0)

    @tf.function
    def __call__(self):
        return self.g.normal([])

    @tf.function
    def state(self):
        return self.g.state

m = MyModule()
print(m())
print("state:", m.state())
tf.saved_model.save(m, filename)
print("RNG stream from saving point:")
print(m())
print("state:", m.state())
print(m())
print("state:", m.state())
imported = tf.saved_model.load(filename)
print("RNG stream from loading point:")
print("state:", imported.state())
print(imported())
print("state:", imported.state())
print(imported())
print("state:", imported.state())

print(tf.random.stateless_normal(shape=[2, 3], seed=[1, 2]))
seeds = tf.random.experimental.stateless_split([1, 2], num=3)
print(seeds)
print(tf.random.experimental.stateless_fold_in([1, 2], 7))
print(tf.random.stateless_uniform([3], seed=(3, 4), minval=None, maxval=None, dtype=tf.int32))
print(tf.random.stateless_categorical(tf.math.log([[0.5, 0.5]]), 5, seed=[7, 17]))
try:
    tf.random.Generator.from_seed(1, alg="no_such_alg")
except ValueError as e:
    print("ValueError:", e)
print("random numbers guide done")
