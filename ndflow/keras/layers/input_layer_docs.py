"""The docstrings of InputLayer and keras.Input (input_layer.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "shape": "the shape of one sample, without the batch axis (a tuple; None entries for\n"
             "        sizes known only at run time).",
    "batch_size": "an optional fixed batch size.",
    "dtype": "the input's dtype (default floatx).",
    "sparse": "whether the input is a `tf.SparseTensor`.",
    "ragged": "must be falsy (ragged inputs are not supported by ndflow's functional\n"
              "        API).",
    "batch_shape": "the full shape, batch axis included (instead of `shape` and\n"
                   "        `batch_size`).",
}


DOCS = docs_with_args(_ARGS, {
    "InputLayer": (
        "The layer behind a functional model's input (what `keras.Input` creates): it holds\n"
        "    the input's batch shape and dtype; calling it returns its input unchanged. A\n"
        "    Sequential model may start with one.",
        ["shape", "batch_size", "dtype", "sparse", "ragged", "batch_shape",
         "input_tensor: an existing KerasTensor to use as the output.",
         "optional: whether the input may be None.", "name: the layer's name.",
         "**kwargs: Keras 2's `input_shape` / `batch_input_shape` (meaning `shape` /\n"
         "        `batch_shape`) and other Layer arguments."],
        """

    Raises:
      ValueError: both `shape` and `batch_shape` (or `batch_size` and `batch_shape`),
        neither, or `ragged=True`."""),
    "Input": (
        "A symbolic input of a functional model: a KerasTensor that layers are called on to\n"
        "    describe the model, before `keras.Model(inputs, outputs)` ties them together.",
        ["shape", "batch_size", "dtype", "sparse", "ragged", "batch_shape",
         "name: the input's name (unique in a model).",
         "tensor: an existing KerasTensor to wrap instead of creating one.",
         "optional: whether the model may be called with None for this input."],
        """

    Returns:
      A KerasTensor.

    Raises:
      ValueError: both `shape` and `batch_shape` (or `batch_size` and `batch_shape`),
        neither, or `ragged=True`.""", """

    Example:

    >>> x = tf.keras.Input(shape=(28, 28, 1))
    >>> x.shape
    (None, 28, 28, 1)"""),
})
