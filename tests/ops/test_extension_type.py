"""tf.experimental.ExtensionType and API dispatch. Expected texts, error messages and
retracing counts are TensorFlow 2.21's, observed by running the same code under TF 2.21
(the extension-types guide, tests/programs/tutorials/extension_types_guide.py).

No `from __future__ import annotations` here: field annotations must be real types (as in
TensorFlow, a string annotation is only resolved once the class it names exists)."""

from collections.abc import Mapping

import numpy as np
import pytest

import ndflow as tf


class MaskedTensor(tf.experimental.ExtensionType):
    values: tf.Tensor
    mask: tf.Tensor

    def __validate__(self):
        self.values.shape.assert_is_compatible_with(self.mask.shape)
        assert self.mask.dtype.is_bool, "mask.dtype must be tf.bool"


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


class Node(tf.experimental.ExtensionType):
    label: str
    neighbors: tuple["Node", ...] = ()


def test_fields_are_converted_checked_and_shown_as_tf():
    mt = MaskedTensor(values=[[1, 2, 3], [4, 5, 6]], mask=[[True, True, False],
                                                          [True, False, True]])
    assert mt.values.dtype is tf.int32 and mt.mask.shape == [2, 3]
    assert repr(Point(1.0, 2.0)) == (
        "Point(x=<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, "
        "y=<tf.Tensor: shape=(), dtype=float32, numpy=2.0>, label='pt')")
    with pytest.raises(AssertionError, match="mask.dtype must be tf.bool"):
        MaskedTensor([1, 2, 3], [0, 1, 0])
    with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
        MaskedTensor([1, 2, 3], [True, False])
    with pytest.raises(TypeError, match="label: expected 'str', got 'int'"):
        Point(1, 2, label=3)
    n = Node("root", [Node("child1"), Node("child2")])   # a forward reference, a list
    assert isinstance(n.neighbors, tuple) and n.neighbors[1].label == "child2"


def test_values_are_immutable_outside_the_constructor():
    class Pastry(tf.experimental.ExtensionType):
        sweetness: tf.Tensor
        chewiness: tf.Tensor

        def __init__(self, sweetness, chewiness=None):
            self.sweetness = tf.convert_to_tensor(sweetness, tf.float32)
            self.chewiness = tf.zeros_like(self.sweetness) if chewiness is None else chewiness

    p = Pastry([1.0, 2.0])
    np.testing.assert_array_equal(p.chewiness.numpy(), [0.0, 0.0])
    with pytest.raises(AttributeError, match="Cannot mutate attribute `sweetness` outside the "
                                             "custom constructor of ExtensionType."):
        p.sweetness = [3.0]

    class Tags(tf.experimental.ExtensionType):
        features: Mapping[str, tf.Tensor]
    t = Tags({"b": 3.0, "a": [1, 2]})
    assert list(t.features) == ["b", "a"] and t.features["a"].dtype is tf.int32
    with pytest.raises(TypeError):
        t.features["c"] = 1


def test_definition_errors_are_tfs():
    with pytest.raises(TypeError, match="In field 'x': Unsupported type annotation 'list'"):
        class Bad(tf.experimental.ExtensionType):
            x: list
    with pytest.raises(ValueError, match="Field y is missing a type annotation"):
        class Bad2(tf.experimental.ExtensionType):
            x: int
            y = 3
    with pytest.raises(ValueError, match="Field '_type_spec' is reserved"):
        class Bad3(tf.experimental.ExtensionType):
            _type_spec: int

    class Kw(tf.experimental.ExtensionType):
        a: int = 1
        b: tf.Tensor   # after a default: keyword-only
    assert int(Kw(b=3).b) == 3
    with pytest.raises(TypeError):
        Kw(2, 3)


