"""`tf.compat.v1.layers`: with Keras 3 (TF 2.21 without tf_keras) TensorFlow routes it to
Keras' legacy TF1 layers, which Keras 3 does not have, so every name in it is an
AttributeError with TensorFlow's message (its KerasLazyLoader)."""

from __future__ import annotations

from types import ModuleType

from ndflow.core.api_export import tf_export


class _UnavailableWithKeras3(ModuleType):
    """A namespace whose every attribute is TensorFlow's "not available with Keras 3" error."""

    def __getattr__(self, item):
        if item.startswith("__") and item.endswith("__"):
            raise AttributeError(item)   # Python's own probes (__path__, __wrapped__ ...)
        raise AttributeError(f"`{item}` is not available with Keras 3.")

    def __dir__(self):
        return []

    def __repr__(self):
        return "<KerasLazyLoader>"


layers_v1 = tf_export(v1=["layers"])(_UnavailableWithKeras3("ndflow.compat.v1.layers"))
