"""Keras 3's vocabulary lookups: IndexLookup (shared), StringLookup and IntegerLookup. Tokens map
to indices through a `tf.lookup.StaticHashTable` (so the layers run eagerly, in tf.function and
in `Dataset.map`): index 0 is the mask (int mode with a mask token), then `num_oov_indices` OOV
indices (several: FarmHash of the token, or floormod for integers), then the vocabulary.
`adapt` counts tokens batch by batch and orders them by count, ties by token, high to low."""

from __future__ import annotations

import collections
import os

import numpy as np

from ndflow.core import context, dtypes, errors
from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import control_dependencies
from ndflow.keras.layers import index_lookup_docs
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.category_encoding import encode_categorical
from ndflow.ops import arithmetic, comparison, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, identity, squeeze
from ndflow.ops.cast import cast
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.lookup_initializers import KeyValueTensorInitializer
from ndflow.ops.lookup_tables import StaticHashTable
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.sparse_tensor import SparseTensor, sparse_tensor_to_dense
from ndflow.ops.string_hash_ops import string_to_hash_bucket_fast, string_to_hash_bucket_strong
from ndflow.ops.string_ops import as_string
from ndflow.train.init_scope import init_scope

_INT64_MAX = np.iinfo(np.int64).max


def to_numpy_tokens(data):
    """A batch of tokens (tensor, ragged, list, array) as a flat NumPy array (bytes or ints)."""
    if isinstance(data, RaggedTensor):
        data = data.flat_values
    if hasattr(data, "numpy"):
        data = data.numpy()
    return np.asarray(data)


def _text(x, encoding="utf-8"):
    return x.decode(encoding) if isinstance(x, bytes) else x


