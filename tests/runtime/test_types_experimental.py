"""tf.types.experimental: TF 2.21's abstract types and what is an instance of them
(tests/fixtures/types_experimental): tf.function objects are PolymorphicFunctions, their
traces ConcreteFunctions, type specs, shapes and dtypes TraceTypes; TensorLike is TF's
Union."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("types_experimental")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "types_experimental" / "values.json")
                       .read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_fixture_covers_every_case():
    assert sorted(CASES) == sorted(TF_VALUES)


def test_methods_bound_by_tf_function_are_polymorphic_functions_too():
    class Model(tf.Module):
        @tf.function
        def __call__(self, x):
            return x + 1.0

    m = Model()
    assert isinstance(m.__call__, tf.types.experimental.PolymorphicFunction)
    cf = m.__call__.get_concrete_function(tf.TensorSpec([]))
    assert isinstance(cf, tf.types.experimental.ConcreteFunction)


def test_abstract_types_cannot_be_instantiated_and_subclass_as_in_tensorflow():
    te = tf.types.experimental
    for cls in (te.Callable, te.ConcreteFunction, te.PolymorphicFunction, te.TraceType):
        with pytest.raises(TypeError):
            cls()

    class Fruit(te.TraceType):
        def is_subtype_of(self, other):
            return self == other

        def most_specific_common_supertype(self, others):
            return self if all(self == o for o in others) else None

        def placeholder_value(self, placeholder_context=None):
            return "fruit"

        def __eq__(self, other):
            return type(other) is Fruit

        def __hash__(self):
            return 1

    fruit = Fruit()
    assert fruit.most_specific_common_supertype([Fruit()]) is fruit
    assert fruit.from_tensors(iter([])) == "fruit" and fruit.flatten() == []
