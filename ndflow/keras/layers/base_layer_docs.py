"""The class docstring of `keras.layers.Layer` (base_layer.py, which stays a readable length
without it; its members' docstrings are inline). Attached by
`ndflow.keras.docstrings.attach`; the example runs as a doctest
(tests/keras/test_keras_docstrings.py)."""

from __future__ import annotations

DOCS = {
    "Layer": """Base class of Keras layers: a callable computation with its own weights (variables)
    and state.

    Subclasses override `build(input_shape)`, which creates the weights with `add_weight`
    on the first call (when the input shape is known), and `call(inputs, training=None,
    mask=None)`, the computation; `get_config` makes them savable.

    Args:
      activity_regularizer: optional penalty on the layer's output, added to `losses`.
      trainable: whether the layer's weights are trained.
      dtype: the layer's dtype or dtype policy (default the global policy: floatx).
      autocast: whether floating-point inputs are cast to the compute dtype.
      name: the layer's name (default the class name in snake case, made unique).
      **kwargs: Keras' `input_shape`, `input_dim`, `batch_size` or `batch_input_shape`
        (for the first layer of a Sequential model).

    Raises:
      ValueError: other keyword arguments.

    Example:

    >>> class Scale(tf.keras.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
    ...     def call(self, inputs):
    ...         return inputs * self.w
    >>> Scale()(tf.ones((2, 3))).shape
    TensorShape([2, 3])
    """,
}
