"""Every public member of the classes documented so far has a docstring (issue 55: every
exported symbol will; this list grows as the docstrings are written). tf.data.Dataset's
examples also run as doctests (tests/data/test_dataset_docstrings.py)."""

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
