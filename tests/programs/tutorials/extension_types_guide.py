# TF guide "Extension types" (tf.experimental.ExtensionType): defining types, validation,
# immutability, nested and Mapping fields, Spec classes, tf.function, control flow, and
# dispatch for APIs and elementwise APIs; plus the guide's error cases.
# Adapted: left out the print of a concrete function's structured_input_signature (ndflow
# lists its flat TensorSpecs); no SavedModel, Keras or tf.data sections yet.

from typing import Mapping, Tuple, Optional, Union, List
import numpy as np
import ndflow as tf

class UserRecord(tf.experimental.ExtensionType):
  """Fields are type-checked: ints, strings and a nickname that may be None."""
  name: tf.Tensor
  age: tf.Tensor
  nickname: Optional[str] = None

u = UserRecord(name="Alice", age=33)
print(u)
print(u.name.numpy(), u.nickname)

class MaskedTensor(tf.experimental.ExtensionType):
  values: tf.Tensor
  mask: tf.Tensor

  def __validate__(self):
    self.values.shape.assert_is_compatible_with(self.mask.shape)
    assert self.mask.dtype.is_bool, 'mask.dtype must be tf.bool'

  def with_default(self, default):
    return tf.where(self.mask, self.values, default)

  def __repr__(self):
    return masked_tensor_str(self.values, self.mask)

  def __getitem__(self, key):
    return MaskedTensor(self.values[key], self.mask[key])

def masked_tensor_str(values, mask):
  if isinstance(values, tf.Tensor):
    if hasattr(values, 'numpy') and hasattr(mask, 'numpy'):
      return f'<MaskedTensor {masked_tensor_str(values.numpy(), mask.numpy())}>'
    else:
      return f'MaskedTensor(values={values}, mask={mask})'
  if len(values.shape) == 1:
    items = [repr(v) if m else '_' for (v, m) in zip(values, mask)]
  else:
    items = [masked_tensor_str(v, m) for (v, m) in zip(values, mask)]
  return '[%s]' % ', '.join(items)

mt = MaskedTensor(values=[[1, 2, 3], [4, 5, 6]], mask=[[True, True, False], [True, False, True]])
print(mt)
print(mt.values.dtype, mt.mask.shape)
print(mt.with_default(0))
print(mt[0])
try:
  MaskedTensor([1, 2, 3], [0, 1, 0])
except AssertionError as e:
  print(f"Got expected AssertionError: {e}")
try:
  MaskedTensor([1, 2, 3], [True, False])
except ValueError as e:
  print(f"Got expected ValueError: {e}")
try:
  mt.mask = [True, True, True]
except AttributeError as e:
  print(f"Got expected AttributeError: {e}")
try:
  mt.mask[0] = False
except TypeError as e:
  print(f"Got expected TypeError: {type(e).__name__}")

class Node(tf.experimental.ExtensionType):
  label: str
  neighbors: Tuple['Node', ...] = ()

n = Node('root', [Node('child1'), Node('child2')])
print(n.neighbors[1].label, type(n.neighbors).__name__)

class ImmutableMappingDemo(tf.experimental.ExtensionType):
  features: Mapping[str, tf.Tensor]
d = ImmutableMappingDemo({"a": [1, 2], "b": 3.0})
print(sorted(d.features.keys()), d.features["a"].dtype, d.features["b"].dtype)
try:
  UserRecord(name=3, age="x")
except (TypeError, ValueError) as e:
  print(type(e).__name__)

class Pair(tf.experimental.ExtensionType):
  x: tf.Tensor
  y: tf.Tensor
p1, p2 = Pair(1, 2), Pair(1, 2)
print(p1 == p2, p1 != Pair(1, 3))
print(Pair(x=[1, 2], y=[3, 4]) == Pair([1, 2], [3, 5]))

print(mt._type_spec if False else "")
spec = tf.type_spec_from_value(Pair([1.0, 2.0], 3))
print(spec)
print(type(spec).__name__, type(spec).__qualname__)
print(tf.nest.flatten(Pair([1, 2], 3), expand_composites=True))
print(Pair.Spec(x=tf.TensorSpec([None], tf.float32), y=tf.TensorSpec([], tf.int32)))

@tf.function
def add_pair(p):
  print("tracing", p.x.shape)
  return Pair(p.x + p.y, p.y)
r = add_pair(Pair([1.0, 2.0], 3.0))
print(r)
add_pair(Pair([4.0, 5.0], 1.0))
add_pair(Pair([4.0, 5.0, 6.0], 1.0))

@tf.function(input_signature=[MaskedTensor.Spec(values=tf.TensorSpec([None], tf.int32), mask=tf.TensorSpec([None], tf.bool))])
def masked_sum(m):
  return tf.reduce_sum(tf.where(m.mask, m.values, 0))
print(masked_sum(MaskedTensor([1, 2, 3], [True, False, True])))

@tf.experimental.dispatch_for_api(tf.math.add)
def masked_add(x: MaskedTensor, y: MaskedTensor, name=None):
  return MaskedTensor(x.values + y.values, x.mask & y.mask)
print(repr(tf.math.add(mt, mt)))

@tf.experimental.dispatch_for_api(tf.stack)
def masked_stack(values: List[MaskedTensor], axis = 0):
  return MaskedTensor(tf.stack([v.values for v in values], axis),
                      tf.stack([v.mask for v in values], axis))
print(repr(tf.stack([mt, mt])))

@tf.experimental.dispatch_for_unary_elementwise_apis(MaskedTensor)
def masked_tensor_unary_elementwise_api_handler(api_func, x):
  return MaskedTensor(api_func(x.values), x.mask)
