"""The docstrings of utils_legacy_text.py's functions (attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "input_text": "a string.",
    "filters": "the characters treated as separators (default: punctuation, tabs and\n"
               "        newlines).",
    "lower": "whether to lowercase the text first.",
    "split": "the word separator.",
    "n": "the size of the hashing space.",
    "analyzer": "optional callable splitting the text instead.",
}
_INTS = """

    Returns:
      A list of ints."""


DOCS = docs_with_args(_ARGS, {
    "text_to_word_sequence": (
        "Splits a text into words (Keras 2's text preprocessing).",
        ["input_text", "filters", "lower", "split"],
        """

    Returns:
      A list of words (empty words dropped).""", """

    Example:

    >>> tf.keras.preprocessing.text.text_to_word_sequence("Hello, world!")
    ['hello', 'world']"""),
    "hashing_trick": (
        "Encodes a text's words as integers in [1, n) by hashing:\n"
        "    `hash_function(word) % (n - 1) + 1` (0 is left for padding).",
        ["text: a string.", "n",
         "hash_function: None (Python's `hash`, salted per process unless PYTHONHASHSEED is\n"
         '        set), "md5" (stable across runs) or a callable on a string.',
         "filters", "lower", "split", "analyzer"],
        _INTS, """

    Example:

    >>> tf.keras.preprocessing.text.hashing_trick("a b a", 10, hash_function="md5")
    [2, 5, 2]"""),
    "one_hot": (
        "Encodes a text's words as integers in [1, n) by hashing with Python's `hash`\n"
        "    (`hashing_trick` with its default; not stable across processes unless "
        "PYTHONHASHSEED\n"
        "    is set).",
        ["input_text", "n", "filters", "lower", "split", "analyzer"],
        _INTS),
})
