"""The docstrings of StringLookup and IntegerLookup (index_lookup.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "max_tokens": "the largest index space (vocabulary plus mask and OOV indices); None\n"
                  "        for no limit.",
    "num_oov_indices": "how many indices are kept for out-of-vocabulary tokens (0 makes\n"
                       "        an unknown token an error); with several, a token's hash picks "
                       "one.",
    "vocabulary": "optional vocabulary: a list, a 1-D tensor or array, or the path of a\n"
                  "        text file with one token per line (then `adapt` is not needed).",
    "idf_weights": 'with `output_mode="tf_idf"` and a `vocabulary`, the inverse document\n'
                   "        frequency of each vocabulary token.",
    "invert": 'whether to map indices back to tokens instead ("int" mode only).',
    "output_mode": '"int" (indices), "one_hot", "multi_hot", "count" or "tf_idf" (vectors\n'
                   "        over the whole index space, as `CategoryEncoding`).",
    "pad_to_max_tokens": "whether the vector modes always output `max_tokens` entries\n"
                         "        (needs `max_tokens`).",
    "sparse": "must be False (sparse outputs are not supported by ndflow).",
    "name": "the layer's name.",
    "**kwargs": "other Layer arguments.",
}
_RAISES = """

    Raises:
      ValueError: `max_tokens` of 1 or less, `pad_to_max_tokens` without `max_tokens`,
        negative `num_oov_indices`, an unknown `output_mode`, `invert` with a vector
        mode, `idf_weights` outside "tf_idf" (or missing with a vocabulary in it), or
        unknown keyword arguments.
      NotImplementedError: `sparse=True`."""


DOCS = docs_with_args(_ARGS, {
    "StringLookup": (
        "Maps strings to integer indices through a vocabulary (or back, with `invert`).\n"
        "\n"
        "    Index layout: 0 is the mask token's (when `mask_token` is set, in \"int\" mode), "
        "then\n"
        "    `num_oov_indices` indices for unknown tokens, then the vocabulary in order. The\n"
        "    vocabulary is given or learned with `adapt(data)` (tokens by descending frequency).",
        ["max_tokens",
         "mask_token: optional token that means padding (mapped to index 0); None for none.",
         "oov_token: the token `invert` returns for OOV indices.", "num_oov_indices", "vocabulary",
         "idf_weights", "invert", "output_mode", "pad_to_max_tokens", "sparse",
         'encoding: the text encoding of the tokens (default "utf-8").', "name",
         "salt: optional int or pair of ints for a keyed hash of OOV tokens.", "**kwargs"],
        _RAISES, """

    Example:

    >>> layer = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c"])
    >>> layer([["a", "c", "z"]]).numpy()
    array([[1, 3, 0]])"""),
    "IntegerLookup": (
        "Maps integers to contiguous indices through a vocabulary (or back, with `invert`).\n"
        "\n"
        "    Index layout: 0 is the mask token's (when `mask_token` is set, in \"int\" mode), "
        "then\n"
        "    `num_oov_indices` indices for unknown values, then the vocabulary in order. The\n"
        "    vocabulary is given or learned with `adapt(data)` (values by descending frequency).",
        ["max_tokens",
         "mask_token: optional value that means padding (mapped to index 0); None for none.",
         "oov_token: the value `invert` returns for OOV indices (default -1).", "num_oov_indices",
         "vocabulary", "idf_weights", "invert", "output_mode", "pad_to_max_tokens", "sparse",
         'vocabulary_dtype: must be "int64".',
         'oov_method: how a value picks among several OOV indices: "floormod" (value modulo\n'
         '        `num_oov_indices`) or "farmhash".',
         "salt: optional int or pair of ints for a keyed hash of OOV values.", "name", "**kwargs"],
        _RAISES, """

    Example:

    >>> layer = tf.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138])
    >>> layer([[12, 1138, 42]]).numpy()
    array([[1, 3, 0]])"""),
})
