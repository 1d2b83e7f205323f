"""`keras.RematScope`: layers created inside it recompute their activations in the backward
pass instead of keeping them (Keras 3's rematerialization modes): "full" (every layer),
"activations" (only a layer's `activation`), "larger_than" (layers whose output has more
elements than `output_size_threshold`, unknown dimensions counted as 1) and
"list_of_layers" (the layers named in `layer_names`). The mode is the one open when the layer
is created; the recomputation is `tf.recompute_grad`'s."""

from __future__ import annotations

import functools
import math
from collections import namedtuple

from ndflow.autodiff.gradient_wrappers import recompute_grad
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten

RematMode = namedtuple("RematMode", ["mode", "output_size_threshold", "layer_names"])
_MODES = {"full", "activations", "larger_than", "list_of_layers", None}
_stack: list = []      # Keras keeps the open scopes process-wide


@keras_export("keras.RematScope")
class RematScope:
    """A context manager making the layers created inside it rematerialize: their
    activations are recomputed in the backward pass instead of kept (less memory, more
    compute).

    Args:
      mode: which layers: "full" (all), "activations" (only activation functions),
        "larger_than" (layers whose output exceeds `output_size_threshold` elements),
        "list_of_layers" (the named ones), or None (no rematerialization).
      output_size_threshold: the size threshold of "larger_than".
      layer_names: the layer names of "list_of_layers".

    Raises:
      ValueError: an unknown `mode`.

    Example:

    >>> with tf.keras.RematScope(mode="full"):
    ...     layer = tf.keras.layers.Dense(2)
    """

    def __init__(self, mode="full", output_size_threshold=1024, layer_names=None):
        if mode not in _MODES:
            raise ValueError(f"Invalid mode '{mode}'. Supported modes are: 'full', "
                             "'activations', 'larger_than', 'list_of_layers', or  None.")
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = layer_names or []

    def __enter__(self):
        _stack.append(self)
        return self

    def __exit__(self, *exc):
        _stack.pop()


def current_mode():
    """The innermost open scope's mode, None outside any."""
    if not _stack:
        return None
    scope = _stack[-1]
    return RematMode(scope.mode, scope.output_size_threshold, scope.layer_names)


def _output_size(layer, args, kwargs) -> int:
    layer._remat_sizing = True     # the spec's own trace of the call runs it plainly
    try:
        spec = layer.compute_output_spec(*args, **kwargs)
    finally:
        layer._remat_sizing = False
    return sum(math.prod(d or 1 for d in t.shape) for t in flatten(spec))


def rematerialized(layer, call, args, kwargs):
    """`call` as the layer's mode has it run: recomputed in the backward pass, with only its
    activation recomputed, or as it is."""
    mode = getattr(layer, "_remat_mode", None)
    if mode is None or mode.mode is None or getattr(layer, "_remat_sizing", False):
        return call
    if mode.mode == "activations":
        if getattr(layer, "activation", None) is None:
            return call

        @functools.wraps(call)
        def with_recomputed_activation(*a, **kw):
            original = layer.activation
            layer.activation = recompute_grad(original)
            try:
                return call(*a, **kw)
            finally:
                layer.activation = original
        return with_recomputed_activation
    if mode.mode == "full" or (mode.mode == "list_of_layers" and layer.name in
                               mode.layer_names):
        return recompute_grad(call)
    if mode.mode == "larger_than" and \
            _output_size(layer, args, kwargs) > mode.output_size_threshold:
        return recompute_grad(call)
    return call
