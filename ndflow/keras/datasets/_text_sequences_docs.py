"""The docstrings of the IMDB and Reuters loaders (_text_sequences.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "path": "the file name to cache the data under (in ~/.keras/datasets).",
    "num_words": "keep only the `num_words` most frequent words (None: all); others\n"
                 "        become `oov_char`.",
    "skip_top": "also treat the `skip_top` most frequent words as out of vocabulary\n"
                '        (e.g. "the").',
    "maxlen": "drop sequences of `maxlen` words or more (None: keep all).",
    "seed": "the shuffling seed.",
    "start_char": "the index marking a sequence's start (None: no marker).",
    "oov_char": "the index replacing out-of-vocabulary words (None: drop them).",
    "index_from": "added to every word index (indices below it are the markers).",
}


# The arguments both loaders share, in their order.
_SEQUENCES = ["path", "num_words", "skip_top", "maxlen", "seed", "start_char", "oov_char",
              "index_from"]

DOCS = docs_with_args(_ARGS, {
    "load_imdb": (
        "The IMDB movie-review sentiment dataset: 25,000 training and 25,000 test reviews,\n"
        "    each a list of word indices (words ranked by frequency), labelled 0 (negative) or 1\n"
        "    (positive). Downloaded once (SHA-256 checked) into ~/.keras/datasets.",
        [*_SEQUENCES,
         "**kwargs: accepted for Keras' signature."],
        """

    Returns:
      `(x_train, y_train), (x_test, y_test)`: x as NumPy object arrays of int lists, y as
      int arrays.

    Raises:
      ValueError: `maxlen` leaves no sequence, or `path` contains a directory."""),
    "load_reuters": (
        "The Reuters newswire topic dataset: 11,228 newswires, each a list of word indices,\n"
        "    labelled with one of 46 topics (`get_label_names()` names them). Downloaded once\n"
        "    (SHA-256 checked) into ~/.keras/datasets and split after shuffling.",
        [*_SEQUENCES,
         "test_split: the fraction of the data held out as the test set."],
        """

    Returns:
      `(x_train, y_train), (x_test, y_test)`: x as NumPy object arrays of int lists, y as
      int arrays of topic indices.

    Raises:
      ValueError: `path` contains a directory."""),
})
