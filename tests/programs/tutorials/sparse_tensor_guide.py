# TF guide "Working with sparse tensors" (site/en/guide/sparse_tensor.ipynb), run as written;
# the notebook's displayed cell results are printed. After it, the APIs its text names as
# taking sparse tensors (tf.sparse.reorder, the unary math ops, tf.cast, tf.identity,
# tf.print, tf.io.serialize_sparse/serialize_many_sparse/deserialize_many_sparse, tf.cond,
# tf.while_loop, dense_to_sparse_batch, VarLenFeature/SparseFeature). The whole output equals
# TF 2.21's but for the Keras progress bar's timing and two deprecation notices TF logs
# (dense_to_sparse_batch, and sparse_merge inside its parsing), which ndflow does not; unary
# results are rounded to 5 digits (erf, tanh and the Bessel functions differ from Eigen's in
# the last float32 digit).
import sys
import numpy as np
import ndflow as tf
st1 = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]],
                      values=[10, 20],
                      dense_shape=[3, 10])
print(st1)
def pprint_sparse_tensor(st):
  s = "<SparseTensor shape=%s \n values={" % (st.dense_shape.numpy().tolist(),)
  for (index, value) in zip(st.indices, st.values):
    s += f"\n  %s: %s" % (index.numpy().tolist(), value.numpy().tolist())
  return s + "}>"
print(pprint_sparse_tensor(st1))
st2 = tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])
print(pprint_sparse_tensor(st2))
st3 = tf.sparse.to_dense(st2)
print(st3)
st_a = tf.sparse.SparseTensor(indices=[[0, 2], [3, 4]],
                       values=[31, 2],
                       dense_shape=[4, 10])

st_b = tf.sparse.SparseTensor(indices=[[0, 2], [3, 0]],
                       values=[56, 38],
                       dense_shape=[4, 10])

st_sum = tf.sparse.add(st_a, st_b)

print(pprint_sparse_tensor(st_sum))
st_c = tf.sparse.SparseTensor(indices=([0, 1], [1, 0], [1, 1]),
                       values=[13, 15, 17],
                       dense_shape=(2,2))

mb = tf.constant([[4], [6]])
product = tf.sparse.sparse_dense_matmul(st_c, mb)

print(product)
sparse_pattern_A = tf.sparse.SparseTensor(indices = [[2,4], [3,3], [3,4], [4,3], [4,4], [5,4]],
                         values = [1,1,1,1,1,1],
                         dense_shape = [8,5])
sparse_pattern_B = tf.sparse.SparseTensor(indices = [[0,2], [1,1], [1,3], [2,0], [2,4], [2,5], [3,5],
                                              [4,5], [5,0], [5,4], [5,5], [6,1], [6,3], [7,2]],
                         values = [1,1,1,1,1,1,1,1,1,1,1,1,1,1],
                         dense_shape = [8,6])
sparse_pattern_C = tf.sparse.SparseTensor(indices = [[3,0], [4,0]],
                         values = [1,1],
                         dense_shape = [8,6])

sparse_patterns_list = [sparse_pattern_A, sparse_pattern_B, sparse_pattern_C]
sparse_pattern = tf.sparse.concat(axis=1, sp_inputs=sparse_patterns_list)
print(tf.sparse.to_dense(sparse_pattern))
sparse_slice_A = tf.sparse.slice(sparse_pattern_A, start = [0,0], size = [8,5])
sparse_slice_B = tf.sparse.slice(sparse_pattern_B, start = [0,5], size = [8,6])
sparse_slice_C = tf.sparse.slice(sparse_pattern_C, start = [0,10], size = [8,6])
print(tf.sparse.to_dense(sparse_slice_A))
print(tf.sparse.to_dense(sparse_slice_B))
print(tf.sparse.to_dense(sparse_slice_C))
st2_plus_5 = tf.sparse.map_values(tf.add, st2, 5)
print(tf.sparse.to_dense(st2_plus_5))
st2_plus_5 = tf.sparse.SparseTensor(
    st2.indices,
    st2.values + 5,
    st2.dense_shape)
print(tf.sparse.to_dense(st2_plus_5))
tf.keras.utils.set_random_seed(0)
x = tf.keras.Input(shape=(4,), sparse=True)
y = tf.keras.layers.Dense(4)(x)
model = tf.keras.Model(x, y)

sparse_data = tf.sparse.SparseTensor(
    indices = [(0,0),(0,1),(0,2),
               (4,3),(5,0),(5,1)],
    values = [1,1,1,1,1,1],
    dense_shape = (6,4)
)