def test_equality_is_a_bool_tensor_over_every_component():
    a, b = Point([1.0, 2.0], 3.0), Point([1.0, 2.0], 3.0)
    assert bool(a == b) and not bool(a != b)
    assert not bool(a == Point([1.0, 5.0], 3.0))
    assert (Point([1.0], 3.0) == Point([1.0, 2.0], 3.0)) is False   # specs differ
    assert (a == 3) is False


def test_spec_from_value_and_user_spec_members():
    spec = tf.type_spec_from_value(Point(1, 2, "a"))
    assert repr(spec) == ("Point.Spec(x=TensorSpec(shape=(), dtype=tf.int32, name=None), "
                          "y=TensorSpec(shape=(), dtype=tf.int32, name=None), label='a')")
    assert type(spec).__qualname__ == "Point.Spec" and spec.dtype is tf.int32
    assert spec.is_compatible_with(Point(5, 6, "a"))
    assert not spec.is_compatible_with(Point(5.0, 6.0, "a"))
    assert not spec.is_compatible_with(Point(5, 6, "b"))
    built = Point.Spec(x=tf.TensorSpec([None], tf.float32), y=tf.TensorSpec([], tf.int32),
                       label="pt")
    assert built.x.shape.as_list() == [None]
    with pytest.raises(TypeError, match="x: expected a TensorSpec"):
        Point.Spec(x=1.0, y=tf.TensorSpec([]), label="pt")


def test_nest_flattens_components_in_field_order():
    class Graph(tf.experimental.ExtensionType):
        edges: tf.RaggedTensor
        labels: Mapping[str, tf.Tensor]
        center: Point
    g = Graph(tf.ragged.constant([[1, 2], [3]]), {"b": [1.0], "a": [2, 3]}, Point(0.0, 1.0))
    flat = tf.nest.flatten(g, expand_composites=True)
    # edges (values, row splits), labels by sorted key, then the nested Point's tensors
    expected = [[1, 2, 3], [0, 2, 3], [2, 3], [1.0], 0.0, 1.0]
    assert len(flat) == len(expected)
    for t, e in zip(flat, expected):
        np.testing.assert_array_equal(t.numpy(), e)
    assert tf.nest.flatten(g) == [g]
    rebuilt = tf.nest.pack_sequence_as(g, [t * 2 for t in flat], expand_composites=True)
    assert isinstance(rebuilt, Graph) and float(rebuilt.center.y) == 2.0


def test_tf_function_traces_on_specs_and_static_fields():
    traces = []

    @tf.function
    def f(pt):
        traces.append(pt.label)
        return Point(pt.x * 2.0, pt.y, pt.label)

    out = f(Point([1.0, 2.0], 3.0, "a"))
    assert isinstance(out, Point) and out.label == "a"
    np.testing.assert_array_equal(out.x.numpy(), [2.0, 4.0])
    f(Point([5.0, 6.0], 1.0, "a"))      # same spec: no new trace
    f(Point([5.0, 6.0], 1.0, "b"))      # a static field changed: traced again (TF: 2)
    assert traces == ["a", "b"] and f.experimental_get_tracing_count() == 2

    sig = Point.Spec(x=tf.TensorSpec(None, tf.float32), y=tf.TensorSpec(None, tf.float32),
                     label="pt")
    norm = tf.function(lambda pt: pt.norm, input_signature=[sig])
    np.testing.assert_allclose(norm(Point([3.0], [4.0])).numpy(), [5.0])
    with pytest.raises(TypeError):
        norm(Point([3], [4]))


def test_control_flow_and_gradients_through_fields():
    @tf.function
    def pick(c, pt):
        return tf.cond(c, lambda: pt + pt, lambda: pt)

    x = Point([1.0, 2.0], [3.0, 4.0])
    np.testing.assert_array_equal(pick(tf.constant(True), x).y.numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(pick(tf.constant(False), x).y.numpy(), [3.0, 4.0])
    _, p = tf.while_loop(lambda i, p: i < 2, lambda i, p: (i + 1, p + p),
                         [0, Point(1.0, 2.0)])
    assert float(p.x) == 4.0

    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        loss = Point(v * 3.0, v).norm          # sqrt(10) v
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), np.sqrt(10.0), rtol=1e-6)