class IndexLookup(Layer):

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    _tracked_attributes = ("_table",)   # a checkpoint/SavedModel child ("lookup_table")

    # Keras: the layer computes in its vocabulary's dtype (a Sequential it leads takes
    # string or int64 inputs)
    @property
    def compute_dtype(self) -> str:
        return self.vocabulary_dtype

    @property
    def variable_dtype(self) -> str:
        return self.vocabulary_dtype

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary_dtype,
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, oov_method="floormod", salt=None,
                 name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError("If set, `max_tokens` must be greater than 1. Received: "
                             f"max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                             f"max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        if output_mode not in ("int", "one_hot", "multi_hot", "count", "tf_idf"):
            raise ValueError(
                f"Unknown value for `output_mode`. Allowed values are: {('int', 'one_hot', 'multi_hot', 'count', 'tf_idf')}. Received: output_mode={output_mode}")  # noqa: E501
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if sparse:
            raise NotImplementedError(f"{type(self).__name__}(sparse=True) is not supported "
                                      "by ndflow")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("`idf_weights` should only be set if `output_mode` is `'tf_idf'`. "
                             f"Received: idf_weights={idf_weights} and "
                             f"output_mode={output_mode}")
        if salt is not None:
            salt = list(salt) if isinstance(salt, (tuple, list)) else [salt, salt]
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)
        self._frozen_vocab_size = kwargs.pop("vocabulary_size", None)
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        super().__init__(name=name)
        self.invert = invert
        self.max_tokens = max_tokens
        self.num_oov_indices = num_oov_indices
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = sparse
        self.pad_to_max_tokens = pad_to_max_tokens
        self.vocabulary_dtype = dtypes.as_dtype(vocabulary_dtype).name
        self.oov_method = oov_method
        self.salt = salt
        self.input_vocabulary = vocabulary if not isinstance(vocabulary, str) else None
        self.input_idf_weights = idf_weights
        self._has_input_vocabulary = has_input_vocabulary
        self._is_string = self.vocabulary_dtype == "string"
        self._tokens = []  # the learned/given tokens, in index order (bytes for strings)
        self.idf_weights_const = None
        if output_mode == "tf_idf" and self._has_input_vocabulary and idf_weights is None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, "
                             "the `idf_weights` argument must also be provided.")
        self._set_tokens([])
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # -- indices --------------------------------------------------------------------------
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        return len(self._tokens) + self._token_start_index()

    def _key(self, token):
        if self._is_string:
            return token.encode("utf-8") if isinstance(token, str) else bytes(token)
        return int(token)

    def get_vocabulary(self, include_special_tokens=True):
        vocab = [self.oov_token] * self._token_start_index() + list(self._tokens)
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        if not include_special_tokens:
            vocab = vocab[self._token_start_index():]
        # Keras 3 returns the terms as NumPy scalars (np.str_('the'), np.int64(4)): they come
        # from its table's NumPy export; the mask and OOV tokens stay Python values
        start = self._token_start_index() if include_special_tokens else 0
        if self._is_string:
            return [_text(v) if i < start else np.str_(_text(v)) for i, v in enumerate(vocab)]
        return [(int(v) if i < start else np.int64(v)) if isinstance(v, (int, np.integer))
                else v for i, v in enumerate(vocab)]

    # -- vocabulary -----------------------------------------------------------------------
    def set_vocabulary(self, vocabulary, idf_weights=None):
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is `'tf_idf'`. "
                             f"Received: output_mode={self.output_mode} and "
                             f"idf_weights={idf_weights}")
        if isinstance(vocabulary, str):
            if not os.path.exists(vocabulary):
                raise ValueError(f"Vocabulary file {vocabulary} does not exist.")
            if self.output_mode == "tf_idf":
                raise ValueError("output_mode `'tf_idf'` does not support loading a vocabulary "
                                 "from file.")
            with open(vocabulary, "rb") as f:
                lines = f.read().split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            vocabulary = lines if self._is_string else [int(v) for v in lines]
        vocabulary = [self._key(v) for v in to_numpy_tokens(vocabulary).tolist()] \
            if not isinstance(vocabulary, list) else [self._key(v) for v in vocabulary]
        if not vocabulary:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        oov_start, token_start = self._oov_start_index(), self._token_start_index()
        special = [self.mask_token] * oov_start + [self.oov_token] * self.num_oov_indices
        special_keys = [None if s is None else self._key(s) for s in special]
        tokens = vocabulary[token_start:] if vocabulary[:token_start] == special_keys \
            else vocabulary
        repeated = [t for t, c in collections.Counter(tokens).items() if c > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please "
                             "uniquify your dataset. The repeated terms are: "
                             f"{[_text(t) for t in repeated]}")
        if self.mask_token is not None and self._key(self.mask_token) in tokens:
            raise ValueError(
                "Found reserved mask token at unexpected location in `vocabulary`. Note that "
                "passed `vocabulary` does not need to include the OOV and mask tokens. Either "
                "remove all mask and OOV tokens, or include them only at the start of the "
                f"vocabulary in precisely this order: {special}. Received: "
                f"mask_token={self.mask_token}")
        if self.oov_token is not None and self.invert and self._key(self.oov_token) in tokens:
            raise ValueError(
                "Found reserved OOV token at unexpected location in `vocabulary`. Note that "
                "passed `vocabulary` does not need to include the OOV and mask tokens. Either "
                "remove all mask and OOV tokens, or include them only at the start of the "
                f"vocabulary in precisely this order: {special}. Received: "
                f"oov_token={self.oov_token}")
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise ValueError(
                "Attempted to set a vocabulary larger than the maximum vocab size. Received "
                f"vocabulary size is {token_start + len(tokens)}; `max_tokens` is "
                f"{self.max_tokens}.")
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            idf = np.asarray(idf_weights.numpy() if hasattr(idf_weights, "numpy")
                             else idf_weights, np.float64)
            if len(vocabulary) != len(idf):
                raise ValueError(
                    "`idf_weights` must be the same length as vocabulary. "
                    f"len(idf_weights) is {len(idf)}; len(vocabulary) is {len(vocabulary)}")
            if idf.ndim != 1:
                raise ValueError("TF-IDF data must be a 1-index array. Received: "
                                 f"type(idf_weights)={type(idf_weights)}")
            found_special = vocabulary[:token_start] == special_keys
            front = 0 if found_special else token_start  # specials weigh the mean idf
            back = self.max_tokens - front - idf.size \
                if self.pad_to_max_tokens and self.max_tokens is not None else 0
            idf = np.pad(idf, (front, back), constant_values=(
                0 if found_special else np.average(idf), 0))
            self.idf_weights_const = idf.astype(np.float32)
        self._record_vocabulary_size()

    def _set_tokens(self, tokens):
        self._tokens = list(tokens)
        start = self._token_start_index()
        indices = np.arange(start, start + len(tokens), dtype=np.int64)
        key_dtype = dtypes.string if self._is_string else dtypes.int64
        tokens = np.array(self._tokens, dtype=object if self._is_string else np.int64)
        if not self._tokens and self._is_string:
            tokens = np.zeros((0,), dtype=object)
        keys, values = (indices, tokens) if self.invert else (tokens, indices)
        kd, vd = (dtypes.int64, key_dtype) if self.invert else (key_dtype, dtypes.int64)
        with init_scope():  # an eager table, also when set while a graph is being traced
            init = KeyValueTensorInitializer(convert_to_tensor(keys, kd),
                                             convert_to_tensor(values, vd), kd, vd)
            self._table = StaticHashTable(init, self._default_value())

    def _default_value(self):
        if self.invert:
            return self._key(self.oov_token) if self._is_string else self.oov_token
        if self.num_oov_indices == 1:
            return self._oov_start_index()
        return -1

    def _record_vocabulary_size(self):
        if self.output_mode == "int" or self.pad_to_max_tokens:
            self._frozen_vocab_size = self.vocabulary_size()
            return
        new = self.vocabulary_size()
        if self._frozen_vocab_size is not None and self.built and new != self._frozen_vocab_size:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                "the vocabulary size cannot be changed after the layer is called. Old vocab "
                f"size is {self._frozen_vocab_size}, new vocab size is {new}")
        self._frozen_vocab_size = new

    # -- adapt ----------------------------------------------------------------------------
    def adapt(self, data, steps=None):
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static "
                             "vocabulary via `vocabulary` argument or `set_vocabulary()` method.")
        counts, doc_counts, num_docs = collections.Counter(), collections.Counter(), 0
        if hasattr(data, "element_spec") or (hasattr(data, "__iter__") and not isinstance(
                data, (list, tuple, np.ndarray)) and not hasattr(data, "numpy")
                and not isinstance(data, RaggedTensor)):
            batches = data.take(steps) if steps is not None and hasattr(data, "take") else data
            iterable = True
        else:
            batches, iterable = [data], False
        for i, batch in enumerate(batches):
            if iterable and steps is not None and i >= steps:
                break
            batch = self._adapt_preprocess(batch)
            rows = self._rows(batch, expand_rank1=not iterable)
            for row in rows:
                row = [self._key(t) for t in row]
                counts.update(row)
                if self.output_mode == "tf_idf":
                    doc_counts.update(set(row))
            num_docs += len(rows)
        self._finalize(counts, doc_counts, num_docs)

    def _adapt_preprocess(self, batch):
        return batch

    def _rows(self, batch, expand_rank1):
        """A batch as a list of documents (lists of tokens), as update_state ranks it."""
        if isinstance(batch, RaggedTensor):
            return [np.asarray(r).ravel().tolist() for r in batch.to_list()]
        arr = to_numpy_tokens(batch)
        if arr.ndim == 0:
            arr = arr.reshape(1, 1)
        elif arr.ndim == 1:
            arr = arr.reshape(-1, 1) if expand_rank1 else arr.reshape(1, -1)
        return [r.ravel().tolist() for r in arr.reshape(arr.shape[0], -1)]

    def _finalize(self, counts, doc_counts, num_docs):
        if not counts:
            return
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(self._key(special), None)
        ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        if self.max_tokens:
            ordered = ordered[:self.max_tokens - self._token_start_index()]
        tokens = [t for t, _ in ordered]
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            df = np.array([doc_counts[t] for t in tokens], np.float64)
            idf = np.log(1 + num_docs / (1 + df)).astype(np.float32)
            idf = np.pad(idf, (self._token_start_index(), 0), constant_values=idf.mean())
            if self.pad_to_max_tokens and self.max_tokens is not None:
                idf = np.pad(idf, (0, self.max_tokens - idf.size))
            self.idf_weights_const = idf
        self._record_vocabulary_size()

    # -- call -----------------------------------------------------------------------------
    def _lookup_dense(self, inputs):
        key_dtype = dtypes.int64 if self.invert else (
            dtypes.string if self._is_string else dtypes.int64)
        inputs = cast(inputs, key_dtype) if key_dtype != dtypes.string else inputs
        lookups = self._table.lookup(inputs)
        if self.mask_token is not None:
            mask_key = 0 if self.invert else self._key(self.mask_token)
            mask_value = self._key(self.mask_token) if self.invert else (
                0 if self.output_mode == "int" else _INT64_MAX)
            vd = (dtypes.string if self._is_string else dtypes.int64) if self.invert \
                else dtypes.int64
            lookups = arithmetic.where(comparison.equal(inputs, convert_to_tensor(
                mask_key, key_dtype)), convert_to_tensor(mask_value, vd), lookups)
        if self.invert:
            return lookups
        if self.num_oov_indices == 0:
            if context.executing_eagerly():
                found = np.asarray(lookups.numpy())
                if (found == -1).any():
                    oov = to_numpy_tokens(inputs)[found == -1]
                    raise errors.InvalidArgumentError(
                        None, None, "When `num_oov_indices=0` all inputs should be in "
                        f"vocabulary, found OOV values {oov}, consider setting "
                        "`num_oov_indices=1`.")
            else:  # in a graph: an Assert the result depends on
                ok = reduction.reduce_all(comparison.not_equal(
                    lookups, convert_to_tensor(-1, dtypes.int64)))
                check = Assert(ok, [convert_to_tensor(
                    "When `num_oov_indices=0` all inputs should be in vocabulary, found OOV "
                    "values, consider setting `num_oov_indices=1`.")])
                with control_dependencies([check]):
                    lookups = identity(lookups)
        elif self.num_oov_indices > 1:
            if not self._is_string and self.oov_method != "farmhash":
                oov = arithmetic.floormod(inputs, convert_to_tensor(self.num_oov_indices,
                                                                    dtypes.int64))
            else:
                hashed = inputs if self._is_string else as_string(inputs)
                if self.salt is not None:
                    oov = string_to_hash_bucket_strong(hashed, self.num_oov_indices, self.salt)
                else:
                    oov = string_to_hash_bucket_fast(hashed, self.num_oov_indices)
            oov = arithmetic.add(oov, convert_to_tensor(self._oov_start_index(), dtypes.int64))
            lookups = arithmetic.where(comparison.equal(
                lookups, convert_to_tensor(-1, dtypes.int64)), oov, lookups)
        return lookups

    def call(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens \
                and self._frozen_vocab_size is None:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                "you must set the layer's vocabulary before calling it. Either pass a "
                "`vocabulary` argument to the layer, or call `adapt` with some sample data.")
        if isinstance(inputs, RaggedTensor):
            lookups = inputs.with_flat_values(self._lookup_dense(inputs.flat_values))
            if self.output_mode == "int":
                return lookups
            # rows padded with an id the encoding drops
            return self._encode(lookups.to_tensor(default_value=_INT64_MAX))
        if isinstance(inputs, SparseTensor):
            lookups = SparseTensor(inputs.indices, self._lookup_dense(inputs.values),
                                   inputs.dense_shape)
            if self.output_mode == "int":
                return lookups
            return self._encode(sparse_tensor_to_dense(lookups, default_value=_INT64_MAX))
        inputs = convert_to_tensor(inputs)
        rank0 = inputs.shape.rank == 0
        if rank0:
            inputs = expand_dims(inputs, -1)
        lookups = self._lookup_dense(inputs)
        if self.output_mode == "int":
            return squeeze(lookups, -1) if rank0 else lookups
        return self._encode(lookups)

    def _encode(self, lookups):
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        if self.output_mode == "tf_idf":
            out = encode_categorical(lookups, "count", depth, dtypes.float32)
            return arithmetic.multiply(out, convert_to_tensor(self.idf_weights_const))
        return encode_categorical(lookups, self.output_mode, depth, dtypes.int64)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        return (input_shape[0], depth)

    def get_config(self):
        def listify(x):
            if hasattr(x, "numpy"):
                x = x.numpy()
            if isinstance(x, np.ndarray):
                x = x.tolist()
            return x
        return {**super().get_config(),
                "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
                "mask_token": self.mask_token, "output_mode": self.output_mode,
                "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
                "vocabulary_dtype": self.vocabulary_dtype,
                "idf_weights": listify(self.input_idf_weights),
                "vocabulary": listify(self.input_vocabulary),
                "vocabulary_size": self._frozen_vocab_size,
                "oov_method": self.oov_method, "salt": self.salt}

    # .keras assets: the vocabulary as Keras writes it (assets/vocabulary.txt)
    def save_assets(self, dir_path):
        if self.input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt"), "w") as f:
            f.write("\n".join(str(w) for w in self.get_vocabulary(include_special_tokens=True)))

    def load_assets(self, dir_path):
        if self.input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt")) as f:
            lines = f.read().splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        values = lines if self._is_string else [int(v) for v in lines]
        self._has_input_vocabulary = False
        self.set_vocabulary(values, idf_weights=self.idf_weights_const
                            if self.output_mode == "tf_idf" else None)


