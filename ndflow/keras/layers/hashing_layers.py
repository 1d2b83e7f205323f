"""Keras 3's Hashing (values to `num_bins` bins by TensorFlow's FarmHash Fingerprint64, or
SipHash under a `salt`; numbers hash through their decimal string, as Keras; a `mask_value`
takes bin 0) and HashedCrossing (the hashed cross of two features, `tf.sparse.cross_hashed`).
Bins equal Keras' bit for bit: the hash kernels are TensorFlow's."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.keras_tensor import is_keras_tensor
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.category_encoding import encode_categorical
from ndflow.ops import arithmetic, comparison
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, reshape, squeeze
from ndflow.ops.cast import cast
from ndflow.ops.sparse_cross import cross_hashed
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.sparse_tensor import sparse_tensor_to_dense as to_dense
from ndflow.ops.string_hash_ops import string_to_hash_bucket_fast, string_to_hash_bucket_strong
from ndflow.ops.string_ops import as_string


def _salt_pair(salt, layer):
    if salt is None:
        return None
    if isinstance(salt, (tuple, list)) and len(salt) == 2:
        return list(salt)
    if isinstance(salt, int):
        return [salt, salt]
    raise ValueError(f"The `salt` argument for `{layer}` can only be a tuple of size 2 "
                     f"integers, or a single integer. Received: salt={salt}.")


@keras_export("keras.layers.Hashing")
class Hashing(Layer):
    """Hashes strings or integers into `num_bins` buckets (a stable hash: the same value
    always lands in the same bucket, across runs).

    Integers and floats (truncated to ints) are hashed by their decimal strings.

    Args:
      num_bins: the number of buckets, including the mask bucket if `mask_value` is set.
      mask_value: optional value that always maps to bucket 0 (the others then hash into
        buckets 1 to num_bins - 1).
      salt: optional int or pair of ints: switches to a keyed (SipHash) hash, slower but
        robust against crafted inputs; without it a fast FarmHash is used.
      output_mode: "int" (bucket ids) or "one_hot", "multi_hot", "count" (vectors of
        `num_bins`, as `CategoryEncoding`).
      sparse: must be False (sparse outputs are not supported by ndflow).
      **kwargs: Layer arguments; `dtype` is the output dtype (int64 for "int" mode,
        float32 otherwise).

    Raises:
      ValueError: `num_bins` missing or not positive, a non-integer dtype in "int" mode,
        an unknown `output_mode`, or `sparse` with "int".
      NotImplementedError: `sparse=True`.

    Example:

    >>> layer = tf.keras.layers.Hashing(num_bins=3)
    >>> ids = layer([["cat"], ["dog"], ["cat"]]).numpy()
    >>> ids.shape, bool(ids[0, 0] == ids[2, 0]), bool(ids.max() < 3)
    ((3, 1), True, True)
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError("The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             f"values. Received: num_bins={num_bins}.")
        if output_mode == "int" and self.dtype not in ("int32", "int64"):
            raise ValueError('When `output_mode="int"`, `dtype` should be an integer type, '
                             f"'int32' or 'in64'. Received: dtype={kwargs['dtype']}")
        modes = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in modes:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{modes}. Received: output_mode={output_mode}")
        if sparse and output_mode == "int":
            raise ValueError('`sparse` may only be true if `output_mode` is `"one_hot"`, '
                             f'`"multi_hot"`, or `"count"`. Received: sparse={sparse} and '
                             f"output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not supported by ndflow")
        self.num_bins = num_bins
        self.mask_value = mask_value
        self.strong_hash = salt is not None
        self.output_mode = output_mode
        self.sparse = sparse
        self.salt = _salt_pair(salt, "Hashing")

    def _hash_values_to_bins(self, values):
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = comparison.equal(values, convert_to_tensor(self.mask_value, values.dtype))
        if values.dtype.is_floating:
            values = cast(values, dtypes.int64)
        if values.dtype != dtypes.string:
            values = as_string(values)
        if self.strong_hash:
            values = string_to_hash_bucket_strong(values, bins, self.salt, name="hash")
        else:
            values = string_to_hash_bucket_fast(values, bins, name="hash")
        if mask is not None:
            values = arithmetic.where(mask, arithmetic.multiply(values, 0),
                                      arithmetic.add(values, 1))
        return values

    def __call__(self, inputs, *args, **kwargs):
        # the inputs are ids or strings: no float casting to the layer's dtype
        if not isinstance(inputs, SparseTensor) and not is_keras_tensor(inputs):
            inputs = convert_to_tensor(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        if isinstance(inputs, SparseTensor):
            if self.output_mode != "int":
                raise NotImplementedError("Hashing of a SparseTensor takes output_mode='int' "
                                          "in ndflow")
            return SparseTensor(inputs.indices, self._hash_values_to_bins(inputs.values),
                                inputs.dense_shape)
        inputs = convert_to_tensor(inputs)
        if self.output_mode == "one_hot" and inputs.shape.rank and inputs.shape[-1] == 1:
            inputs = squeeze(inputs, -1)
        indices = self._hash_values_to_bins(inputs)
        return encode_categorical(indices, self.output_mode, self.num_bins, self.dtype)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_bins,)
        return tuple(input_shape[:-1]) + (self.num_bins,)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins,
                "salt": self.salt, "mask_value": self.mask_value,
                "output_mode": self.output_mode, "sparse": self.sparse}