def test_dispatch_for_api_and_elementwise_apis():
    class MT(tf.experimental.ExtensionType):
        values: tf.Tensor
        mask: tf.Tensor

    @tf.experimental.dispatch_for_api(tf.stack)
    def masked_stack(values: list[MT], axis=0):
        return MT(tf.stack([v.values for v in values], axis),
                  tf.stack([v.mask for v in values], axis))

    @tf.experimental.dispatch_for_unary_elementwise_apis(MT)
    def unary(api_func, x):
        return MT(api_func(x.values), x.mask)

    @tf.experimental.dispatch_for_binary_elementwise_apis(MT | tf.Tensor, MT | tf.Tensor)
    def binary(api_func, x, y):
        x = x if isinstance(x, MT) else MT(x, tf.ones_like(x, tf.bool))
        y = y if isinstance(y, MT) else MT(y, tf.ones_like(y, tf.bool))
        return MT(api_func(x.values, y.values), x.mask & y.mask)

    try:
        m = MT([[1.0, 4.0], [9.0, 16.0]], [[True, False], [True, True]])
        s = tf.stack([m, m])
        assert isinstance(s, MT) and s.values.shape == [2, 2, 2]
        np.testing.assert_array_equal(tf.math.sqrt(m).values.numpy(), [[1, 2], [3, 4]])
        assert tf.sqrt is tf.math.sqrt                    # every path of the API dispatches
        mx = tf.math.maximum(m, tf.constant([[3.0, 3.0], [3.0, 3.0]]))
        np.testing.assert_array_equal(mx.values.numpy(), [[3, 4], [9, 16]])
        np.testing.assert_array_equal(mx.mask.numpy(), [[True, False], [True, True]])
        # plain tensors still take the API's own path
        np.testing.assert_array_equal(tf.stack([[1], [2]]).numpy(), [[1], [2]])
        assert float(tf.math.sqrt(4.0)) == 2.0
        with pytest.raises(ValueError, match="does not match API's signature"):
            tf.experimental.dispatch_for_api(tf.math.add)(lambda a, b: a)
    finally:
        for target in (masked_stack, unary, binary):
            tf.experimental.unregister_dispatch_for(target)
    with pytest.raises(ValueError, match="was not registered"):
        tf.experimental.unregister_dispatch_for(unary)


def test_equal_with_incompatible_shapes_gives_a_scalar():
    from ndflow.ops import comparison
    from ndflow.ops.apply import apply_op

    def eq(op, a, b):
        return apply_op(op, [a, b], attrs={"incompatible_shape_error": False}).outputs[0]
    # TF 2.21: Equal([1, 2], [1, 2, 3]) -> False, NotEqual -> True, graph shape ()
    assert eq(comparison.Equal, tf.constant([1, 2]), tf.constant([1, 2, 3])).numpy() == False  # noqa: E712
    assert eq(comparison.NotEqual, tf.constant(["a", "b"]), tf.constant(["a", "b", "c"])).numpy()
    np.testing.assert_array_equal(eq(comparison.Equal, tf.constant([1, 2]),
                                     tf.constant([1, 3])).numpy(), [True, False])

    @tf.function
    def f(a, b):
        r = eq(comparison.Equal, a, b)
        assert r.shape == []
        return r
    assert not bool(f(tf.constant([1, 2]), tf.constant([1, 2, 3])))


def test_optional_union_fields():
    class Rec(tf.experimental.ExtensionType):
        name: tf.Tensor
        nickname: str | None = None
        size: int | tf.Tensor = 0
    r = Rec("Alice")
    assert r.nickname is None and r.size == 0 and r.name.dtype is tf.string
    assert isinstance(Rec("B", size=[1, 2]).size, tf.Tensor)
    with pytest.raises(TypeError):
        Rec("A", nickname=3)
