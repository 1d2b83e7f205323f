"""Every public member (methods and properties) of the central classes has a docstring.
Every exported class and function has one too: tests/test_api_docstrings.py and
tests/keras/test_keras_docstrings.py, which also run the examples; tf.data.Dataset's run in
tests/data/test_dataset_docstrings.py."""

from __future__ import annotations

import inspect

import pytest

import ndflow as tf

DOCUMENTED = [tf.data.Dataset, tf.GradientTape, tf.Tensor, tf.TensorShape, tf.DType,
              tf.Module, tf.TensorSpec, tf.Variable, tf.IndexedSlices, tf.SparseTensor,
              tf.Graph, tf.keras.layers.Layer, tf.keras.Model, tf.RaggedTensor]


def _public_members(cls):
    for name in dir(cls):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, property):
            yield name, member.fget
        elif callable(getattr(member, "__func__", member)):
            yield name, getattr(member, "__func__", member)


@pytest.mark.parametrize("cls", DOCUMENTED, ids=lambda c: c.__name__)
def test_every_public_member_has_a_docstring(cls):
    assert (cls.__doc__ or "").strip(), f"{cls.__name__} has no docstring"
    missing = [name for name, member in _public_members(cls)
               if not (member.__doc__ or "").strip()]
    assert not missing, f"{cls.__name__}: no docstring for {missing}"

