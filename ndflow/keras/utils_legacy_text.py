"""`tf.keras.preprocessing.text`: Keras' legacy word tools, still in TF 2.21's API and in
many tutorials: `text_to_word_sequence`, `hashing_trick`/`one_hot` (word -> hash bucket in
1..n-1) and `Tokenizer` (a frequency-ranked vocabulary: texts <-> index sequences, bag-of-
words matrices, JSON that Keras' `tokenizer_from_json` reads)."""

from __future__ import annotations

import collections
import hashlib
import json
import warnings

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras import utils_legacy_text_docs

_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


@keras_export("keras.preprocessing.text.text_to_word_sequence")
def text_to_word_sequence(input_text, filters=_FILTERS, lower=True, split=" "):
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [word for word in input_text.split(split) if word]


@keras_export("keras.preprocessing.text.hashing_trick")
def hashing_trick(text, n, hash_function=None, filters=_FILTERS, lower=True, split=" ",
                  analyzer=None):
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word):
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    words = analyzer(text) if analyzer is not None else text_to_word_sequence(
        text, filters=filters, lower=lower, split=split)
    return [hash_function(w) % (n - 1) + 1 for w in words]


@keras_export("keras.preprocessing.text.one_hot")
def one_hot(input_text, n, filters=_FILTERS, lower=True, split=" ", analyzer=None):
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower,
                         split=split, analyzer=analyzer)


@keras_export("keras.preprocessing.text.Tokenizer")
class Tokenizer:
    """Keras 2's text tokenizer: learns a vocabulary ranked by word frequency
    (`fit_on_texts`) and turns texts into index sequences or matrices
    (`texts_to_sequences`, `texts_to_matrix`).

    Index 1 is the most frequent word (or `oov_token` when given); 0 is never used.

    Args:
      num_words: when converting, keep only the words with an index below it.
      filters: the characters treated as separators (default: punctuation, tabs and
        newlines).
      lower: whether to lowercase the text first.
      split: the word separator.
      char_level: whether every character is a token.
      oov_token: optional token standing for out-of-vocabulary words (index 1).
      analyzer: optional callable splitting a text instead.
      **kwargs: Keras 2's `nb_words` (renamed `num_words`; a warning) and
        `document_count`.

    Example:

    >>> tokenizer = tf.keras.preprocessing.text.Tokenizer()
    >>> tokenizer.fit_on_texts(["the cat", "the dog"])
    >>> tokenizer.texts_to_sequences(["the dog"])
    [[1, 3]]
    """

    def __init__(self, num_words=None, filters=_FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, analyzer=None, **kwargs):
        if "nb_words" in kwargs:
            warnings.warn("The `nb_words` argument in `Tokenizer` has been renamed "
                          "`num_words`.", stacklevel=2)
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs = collections.defaultdict(int)
        self.word_index, self.index_word = {}, {}
        self.analyzer = analyzer

    def _words(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return text
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, filters=self.filters, lower=self.lower,
                                     split=self.split)

    def fit_on_texts(self, texts):
        """Counts the words of `texts` and ranks the vocabulary (ties: first seen first)."""
        for text in texts:
            self.document_count += 1
            words = self._words(text)
            for w in words:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(words):
                self.word_docs[w] += 1
        ranked = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + \
            [word for word, _ in ranked]
        self.word_index = {w: i for i, w in enumerate(vocabulary, start=1)}
        self.index_word = {i: w for w, i in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        """Document counts from index sequences (for `tfidf` matrices)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            out = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None and not (self.num_words and i >= self.num_words):
                    out.append(i)
                elif oov is not None and (i is not None or self.oov_token is not None):
                    out.append(oov)
            yield out

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            words = []
            for num in seq:
                word = self.index_word.get(num)
                if word is not None and not (self.num_words and num >= self.num_words):
                    words.append(word)
                elif oov is not None and (word is not None or self.oov_token is not None):
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """(len(sequences), num_words) float64: "binary", "count", "freq" or "tfidf"."""
        if self.num_words:
            num_words = self.num_words
        elif self.word_index:
            num_words = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text "
                             "data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise ValueError("Unknown vectorization mode:", mode)
        x = np.zeros((len(sequences), num_words))
        for row, seq in enumerate(sequences):
            counts = collections.Counter(j for j in seq if j < num_words)
            for j, c in counts.items():
                if mode == "count":
                    x[row][j] = c
                elif mode == "freq":
                    x[row][j] = c / len(seq)
                elif mode == "binary":
                    x[row][j] = 1
                else:
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[row][j] = (1 + np.log(c)) * idf
        return x

    def get_config(self):
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower,
                "split": self.split, "char_level": self.char_level,
                "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts),
                "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs),
                "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs):
        """Keras' JSON form (`tokenizer_from_json` in Keras or ndflow reads it)."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)


@keras_export("keras.preprocessing.text.tokenizer_from_json")
def tokenizer_from_json(json_string):
    """A `Tokenizer` restored from its `to_json()` output (written by Keras or ndflow).

    Args:
      json_string: the JSON text.

    Returns:
      A Tokenizer with the saved configuration and vocabulary.
    """
    config = dict(json.loads(json_string).get("config"))
    state = {name: json.loads(config.pop(name)) for name in
             ("word_counts", "word_docs", "index_docs", "index_word", "word_index")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = state["word_counts"]
    tokenizer.word_docs = state["word_docs"]
    tokenizer.index_docs = {int(k): v for k, v in state["index_docs"].items()}
    tokenizer.word_index = state["word_index"]
    tokenizer.index_word = {int(k): v for k, v in state["index_word"].items()}
    return tokenizer


attach(globals(), utils_legacy_text_docs.DOCS)
