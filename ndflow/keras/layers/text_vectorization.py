"""Keras 3's TextVectorization: standardize (lower case, strip punctuation with Keras' regex, or
a callable), split (whitespace, characters, callable) into a ragged batch, optional n-grams,
then a StringLookup with mask "" and OOV "[UNK]": integer sequences (padded/truncated to
`output_sequence_length`, or ragged) or multi_hot/count/tf_idf vectors. `adapt` streams
batches; the vocabulary is ordered by count, ties by token, high to low, as Keras."""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras import serialization_lib
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.category_encoding import encode_categorical
from ndflow.keras.layers.index_lookup import StringLookup, to_numpy_tokens
from ndflow.ops import arithmetic
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, squeeze
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.string_ngrams_ops import ngrams as string_ngrams
from ndflow.ops.string_ops import lower, regex_replace
from ndflow.ops.string_ops import split as string_split
from ndflow.ops.string_unicode_ops import unicode_split

_STRIP_REGEX = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
_INT64_MAX = np.iinfo(np.int64).max


@keras_export("keras.layers.TextVectorization")
class TextVectorization(Layer):
    """Turns raw strings into token indices or token-count vectors: standardize, split into
    tokens, optionally form n-grams, then look the tokens up in a vocabulary.

    The vocabulary is given or learned with `adapt(data)` (tokens by descending
    frequency). Index 0 is the padding (mask "") and 1 the unknown token "[UNK]".

    Args:
      max_tokens: the largest vocabulary, counting the mask and "[UNK]"; None for no
        limit.
      standardize: "lower_and_strip_punctuation" (the default), "lower",
        "strip_punctuation", None, or a callable on a string tensor.
      split: "whitespace" (the default), "character", None (the whole string is one
        token), or a callable returning a ragged tensor of tokens.
      ngrams: None, an int n (all n-grams from 1 to n), or a tuple of the n-gram sizes.
      output_mode: "int" (a sequence of indices per string), "multi_hot", "count",
        "tf_idf" (a vector over the vocabulary per string) or "one_hot".
      output_sequence_length: in "int" mode, pad or truncate every sequence to this
        length (None: pad to the batch's longest).
      pad_to_max_tokens: whether the vector modes always output `max_tokens` entries.
      vocabulary: optional list of tokens or path of a text file with one per line.
      idf_weights: with "tf_idf" and `vocabulary`, the inverse document frequencies.
      sparse: must be False (sparse outputs are not supported by ndflow).
      ragged: in "int" mode, return a `tf.RaggedTensor` of unpadded sequences.
      encoding: the text encoding (default "utf-8").
      name: the layer's name.
      **kwargs: other Layer arguments.

    Raises:
      ValueError: an unknown `standardize`, `split` or `output_mode`, a bad `ngrams`,
        `output_sequence_length` outside "int" mode or with `ragged`, or `ragged`
        outside "int" mode.

    Example:

    >>> layer = tf.keras.layers.TextVectorization(output_sequence_length=4)
    >>> layer.adapt(["the cat", "the cat", "the dog"])
    >>> layer(["The cat ran!"]).numpy()
    array([[2, 3, 1, 0]])
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    @property
    def compute_dtype(self) -> str:   # Keras: string in (a Sequential it leads takes strings)
        return "string"

    @property
    def variable_dtype(self) -> str:
        return "string"

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int",
                 output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None,
                 **kwargs):
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        if not (standardize is None or callable(standardize) or standardize in (
                "lower_and_strip_punctuation", "lower", "strip_punctuation")):
            raise ValueError(
                "Unknown value for `standardize`. Allowed values are: ('lower_and_strip_"
                f"punctuation', 'lower', 'strip_punctuation'). Received: standardize={standardize}")
        if not (split is None or callable(split) or split in ("whitespace", "character")):
            raise ValueError("Unknown value for `split`. Allowed values are: ('whitespace', "
                             f"'character'). Received: split={split}")
        if output_mode not in ("int", "one_hot", "multi_hot", "count", "tf_idf"):
            raise ValueError(
                "Unknown value for `output_mode`. Allowed values are: ('int', 'one_hot', "
                f"'multi_hot', 'count', 'tf_idf'). Received: output_mode={output_mode}")
        if not (ngrams is None or isinstance(ngrams, int)
                or isinstance(ngrams, tuple) and all(isinstance(i, int) for i in ngrams)):
            raise ValueError("`ngrams` must be None, an integer, or a tuple of integers. "
                             f"Received: ngrams={ngrams}")
        if output_mode == "int" and not (isinstance(output_sequence_length, int)
                                         or output_sequence_length is None):
            raise ValueError("`output_sequence_length` must be either None or an integer when "
                             "`output_mode` is 'int'. Received: "
                             f"output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not "
                             f"'int'. Received output_sequence_length={output_sequence_length}.")
        if ragged and output_mode != "int":
            raise ValueError("`ragged` must not be true if `output_mode` is `'int'`. Received: "
                             f"ragged={ragged} and output_mode={output_mode}")
        if ragged and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if ragged is True. "
                             f"Received: ragged={ragged} and "
                             f"output_sequence_length={output_sequence_length}")
        self._max_tokens = max_tokens
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._ragged = ragged
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._encoding = encoding
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        super().__init__(name=name, **{k: v for k, v in kwargs.items() if k != "dtype"})
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
            sparse=sparse, has_input_vocabulary=vocabulary is not None, encoding=encoding,
            vocabulary_size=vocabulary_size)

    # -- vocabulary -----------------------------------------------------------------------
    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    def adapt(self, data, batch_size=None, steps=None):
        if hasattr(data, "element_spec"):
            batches = data.take(steps) if steps is not None else data
        else:
            data = to_numpy_tokens(data)
            if data.ndim == 1:
                data = data[:, None]
            batches = [data]
        lookup = self._lookup_layer
        if lookup._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{lookup.name}' after setting a static "
                             "vocabulary via `vocabulary` argument or `set_vocabulary()` method.")
        counts, doc_counts, num_docs = collections.Counter(), collections.Counter(), 0
        for batch in batches:
            tokens = self._preprocess(batch)
            rows = lookup._rows(tokens, expand_rank1=False)
            if not isinstance(tokens, RaggedTensor) and to_numpy_tokens(tokens).ndim == 1:
                rows = [[t] for t in to_numpy_tokens(tokens).tolist()]
            for row in rows:
                counts.update(row)
                if self._output_mode == "tf_idf":
                    doc_counts.update(set(row))
            num_docs += len(rows)
        lookup._finalize(counts, doc_counts, num_docs)

    # -- call -----------------------------------------------------------------------------
    def _preprocess(self, inputs):
        inputs = convert_to_tensor(inputs, dtypes.string)
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            inputs = lower(inputs)
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            inputs = regex_replace(inputs, _STRIP_REGEX, "")
        if callable(self._standardize):
            inputs = self._standardize(inputs)
        if self._split is not None:
            if inputs.shape.rank > 1:
                if inputs.shape[-1] != 1:
                    raise ValueError(
                        "When using `TextVectorization` to tokenize strings, the input rank "
                        "must be 1 or the last shape dimension must be 1. Received: "
                        f"inputs.shape={inputs.shape} with rank={inputs.shape.rank}")
                inputs = squeeze(inputs, -1)
            if self._split == "whitespace":
                inputs = string_split(inputs)
            elif self._split == "character":
                inputs = unicode_split(inputs, "UTF-8")
            else:
                inputs = self._split(inputs)
        if self._ngrams is not None:
            inputs = string_ngrams(inputs, ngram_width=self._ngrams, separator=" ")
        return inputs

    def call(self, inputs):
        tokens = self._preprocess(inputs)
        lookup = self._lookup_layer
        if isinstance(tokens, RaggedTensor):
            ids = tokens.with_flat_values(lookup._lookup_dense(tokens.flat_values))
        else:
            ids = lookup.call(tokens) if self._output_mode == "int" else None
        if self._output_mode == "int":
            if isinstance(ids, RaggedTensor):
                if self._ragged:
                    return ids
                shape = [None, self._output_sequence_length]
                return ids.to_tensor(default_value=0, shape=shape)
            if self._output_sequence_length is not None:
                if ids.shape.rank in (0, 1):   # one sample's tokens (a scalar string split);
                    # Keras slices the last axis first (a scalar: StridedSlice's error)
                    length = self._output_sequence_length
                    return squeeze(_pad_or_truncate(expand_dims(ids[..., :length], 0), length), 0)
                return _pad_or_truncate(ids, self._output_sequence_length)
            return ids
        if isinstance(tokens, RaggedTensor):  # padding ids are dropped by the encoding
            ids = ids.to_tensor(default_value=_INT64_MAX)
        else:   # Keras: dense tokens of rank 0 or 1 (a scalar string split, or a batch of
            # unsplit strings) are one sample
            ids = lookup._lookup_dense(tokens)
        depth = lookup.max_tokens if lookup.pad_to_max_tokens else lookup._frozen_vocab_size
        if depth is None:
            raise RuntimeError(
                f"When using `output_mode={self._output_mode}` and `pad_to_max_tokens=False`, "
                "you must set the layer's vocabulary before calling it. Either pass a "
                "`vocabulary` argument to the layer, or call `adapt` with some sample data.")
        if self._output_mode == "tf_idf":
            out = encode_categorical(ids, "count", depth, dtypes.float32)
            return arithmetic.multiply(out, convert_to_tensor(lookup.idf_weights_const))
        return encode_categorical(ids, self._output_mode, depth, dtypes.int64)

    def compute_output_shape(self, input_shape):
        if self._output_mode == "int":
            return (input_shape[0], self._output_sequence_length)
        lookup = self._lookup_layer
        depth = lookup.max_tokens if lookup.pad_to_max_tokens else lookup._frozen_vocab_size
        return (input_shape[0], depth)

    def get_config(self):
        lookup = self._lookup_layer

        def listify(x):
            x = x.numpy() if hasattr(x, "numpy") else x
            return x.tolist() if isinstance(x, np.ndarray) else x
        return {**super().get_config(), "max_tokens": lookup.max_tokens,
                "standardize": _serialize_fn(self._standardize),
                "split": _serialize_fn(self._split),
                "ngrams": self._ngrams_arg, "output_mode": self._output_mode,
                "output_sequence_length": self._output_sequence_length,
                "pad_to_max_tokens": lookup.pad_to_max_tokens, "sparse": lookup.sparse,
                "ragged": self._ragged, "vocabulary": listify(lookup.input_vocabulary),
                "idf_weights": listify(lookup.input_idf_weights), "encoding": self._encoding,
                "vocabulary_size": self.vocabulary_size()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        for key in ("standardize", "split"):
            config[key] = _deserialize_fn(config.get(key))
        return cls(**config)

    def save_assets(self, dir_path):
        self._lookup_layer.save_assets(dir_path)

    def load_assets(self, dir_path):
        self._lookup_layer.load_assets(dir_path)


def _serialize_fn(value):
    """A callable standardize/split as Keras records a function in config.json."""
    return serialization_lib.function_config(value) if callable(value) else value


def _deserialize_fn(value):
    if not isinstance(value, dict):
        return value
    name = value.get("config")
    fn = serialization_lib.custom_object(name)
    if fn is None:
        raise TypeError(f"Could not locate function '{name}'. Make sure custom classes and "
                        "functions are decorated with "
                        "`@keras.saving.register_keras_serializable()` or passed in "
                        "`custom_objects`.")
    return fn


def _pad_or_truncate(ids, length):
    """A dense batch of ids cut or zero-padded to `length` on its last axis."""
    ragged = RaggedTensor.from_tensor(ids)
    return ragged.to_tensor(default_value=0, shape=[None, length])