@keras_export("keras.layers.StringLookup")
class StringLookup(IndexLookup):
    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 pad_to_max_tokens=False, sparse=False, encoding="utf-8", name=None, salt=None,
                 **kwargs):
        self.encoding = encoding
        kwargs.pop("vocabulary_dtype", None)
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         salt=salt, vocabulary_dtype="string", **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["vocabulary_dtype"]
        return {**config, "encoding": self.encoding}


@keras_export("keras.layers.IntegerLookup")
class IntegerLookup(IndexLookup):
    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False,
                 oov_method="floormod", salt=None, name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError("If `max_tokens` is set for `IntegerLookup`, it must be greater "
                             f"than 1. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("The value of `num_oov_indices` argument for `IntegerLookup` must "
                             f">= 0. Received: num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError("Only `vocabulary_dtype='int64'` is supported at this time. "
                             f"Received: vocabulary_dtype={vocabulary_dtype}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
                         vocabulary_dtype=vocabulary_dtype, idf_weights=idf_weights,
                         invert=invert, output_mode=output_mode, sparse=sparse,
                         pad_to_max_tokens=pad_to_max_tokens, oov_method=oov_method, salt=salt,
                         name=name, **kwargs)

    def call(self, inputs):
        if isinstance(inputs, SparseTensor):  # Keras 3 densifies them first (zeros filled in)
            inputs = sparse_tensor_to_dense(inputs)
        return super().call(inputs)


attach(globals(), index_lookup_docs.DOCS)
