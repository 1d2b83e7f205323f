"""tf.TensorArraySpec, tf.IndexedSlicesSpec, tf.NoneTensorSpec and tf.type_spec_from_value of
TensorArrays, IndexedSlices and None: TF 2.21's reprs, compatibility, subtyping, supertypes
(TensorArraySpec's quirks included), equality, component specs and input_signature traces
(tests/fixtures/type_specs_extra), plus what the fixture cannot show."""

from __future__ import annotations

import json
import pickle

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("type_specs_extra")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "type_specs_extra" / "values.json")
                       .read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_fixture_covers_every_case():
    assert sorted(CASES) == sorted(TF_VALUES)


@pytest.mark.parametrize("spec", [
    tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int32, tf.int32, [2]),
    tf.TensorArraySpec([2], tf.int32, True, False), tf.NoneTensorSpec()])
def test_specs_are_type_specs_usable_as_dict_keys_and_pickled(spec):
    assert isinstance(spec, tf.TypeSpec)
    assert {spec: 1}[pickle.loads(pickle.dumps(spec))] == 1


def test_an_indexed_slices_signature_traces_once_for_all_row_counts():
    traces = []

    @tf.function(input_signature=[tf.IndexedSlicesSpec([None, 2], tf.float32, tf.int64,
                                                       tf.int64)])
    def rows(x):
        traces.append(1)
        return tf.reduce_sum(x.values, axis=0)

    for n in (1, 3):
        s = tf.IndexedSlices(tf.ones([n, 2]), tf.range(n, dtype=tf.int64),
                             tf.constant([5, 2], tf.int64))
        assert rows(s).numpy().tolist() == [n, n]
    assert len(traces) == 1
    cf = rows.get_concrete_function()
    assert [t.dtype.name for t in cf.inputs] == ["float32", "int64", "int64"]


def test_indexed_slices_arguments_without_a_signature_are_traced_as_tensors():
    traces = []

    @tf.function
    def scaled(x):
        traces.append(type(x).__name__)
        return tf.IndexedSlices(x.values * 2.0, x.indices, x.dense_shape)

    s = tf.IndexedSlices(tf.ones([2, 2]), tf.constant([0, 1], tf.int64),
                         tf.constant([3, 2], tf.int64))
    out = scaled(s)
    scaled(tf.IndexedSlices(tf.ones([2, 2]) * 3.0, tf.constant([1, 2], tf.int64),
                            tf.constant([3, 2], tf.int64)))
    assert traces == ["IndexedSlices"]          # a second value reuses the trace
    assert isinstance(out, tf.IndexedSlices)
    assert tf.convert_to_tensor(out).numpy().tolist() == [[2, 2], [2, 2], [0, 0]]


def test_tensor_array_spec_components_rebuild_a_tensor_array_in_a_function():
    spec = tf.TensorArraySpec([2], tf.float32)

    @tf.function
    def build():
        ta = tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, [1.0, 2.0])
        ta = ta.write(1, [3.0, 4.0])
        flat = tf.nest.flatten(ta.flow)
        again = tf.nest.pack_sequence_as(spec, flat, expand_composites=True)
        assert tf.type_spec_from_value(again) == tf.TensorArraySpec([2], tf.float32)
        return again.stack()

    assert build().numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_type_spec_from_value_still_rejects_what_it_cannot_type():
    with pytest.raises(TypeError, match="Could not build a TypeSpec"):
        tf.type_spec_from_value(object())
