"""tf.keras.random (seeding, SeedGenerator state in and out of tf.function, the draws'
statistics), tf.keras.tree (optree semantics, as Keras 3) and the Keras 3 activations
added to tf.keras.activations (get / serialize by name, use in layers)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import ndflow as tf

R = tf.keras.random
T = tf.keras.tree


def test_int_seeds_repeat_and_seed_generators_advance():
    assert np.array_equal(R.normal((4,), seed=3).numpy(), R.normal((4,), seed=3).numpy())
    assert not np.array_equal(R.normal((4,), seed=3).numpy(), R.normal((4,), seed=4).numpy())
    gen = R.SeedGenerator(42)
    first, second = R.uniform((3,), seed=gen).numpy(), R.uniform((3,), seed=gen).numpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(gen.state.numpy(), [42, 2])
    again = R.SeedGenerator(42)
    np.testing.assert_array_equal(R.uniform((3,), seed=again).numpy(), first)
    assert R.SeedGenerator.from_config(gen.get_config()).get_config() == gen.get_config()
    # unseeded draws come from the global generator: they differ call to call
    assert not np.array_equal(R.normal((4,)).numpy(), R.normal((4,)).numpy())


def test_seed_generators_advance_inside_tf_function():
    gen = R.SeedGenerator(5)

    @tf.function
    def draw():
        return R.normal((3,), seed=gen), R.normal((3,))
    (a, unseeded_a), (b, unseeded_b) = draw(), draw()
    assert not np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(unseeded_a.numpy(), unseeded_b.numpy())
    np.testing.assert_array_equal(gen.state.numpy(), [5, 2])


def test_draws_have_their_distributions():
    n = 20000
    normal = R.normal((n,), mean=1.0, stddev=2.0, seed=1).numpy()
    assert abs(normal.mean() - 1.0) < 0.06 and abs(normal.std() - 2.0) < 0.06
    truncated = R.truncated_normal((n,), stddev=2.0, seed=2).numpy()
    assert np.abs(truncated).max() <= 4.0 and abs(truncated.std() - 2 * 0.8796) < 0.05
    ints = R.randint((n,), 3, 7, seed=3).numpy()
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {3, 4, 5, 6}
    gamma = R.gamma((n,), 3.0, seed=4).numpy()
    assert abs(gamma.mean() - 3.0) < 0.1 and abs(gamma.var() - 3.0) < 0.25
    beta = R.beta((n,), 2.0, 5.0, seed=5).numpy()
    assert abs(beta.mean() - 2 / 7) < 0.01
    binomial = R.binomial((n,), 10, 0.3, seed=6).numpy()
    assert abs(binomial.mean() - 3.0) < 0.06 and abs(binomial.var() - 2.1) < 0.1
    assert binomial.min() >= 0 and binomial.max() <= 10
    cats = R.categorical(np.log([[0.2, 0.8], [0.9, 0.1]]), n, seed=7).numpy()
    assert cats.shape == (2, n) and abs(cats[0].mean() - 0.8) < 0.02 \
        and abs(cats[1].mean() - 0.1) < 0.02
    dropped = R.dropout(np.ones((n,), np.float32), 0.25, seed=8).numpy()
    assert set(np.unique(dropped)) == {0.0, np.float32(1 / 0.75)}
    assert abs((dropped == 0).mean() - 0.25) < 0.01
    shuffled = R.shuffle(np.arange(50), seed=9).numpy()
    assert sorted(shuffled) == list(range(50)) and list(shuffled) != list(range(50))


def test_tree_flatten_pack_and_paths_follow_optree():
    point = collections.namedtuple("Point", "y x")
    structure = {"b": [1, (2, None)], "a": point(3, 4),
                 "c": collections.OrderedDict([("z", 5), ("w", 6)])}
    assert T.flatten(structure) == [3, 4, 1, 2, None, 5, 6]
    assert T.flatten_with_path(structure)[:3] == [(("a", "y"), 3), (("a", "x"), 4),
                                                  (("b", 0), 1)]
    packed = T.pack_sequence_as(structure, list(range(7)))
    assert packed["a"] == point(0, 1) and packed["b"] == [2, (3, 4)]
    assert list(packed["c"]) == ["z", "w"] and list(packed) == ["b", "a", "c"]
    assert T.is_nested([]) and not T.is_nested(None) and not T.is_nested("ab")
    assert T.flatten(None) == [None] and T.flatten([]) == []


def test_tree_maps_traversals_and_checks():
    assert T.map_structure(lambda a, b: a + b, [1, {"k": 2}], [10, {"k": 20}]) == \
        [11, {"k": 22}]
    assert T.map_structure(lambda a: 0, [None, 1], none_is_leaf=False) == [None, 0]
    assert T.map_structure_up_to([0, 0], lambda a, b: (a, b), [1, [2, 3]], [4, [5, 6]]) == \
        [(1, 4), ([2, 3], [5, 6])]
    assert T.lists_to_tuples([1, [2, {"a": [3]}]]) == (1, (2, {"a": (3,)}))
    assert T.map_shape_structure(len, {"a": (None, 3), "b": [(1, 2, 3), (4,)]}) == \
        {"a": 2, "b": [3, 1]}
    assert T.traverse(lambda x: T.MAP_TO_NONE if isinstance(x, tuple) else None,
                      [1, (2, 3)]) == [1, None]
    assert T.traverse(lambda x: x * 2 if isinstance(x, int) else None, [1, (2, 3)],
                      top_down=False) == [2, (4, 6)]
    T.assert_same_structure([1, (2, 3)], [4, (5, 6)])
    with pytest.raises(ValueError, match="Expected an instance of list"):
        T.assert_same_structure([1, 2], (1, 2))
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        T.assert_same_structure([1, 2], [1, [2]])
    with pytest.raises(ValueError, match="dictionary key mismatch"):
        T.map_structure(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="Paths in `a` missing in `b`"):
        T.assert_same_paths({"a": 1}, {"b": 1})


EXTRA_ACTIVATIONS = {
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "glu": lambda x: x[..., :2] / (1 + np.exp(-x[..., 2:])),
    "hard_shrink": lambda x: np.where(np.abs(x) > 0.5, x, 0),
    "hard_silu": lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
    "hard_swish": lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)),
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
    "soft_shrink": lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0),
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "sparsemax": None,
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "tanh_shrink": lambda x: x - np.tanh(x),
}


@pytest.mark.parametrize("name", sorted(EXTRA_ACTIVATIONS))
def test_extra_activations_by_name(name):
    fn = tf.keras.activations.get(name)
    assert fn is getattr(tf.keras.activations, name)
    assert tf.keras.activations.serialize(fn) == ("hard_silu" if name == "hard_swish"
                                                  else name)
    x = np.linspace(-3, 3, 12).reshape(3, 4)
    if EXTRA_ACTIVATIONS[name] is not None:
        np.testing.assert_allclose(fn(x).numpy(), EXTRA_ACTIVATIONS[name](x), rtol=1e-12,
                                   atol=1e-12)
    else:
        np.testing.assert_allclose(fn(x).numpy().sum(-1), 1.0)
    layer = tf.keras.layers.Dense(2, activation=name)
    rebuilt = tf.keras.layers.Dense.from_config(layer.get_config())
    assert rebuilt.activation is fn


def test_threshold_activation():
    x = np.array([-1.0, 0.2, 0.7])
    np.testing.assert_allclose(tf.keras.activations.threshold(x, 0.5, -9.0).numpy(),
                               [-9.0, -9.0, 0.7])