@tf.experimental.dispatch_for_binary_elementwise_apis(Union[MaskedTensor, tf.Tensor], Union[MaskedTensor, tf.Tensor])
def masked_tensor_binary_elementwise_api_handler(api_func, x, y):
  if not isinstance(x, MaskedTensor): x = MaskedTensor(x, tf.ones_like(x, tf.bool))
  if not isinstance(y, MaskedTensor): y = MaskedTensor(y, tf.ones_like(y, tf.bool))
  return MaskedTensor(api_func(x.values, y.values), x.mask & y.mask)
mf = MaskedTensor(values=[[1.0, 2.0], [4.0, 9.0]], mask=[[True, False], [True, True]])
print(repr(tf.math.sqrt(mf)))
print(repr(tf.math.abs(mf)))
print(repr(tf.math.multiply(mf, mf)))
print(repr(tf.math.maximum(mf, tf.constant([[3.0, 3.0], [3.0, 3.0]]))))

# -- more of the guide ---------------------------------------------------------------------
class Pastry(tf.experimental.ExtensionType):
  sweetness: tf.Tensor  # 2d embedding that encodes sweetness
  chewiness: tf.Tensor  # 2d embedding that encodes chewiness

  def __init__(self, sweetness, chewiness=None):
    self.sweetness = tf.convert_to_tensor(sweetness, tf.float32)
    self.chewiness = tf.zeros_like(self.sweetness) if chewiness is None else chewiness

p = Pastry([1.0, 2.0])
print(p.chewiness)

class Point(tf.experimental.ExtensionType):
  x: tf.Tensor
  y: tf.Tensor
  label: str = "pt"

  def __add__(self, other):
    return Point(self.x + other.x, self.y + other.y, self.label)

  @property
  def norm(self):
    return tf.sqrt(self.x * self.x + self.y * self.y)

  class Spec:
    @property
    def dtype(self):
      return self.x.dtype

pt = Point(3.0, 4.0)
print(pt.norm, (pt + pt).x, pt.label, pt._type_spec.dtype)
print(Point(1, 2, "a")._type_spec)
try:
  Point(1, 2, label=3)
except TypeError as e:
  print("TypeError:", e)
try:
  Point(1)
except TypeError as e:
  print("TypeError:", type(e).__name__)

class Kw(tf.experimental.ExtensionType):
  a: int = 1
  b: tf.Tensor
print(Kw(b=3))
try:
  Kw(2, 3)
except TypeError as e:
  print("TypeError positional")

# control flow
x = Point([1.0, 2.0], [3.0, 4.0])
@tf.function
def f(c, pt):
  return tf.cond(c, lambda: pt + pt, lambda: pt)
print(f(tf.constant(True), x).y)
print(f(tf.constant(False), x).y)

@tf.function
def loop(pt):
  i = tf.constant(0)
  while i < 3:
    pt = pt + Point(1.0, 1.0, pt.label)
    i += 1
  return pt
print(loop(Point(0.0, 0.0)).x)

r = tf.while_loop(lambda i, p: i < 2, lambda i, p: (i + 1, p + p), [0, Point(1.0, 2.0)])
print(r[1].x)

# static fields retrace
@tf.function
def g(pt):
  print("trace", pt.label)
  return pt.x
g(Point(1.0, 2.0, "a")); g(Point(3.0, 4.0, "a")); g(Point(1.0, 2.0, "b"))
print(g.experimental_get_tracing_count())

# nested and ragged and mapping
class Graph(tf.experimental.ExtensionType):
  edges: tf.RaggedTensor
  labels: Mapping[str, tf.Tensor]
  center: Point
gr = Graph(tf.ragged.constant([[1, 2], [3]]), {"b": [1.0], "a": [2, 3]}, Point(0.0, 1.0))
print(tf.nest.flatten(gr, expand_composites=True))
@tf.function
def h(gr):
  return Graph(gr.edges * 2, {k: v + v for k, v in gr.labels.items()}, gr.center + gr.center)
out = h(gr)
print(out.edges, out.labels["a"], out.center.y)
print(gr == gr, gr == Graph(tf.ragged.constant([[1, 2], [3]]), {"b": [1.0], "a": [2, 3]}, Point(0.0, 2.0)))
print(tf.type_spec_from_value(gr))
spec = tf.type_spec_from_value(pt)
print(spec.is_compatible_with(Point(1.0, 2.0)), spec.is_compatible_with(Point(1, 2)), spec == Point(5.0, 6.0)._type_spec)

# input_signature with spec
@tf.function(input_signature=[Point.Spec(x=tf.TensorSpec(None, tf.float32), y=tf.TensorSpec(None, tf.float32), label="pt")])
def norm(pt):
  return pt.norm
print(norm(Point([3.0], [4.0])))
try:
  norm(Point([3], [4]))
except (TypeError, ValueError) as e:
  print(type(e).__name__)

# gradient through extension type
v = tf.Variable(2.0)
with tf.GradientTape() as tape:
  q = Point(v * 3.0, v)
  loss = q.norm
print(tape.gradient(loss, v))

try:
  class Bad(tf.experimental.ExtensionType):
    x: list
except TypeError as e:
  print("TypeError:", e)
try:
  class Bad2(tf.experimental.ExtensionType):
    x: int
    y = 3
except ValueError as e:
  print("ValueError:", e)
try:
  class Bad3(tf.experimental.ExtensionType):
    _type_spec: int
except ValueError as e:
  print("ValueError:", e)
print("extension types guide done")
