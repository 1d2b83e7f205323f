"""The docstrings of the Boston and California housing loaders (attached at their end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "path": "the file name to cache the data under (in ~/.keras/datasets).",
    "test_split": "the fraction held out as the test set, in [0, 1).",
    "seed": "the shuffling seed.",
}
_RETURNS = """

    Returns:
      `(x_train, y_train), (x_test, y_test)` as NumPy arrays.

    Raises:
      ValueError: """

DOCS = docs_with_args(_ARGS, {
    "load_boston_housing": (
        "The Boston Housing regression dataset: 13 features per house, the target its\n"
        "    median price in thousands of dollars. Downloaded once (SHA-256 checked) and split\n"
        "    after shuffling.",
        ["path", "test_split", "seed"],
        _RETURNS + "`test_split` outside [0, 1)."),
    "load_california_housing": (
        "The California Housing regression dataset: 8 features per census block, the target\n"
        "    its median house value. Downloaded once (SHA-256 checked) and split after shuffling.",
        ["version: \"large\" (all 20,640 blocks) or \"small\" (the file's first 600, as Keras).",
         "path", "test_split", "seed"],
        _RETURNS + "an unknown `version`, or `test_split` outside [0, 1)."),
})
