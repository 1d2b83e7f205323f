"""Keras 3's CategoryEncoding (integer ids to one-hot, multi-hot or count vectors of
`num_tokens`), and the encoding it shares with StringLookup/IntegerLookup/TextVectorization.
Ids outside [0, depth) encode to nothing (the lookups map their mask to int64 max for that)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims, reshape
from ndflow.ops.array_gather import one_hot
from ndflow.ops.cast import cast
from ndflow.ops.histogram import DenseBincount
from ndflow.ops.sparse_api import from_dense

_BINCOUNT_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def encode_categorical(inputs, output_mode, depth, dtype, count_weights=None):
    """Keras' encode_categorical_inputs: rank 0 becomes one sample; `one_hot` drops a trailing
    1 dimension; `multi_hot`/`count` reduce a rank-2 batch over its ids (a rank-1 input is one
    sample)."""
    inputs = convert_to_tensor(inputs)
    if output_mode == "int":
        return cast(inputs, dtype)
    rank = inputs.shape.rank
    if rank == 0:
        inputs = expand_dims(inputs, -1)
        rank = 1
    dtype = dtypes.as_dtype(dtype)
    if output_mode == "one_hot":
        dims = inputs.shape.as_list()
        if rank > 1 and dims[-1] == 1:
            inputs = reshape(inputs, [-1 if d is None else d for d in dims[:-1]])
        return one_hot(cast(inputs, dtypes.int64), depth, dtype=dtype)
    if rank > 2:
        raise ValueError(f"`{output_mode}` encoding takes inputs of rank <= 2. Received: "
                         f"inputs.shape={tuple(inputs.shape.as_list())}")
    if count_weights is not None:
        dtype = count_weights.dtype
    # TensorFlow's fast path (as Keras' TF backend): DenseBincount per row, ids >= depth dropped
    kernel_dtype = dtype if dtype in _BINCOUNT_DTYPES else dtypes.float32
    weights = convert_to_tensor([], kernel_dtype) if count_weights is None \
        else cast(count_weights, kernel_dtype)
    out = apply_op(DenseBincount, [cast(inputs, dtypes.int64), convert_to_tensor(
        depth, dtypes.int64), weights], {"binary_output": output_mode == "multi_hot"}).outputs[0]
    return out if out.dtype == dtype else cast(out, dtype)


@keras_export("keras.layers.CategoryEncoding")
class CategoryEncoding(Layer):
    """Encodes integer category ids as one-hot, multi-hot or count vectors.

    Ids outside [0, num_tokens) encode to all zeros. A scalar input is one sample; in
    "multi_hot" and "count" modes a 1-D input is one sample and a 2-D input a batch of
    samples, each a list of ids.

    Args:
      num_tokens: the number of categories: the length of the output vectors.
      output_mode: "multi_hot" (1 for each id present; "binary" is accepted as its old
        name), "one_hot" (one vector per id, a trailing axis of 1 replaced) or "count"
        (how often each id occurs, optionally weighted by `count_weights` in `call`).
      sparse: whether to return a `tf.SparseTensor` (not on the functional API's
        KerasTensors).
      **kwargs: Layer arguments (name, dtype: the output dtype, float32 by default).

    Raises:
      ValueError: `num_tokens` is missing or below 1, or an unknown `output_mode`.

    Example:

    >>> layer = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
    >>> layer([[0, 1], [3, 3]]).numpy()
    array([[1., 1., 0., 0.],
           [0., 0., 0., 1.]], dtype=float32)
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens "
                             "is not known beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def call(self, inputs, count_weights=None):
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError("`count_weights` is not used when `output_mode` is not "
                                 f"`'count'`. Received `count_weights={count_weights}`.")
            count_weights = cast(convert_to_tensor(count_weights), self.compute_dtype)
        out = encode_categorical(inputs, self.output_mode, self.num_tokens, self.dtype,
                                 count_weights)
        # sparse=True: the SparseTensor of the encoding's non-zero entries (Keras' bincount)
        return from_dense(out) if self.sparse else out

    def _symbolic_call(self, args, kwargs):
        if self.sparse:   # sparse KerasTensors are not modelled: eager and graph calls only
            raise NotImplementedError("CategoryEncoding(sparse=True) on KerasTensors (the "
                                      "functional API) is not supported by ndflow")
        return super()._symbolic_call(args, kwargs)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_tokens,)
        if self.output_mode == "one_hot":
            if input_shape[-1] != 1 or len(input_shape) == 1:
                return input_shape + (self.num_tokens,)
            return input_shape[:-1] + (self.num_tokens,)
        return input_shape[:-1] + (self.num_tokens,)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode}
