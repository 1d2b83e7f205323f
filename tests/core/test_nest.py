"""tf.nest: flatten / pack_sequence_as / map_structure on nested structures."""

import collections

import pytest

from ndflow.core import nest

Point = collections.namedtuple("Point", "x y")


def test_flatten_orders_dict_keys_and_recurses():
    s = {"b": [1, (2, 3)], "a": Point(4, {"z": 5, "y": 6})}
    assert nest.flatten(s) == [4, 6, 5, 1, 2, 3]
    assert nest.flatten(7) == [7]


def test_pack_sequence_as_round_trips_types():
    s = {"b": [1, (2, 3)], "a": Point(4, {"z": 5, "y": 6})}
    packed = nest.pack_sequence_as(s, nest.flatten(s))
    assert packed == s and isinstance(packed["a"], Point) and isinstance(packed["b"][1], tuple)


def test_map_structure_and_mismatch_error():
    assert nest.map_structure(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    with pytest.raises(ValueError):
        nest.map_structure(lambda a, b: a, (1, 2), (1,))
