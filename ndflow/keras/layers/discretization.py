"""Keras 3's Discretization: values to bucket ids by sorted `bin_boundaries` (TF's Bucketize:
the count of boundaries <= x), or boundaries learned by `adapt` as Keras does (weighted quantile
summaries of each batch merged and compressed to `epsilon`, then `num_bins` quantiles), so the
learned boundaries equal Keras'."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.category_encoding import encode_categorical
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_search import Bucketize
from ndflow.ops.cast import cast


def _summarize(values, epsilon):
    """Every `step`-th sorted value (step = n * epsilon, at least 1), each weighing `step`."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(values.size * epsilon, 1)
    kept = values[int(step - 1)::int(step)]
    return np.stack([kept, np.ones_like(kept) * step])


def _compress(summary, epsilon):
    """Quantiles at multiples of `epsilon` of the weighted summary (linear interpolation)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum = summary[1].cumsum()
    cum_pct = cum / cum[-1]
    bins = np.interp(percents, cum_pct, summary[0])
    cum = np.interp(percents, cum_pct, cum)
    weights = cum - np.concatenate((np.array([0]), cum[:-1]))
    return np.stack((bins, weights)).astype("float32")


def _merge(a, b, epsilon):
    merged = np.concatenate((a, b), axis=1)
    return _compress(np.take(merged, np.argsort(merged[0]), axis=1), epsilon)


@keras_export("keras.layers.Discretization")
class Discretization(Layer):
    """Buckets continuous values into integer ranges, by given boundaries or ones learned
    with `adapt`.

    A value v falls into bucket i when `bin_boundaries[i - 1] <= v < bin_boundaries[i]`;
    values below the first boundary go to bucket 0, above the last to
    `len(bin_boundaries)`.

    Args:
      bin_boundaries: a sorted list of boundaries (then `adapt` is not used).
      num_bins: the number of buckets `adapt` should learn, with boundaries at
        approximate quantiles of the data (given instead of `bin_boundaries`).
      epsilon: the quantile approximation error of `adapt` (smaller is more exact and
        more memory).
      output_mode: "int" (the bucket ids, int32) or "one_hot", "multi_hot", "count" (a
        vector per sample, as `CategoryEncoding`, in the layer's float dtype).
      sparse: must be False (sparse outputs are not supported by ndflow).
      dtype: the layer's dtype (the output dtype of the vector modes).
      name: the layer's name.

    Raises:
      ValueError: both or neither of `bin_boundaries` and `num_bins`, a negative
        `num_bins`, an unknown `output_mode`, or `sparse` with "int"; calling the layer
        before it has boundaries.
      NotImplementedError: `sparse=True`.

    Example:

    >>> layer = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0])
    >>> layer([[-0.5, 0.5, 2.0]]).numpy()
    array([[0, 1, 2]], dtype=int32)
    """

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed
    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None):
        super().__init__(name=name, dtype=dtype)
        if sparse and output_mode == "int":
            raise ValueError("`sparse=True` may only be used if `output_mode` is `'one_hot'`, "
                             f"`'multi_hot'`, or `'count'`. Received: sparse={sparse} and "
                             f"output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) is not supported by ndflow")
        modes = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in modes:
            raise ValueError(f"Unknown value for `output_mode`. Allowed values are: {modes}. "
                             f"Received: output_mode={output_mode}")
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse
        self.summary = None if bin_boundaries else np.array([[], []], dtype="float32")

    @property
    def output_dtype(self):
        return self.compute_dtype if self.output_mode != "int" else "int32"

    def adapt(self, data, steps=None):
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized "
                             "with `bin_boundaries`, use `num_bins` instead.")
        self.summary = np.array([[], []], dtype="float32")
        if hasattr(data, "element_spec"):
            batches = data.take(steps) if steps is not None else data
        elif hasattr(data, "__iter__") and not isinstance(data, np.ndarray) \
                and not hasattr(data, "numpy"):
            batches = [b for i, b in enumerate(data) if steps is None or i < steps]
        else:
            batches = [data]
        for batch in batches:
            batch = np.array(batch.numpy() if hasattr(batch, "numpy") else batch, "float32")
            self.summary = _merge(_summarize(batch, self.epsilon), self.summary, self.epsilon)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError(
                "You need to either pass the `bin_boundaries` argument at construction time or "
                "call `adapt(dataset)` before you can start using the `Discretization` layer.")
        x = convert_to_tensor(inputs)
        if x.dtype not in (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64):
            x = cast(x, dtypes.float32)
        ids = apply_op(Bucketize, [x], {"boundaries": [float(b) for b in self.bin_boundaries]}
                       ).outputs[0]
        ids = cast(ids, dtypes.int64)
        return encode_categorical(ids, self.output_mode, len(self.bin_boundaries) + 1,
                                  self.output_dtype)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None \
            else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return tuple(input_shape[:-1]) + (depth,)
            return tuple(input_shape) + (depth,)
        if input_shape and len(input_shape) >= 2:
            return (input_shape[0],) + tuple(input_shape[2:]) + (depth,)
        return (depth,)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            boundaries = config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**config)
