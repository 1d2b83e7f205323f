"""Every public member of the classes documented so far has a docstring (issue 55: every
exported symbol will; this list grows as the docstrings are written). tf.data.Dataset's
examples also run as doctests (tests/data/test_dataset_docstrings.py)."""

from __future__ import annotations

import inspect

import pytest

import ndflow as tf
from ndflow.core import lazy_api

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


def _public_objects():
    """(public path, object) of every class and function the namespaces export, each object
    once (the first path reaching it), resolved through `tf` as a program reaches it."""
    seen = set()
    for path in sorted(lazy_api.index()["names"]):
        obj = tf
        for part in path.split("."):
            obj = getattr(obj, part)
        if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
            continue
        seen.add(id(obj))
        yield path, obj


def test_every_exported_class_and_function_has_a_docstring():
    missing = [path for path, obj in _public_objects()
               if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not missing, f"{len(missing)} public names have no docstring: {missing[:40]}"
