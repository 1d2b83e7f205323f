"""The examples in `tf.data.Dataset`'s docstrings (ndflow/data/dataset_docs.py) run as
doctests with `tf` being ndflow: a docstring whose example no longer does what it shows fails
here (that every public method has one: tests/test_public_docstrings.py)."""

from __future__ import annotations

import doctest

import pytest

import ndflow as tf
from ndflow.data import dataset_docs


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
