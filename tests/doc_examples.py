"""Runs a docstring's `>>>` examples as a doctest (tests/test_api_docstrings.py,
tests/keras/test_keras_docstrings.py), leaving Keras' automatic names as they were: an example
that builds a `Precision()` must not make a later test's first one `precision_1`."""

from __future__ import annotations

import doctest
import itertools

from ndflow.keras.layers import layer_names


def run_examples(path: str, doc: str, globs: dict) -> int:
    """The number of failed examples of `doc` (reported by doctest on stdout)."""
    saved = {base: int(repr(counter)[len("count("):-1])     # each counter's next value
             for base, counter in layer_names._UIDS.items()}
    try:
        test = doctest.DocTestParser().get_doctest(doc, dict(globs), path, None, 0)
        runner = doctest.DocTestRunner(
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        return runner.summarize(verbose=False).failed
    finally:
        layer_names._UIDS.clear()
        layer_names._UIDS.update({base: itertools.count(n) for base, n in saved.items()})