@keras_export("keras.layers.HashedCrossing")
class HashedCrossing(Layer):
    """Crosses two or more categorical features: each combination of values is hashed into
    one of `num_bins` buckets (a feature for "this city AND this weekday").

    Called on a list or tuple of inputs of one shape: scalars, (batch,) or (batch, 1),
    of strings or integers.

    Args:
      num_bins: the number of buckets.
      output_mode: "int" (bucket ids, int64) or "one_hot" (a vector of `num_bins`).
      sparse: must be False (sparse outputs are not supported by ndflow).
      name: the layer's name.
      dtype: the output dtype (int64 for "int", float32 for "one_hot" by default).
      **kwargs: accepted for Keras' signature.

    Raises:
      ValueError: an unknown `output_mode`; in a call, fewer than two inputs, inputs of
        different ranks, or of rank above 2.
      NotImplementedError: `sparse=True`.

    Example:

    >>> layer = tf.keras.layers.HashedCrossing(num_bins=5)
    >>> layer((tf.constant([1, 2]), tf.constant(["a", "b"]))).shape
    TensorShape([2])
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None,
                 **kwargs):
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype)
        if output_mode not in ("int", "one_hot"):
            raise ValueError(
                "Unknown value for `output_mode`. Allowed values are: ('int', 'one_hot'). "
                f"Received: output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("HashedCrossing(sparse=True) is not supported by ndflow")
        self.num_bins = num_bins
        self.output_mode = output_mode
        self.sparse = sparse

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError("`HashedCrossing` should be called on a list or tuple of at "
                             f"least two inputs. Received: inputs={inputs}")
        return super().__call__([x if is_keras_tensor(x) else convert_to_tensor(x)
                                 for x in inputs], *args, **kwargs)

    def call(self, inputs):
        first = inputs[0].shape.as_list()
        for x in inputs:
            if x.shape.rank != len(first):
                raise ValueError("All `HashedCrossing` inputs should have the same shape. "
                                 f"Received: inputs={inputs}")
        rank = len(first)
        if rank > 2:
            raise ValueError(f"All `HashedCrossing` inputs should have shape `()`, `(batch_size)`"
                             f" or `(batch_size, 1)`. Received: inputs={inputs}")
        if rank < 2:
            inputs = [expand_dims(x, -1) for x in inputs]
        if rank < 1:
            inputs = [expand_dims(x, -1) for x in inputs]
        out = to_dense(cross_hashed(list(inputs), self.num_bins))
        if rank == 1:
            out = squeeze(out, 1)
        elif rank == 0:
            out = reshape(out, [])
        out = encode_categorical(out, self.output_mode, self.num_bins,
                                 dtypes.float32 if self.output_mode != "int" else dtypes.int64)
        return cast(out, self.dtype)

    def compute_output_shape(self, input_shape):
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if first and first[-1] != 1:
            return first + (self.num_bins,)
        return first[:-1] + (self.num_bins,)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins,
                "output_mode": self.output_mode, "sparse": self.sparse}
