"""Every public method of `tf.data.Dataset` has a docstring, and the examples in them
(ndflow/data/dataset_docs.py) run as doctests with `tf` being ndflow: a docstring whose
example no longer does what it shows fails here."""

from __future__ import annotations

import doctest
import inspect

import pytest

import ndflow as tf
from ndflow.data import dataset_docs


def _public_methods():
    cls = tf.data.Dataset
    for name in dir(cls):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, property):
            yield name, member.fget
        elif callable(getattr(member, "__func__", member)):
            yield name, getattr(member, "__func__", member)


@pytest.mark.parametrize("name,method", list(_public_methods()))
def test_public_method_has_a_docstring(name, method):
    assert (method.__doc__ or "").strip(), f"tf.data.Dataset.{name} has no docstring"


@pytest.mark.parametrize("name", sorted(dataset_docs.DOCS))
def test_docstring_example_runs(name):
    doc = dataset_docs.DOCS[name]
    assert ">>>" in doc and "Args:" in doc
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, {"tf": tf}, f"Dataset.{name}", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted > 0