print(model(sparse_data))

print(repr(model.predict(sparse_data)))
dataset = tf.data.Dataset.from_tensor_slices(sparse_data)
for element in dataset:
  print(pprint_sparse_tensor(element))
batched_dataset = dataset.batch(2)
for element in batched_dataset:
  print (pprint_sparse_tensor(element))
unbatched_dataset = batched_dataset.unbatch()
for element in unbatched_dataset:
  print (pprint_sparse_tensor(element))
transform_dataset = dataset.map(lambda x: x*2)
for i in transform_dataset:
  print(pprint_sparse_tensor(i))
@tf.function
def f(x,y):
  return tf.sparse.sparse_dense_matmul(x,y)

a = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]],
                    values=[15, 25],
                    dense_shape=[3, 10])

b = tf.sparse.to_dense(tf.sparse.transpose(a))

c = f(a,b)

print(c)
print(tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3])))
print(tf.math.reduce_max([-5, 0, -3]))
# -- the APIs the guide names
st = tf.sparse.SparseTensor(indices=[[2, 1], [0, 3], [1, 0]], values=[-4.0, 0.25, 9.0], dense_shape=[3, 4])
print(tf.sparse.reorder(st))
st = tf.sparse.reorder(st)
for fn in [tf.math.abs, tf.math.negative, tf.math.sign, tf.math.square, tf.math.sqrt, tf.math.erf, tf.math.tanh, tf.math.bessel_i0e, tf.math.bessel_i1e, tf.identity]:
  try:
    r = fn(st)
    print(type(r).__name__, np.round(r.values.numpy(), 5))
  except Exception as e:
    print(type(e).__name__, e)
try:
  r = tf.cast(st, tf.int32)
  print(type(r).__name__, r)
except Exception as e:
  print(type(e).__name__, e)
try:
  print(tf.math.add(st, st))
except Exception as e:
  print(type(e).__name__, str(e)[:40])
tf.print(st)
tf.print("st:", st, output_stream=sys.stdout)
print(tf.io.serialize_sparse(st))
batch = tf.sparse.SparseTensor(indices=[[0, 0], [0, 2], [1, 1]], values=[1, 2, 3], dense_shape=[2, 3])
ser = tf.io.serialize_many_sparse(batch)
print(ser)
de = tf.io.deserialize_many_sparse(ser, dtype=tf.int32)
print(de)
print(tf.io.deserialize_many_sparse(ser, dtype=tf.int32, rank=2))
@tf.function
def loop(s):
  i = tf.constant(0)
  def body(i, s):
    return i + 1, tf.sparse.map_values(tf.multiply, s, 2)
  return tf.while_loop(lambda i, s: i < 3, body, [i, s])
print(loop(batch))
print(loop.get_concrete_function(batch).structured_outputs)
@tf.function
def cond(flag, s):
  return tf.cond(flag, lambda: tf.sparse.map_values(tf.add, s, 10), lambda: s)
print(cond(tf.constant(True), batch))
print(cond(tf.constant(False), batch))
print(tf.while_loop(lambda i, s: i < 2, lambda i, s: (i + 1, tf.sparse.add(s, s)), [0, batch]))
print(tf.cond(tf.constant(True), lambda: batch, lambda: batch))
ds = tf.data.Dataset.range(4).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
ds = ds.apply(tf.data.experimental.dense_to_sparse_batch(batch_size=2, row_shape=[5]))
for el in ds:
  print(el)
print(ds.element_spec)
ex = tf.train.Example(features=tf.train.Features(feature={
  'vl': tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 1, 4])),
  'ix': tf.train.Feature(int64_list=tf.train.Int64List(value=[0, 5])),
  'val': tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, -2.0])),
  'rk': tf.train.Feature(int64_list=tf.train.Int64List(value=[7, 8])),
})).SerializeToString()
parsed = tf.io.parse_single_example(ex, {
  'vl': tf.io.VarLenFeature(tf.int64),
  'sp': tf.io.SparseFeature(index_key='ix', value_key='val', dtype=tf.float32, size=8),
  'rg': tf.io.RaggedFeature(tf.int64, value_key='rk'),
})
for k in sorted(parsed):
  print(k, parsed[k])
parsed = tf.io.parse_example([ex, ex], {'vl': tf.io.VarLenFeature(tf.int64), 'sp': tf.io.SparseFeature(index_key='ix', value_key='val', dtype=tf.float32, size=8)})
for k in sorted(parsed):
  print(k, parsed[k])

print("sparse tensor guide done")
