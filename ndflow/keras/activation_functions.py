"""`tf.keras.activations` (Keras 3): the activation functions by name, `get`, `serialize`,
`deserialize`. (Not named activations.py: a module named like a public namespace becomes
that namespace.)

Called on a functional model's KerasTensor, each is the keras.ops function Keras 3 builds it
from (`ops.elu(x, alpha)`, `ops.exp(x)`, ...), so the model gets that op's step; relu with
arguments beyond the default is the registered `activations.relu` step."""

from __future__ import annotations

from ndflow.core import save_context
from ndflow.core.api_export import tf_export
from ndflow.keras import activation_docs, docstrings, serialization_lib
from ndflow.keras.keras_tensor import KerasTensor, op_step
from ndflow.ops import arithmetic, comparison, gelu_fused, math, nn_activation
from ndflow.ops import nn_activation_composite as composite
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


def _export(name: str):
    return tf_export(f"keras.activations.{name}", v1=[f"keras.activations.{name}"])


@_export("relu")
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Rectified linear unit with Keras' options: `x` above `threshold` (0 at or below
    it), capped at `max_value`, minus `negative_slope * relu(threshold - x)`.

    With the defaults it is `max(x, 0)`.

    Args:
      x: a float tensor.
      negative_slope: the slope below the threshold (0: flat, as plain ReLU).
      max_value: optional cap on the output.
      threshold: the value below which the output is 0 (or sloped).

    Returns:
      A tensor of `x`'s shape and dtype.

    Example:

    >>> tf.keras.activations.relu(tf.constant([-2.0, 1.0, 9.0]), max_value=6.0).numpy()
    array([0., 1., 6.], dtype=float32)
    """
    if isinstance(x, KerasTensor):
        if negative_slope == 0.0 and max_value is None and threshold == 0.0:
            return op_step("relu", (x,), {})
        return op_step("activations.relu", (x,), {
            "negative_slope": negative_slope, "max_value": max_value, "threshold": threshold})
    x = convert_to_tensor(x)
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return nn_activation.leaky_relu(x, alpha=negative_slope)
        negative_part = nn_activation.relu(-x + threshold if threshold != 0 else -x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * cast(comparison.greater(x, cast(threshold, x.dtype)), x.dtype)
    elif max_value == 6:
        x = nn_activation.relu6(x)
        clip_max = False
    else:
        x = nn_activation.relu(x)
    if clip_max:
        x = math.clip_by_value(x, cast(0.0, x.dtype), cast(max_value, x.dtype))
    if negative_slope != 0.0:
        x = x - negative_slope * negative_part
    return x


@_export("leaky_relu")
def leaky_relu(x, negative_slope=0.2):
    if isinstance(x, KerasTensor):
        return op_step("leaky_relu", (x,), {"negative_slope": negative_slope})
    return nn_activation.leaky_relu(x, alpha=negative_slope)


@_export("relu6")
def relu6(x):
    if isinstance(x, KerasTensor):
        return op_step("relu6", (x,), {})
    return nn_activation.relu6(x)


@_export("elu")
def elu(x, alpha=1.0):
    if isinstance(x, KerasTensor):
        return op_step("elu", (x,), {"alpha": alpha})
    out = nn_activation.elu(x)
    return out if alpha == 1.0 else arithmetic.select_v2(comparison.greater(x, 0.0), out,
                                                         alpha * out)


@_export("selu")
def selu(x):
    if isinstance(x, KerasTensor):
        return op_step("selu", (x,), {})
    return nn_activation.selu(x)


@_export("gelu")
def gelu(x, approximate=False):
    if isinstance(x, KerasTensor):
        return op_step("gelu", (x,), {"approximate": approximate})
    if not approximate and not save_context.in_save_context():
        x = convert_to_tensor(x)
        if x.dtype.is_floating:
            return gelu_fused.gelu(x)   # one op each way (ops/gelu_fused.py)
    return composite.gelu(x, approximate=approximate)


@_export("silu")
def silu(x):
    if isinstance(x, KerasTensor):
        return op_step("silu", (x,), {})
    return composite.silu(x)


@_export("swish")
def swish(x):
    if isinstance(x, KerasTensor):
        return op_step("silu", (x,), {})
    return composite.silu(x)


def keep_logits(output, logits):
    """Keras 3 caches a softmax's or sigmoid's input on its output: the crossentropy losses
    then compute from these logits, not from the (saturating) probabilities."""
    try:
        output._keras_logits = logits
    except AttributeError:   # not a tensor that takes it
        pass
    return output


@_export("sigmoid")
def sigmoid(x):
    if isinstance(x, KerasTensor):
        return op_step("sigmoid", (x,), {})
    return keep_logits(math.sigmoid(x), x)


@_export("hard_sigmoid")
def hard_sigmoid(x):
    if isinstance(x, KerasTensor):
        return op_step("hard_sigmoid", (x,), {})
    return math.clip_by_value(convert_to_tensor(x) / 6.0 + 0.5, 0.0, 1.0)


@_export("tanh")
def tanh(x):
    if isinstance(x, KerasTensor):
        return op_step("tanh", (x,), {})
    return math.tanh(x)


@_export("softplus")
def softplus(x):
    if isinstance(x, KerasTensor):
        return op_step("softplus", (x,), {})
    return nn_activation.softplus(x)


@_export("softsign")
def softsign(x):
    if isinstance(x, KerasTensor):
        return op_step("softsign", (x,), {})
    return math.softsign(x)


@_export("exponential")
def exponential(x):
    if isinstance(x, KerasTensor):
        return op_step("exp", (x,), {})
    return math.exp(x)


@_export("linear")
def linear(x):
    return x


@_export("softmax")
def softmax(x, axis=-1):
    if isinstance(x, KerasTensor):
        return op_step("softmax", (x,), {"axis": axis})
    return keep_logits(nn_activation.softmax(x, axis=axis), x)


@_export("log_softmax")
def log_softmax(x, axis=-1):
    if isinstance(x, KerasTensor):
        return op_step("log_softmax", (x,), {"axis": axis})
    return nn_activation.log_softmax(x, axis=axis)


_BY_NAME = {f.__name__: f for f in (
    relu, leaky_relu, relu6, elu, selu, gelu, silu, swish, sigmoid, hard_sigmoid, tanh,
    softplus, softsign, exponential, linear, softmax, log_softmax)}


@_export("serialize")
def serialize(activation):
    """The name of a built-in activation function, as configs save it.

    Args:
      activation: one of `keras.activations`' functions.

    Returns:
      Its name, e.g. "relu".

    Raises:
      ValueError: `activation` is not a built-in activation.
    """
    name = getattr(activation, "__name__", None)
    if name in _BY_NAME and _BY_NAME[name] is activation:
        return name
    raise ValueError(f"Could not serialize activation {activation!r}")


def config_name(activation):
    """What a layer's config shows for its activation: the Keras name, else Keras' record of
    a user function (found again through `custom_objects` or its registered name)."""
    try:
        return serialize(activation)
    except ValueError:
        return serialization_lib.function_config(activation)


@_export("deserialize")
def deserialize(config, custom_objects=None):
    if isinstance(config, dict) and config.get("class_name") == "function":
        # Keras' record of a function: its (registered) name; unknown is Keras' TypeError
        name = config.get("config")
        return _BY_NAME.get(name) or serialization_lib.deserialize_function(config,
                                                                            custom_objects)
    fn = (custom_objects or {}).get(config) or serialization_lib.custom_object(config) or \
        (_BY_NAME.get(config) if isinstance(config, str) else None)
    if fn is None:
        raise ValueError(f"Could not interpret activation function identifier: {config}")
    return fn


@_export("get")
def get(identifier):
    """The activation function an identifier stands for (what layers' `activation=`
    arguments accept).

    Args:
      identifier: None (the linear identity), a name ("relu"), Keras' saved record of a
        function, or a callable (returned as it is).

    Returns:
      A callable.

    Raises:
      ValueError: an unknown name or an identifier of another type.

    Example:

    >>> tf.keras.activations.get("relu") is tf.keras.activations.relu
    True
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str) or (isinstance(identifier, dict)
                                       and identifier.get("class_name") == "function"):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")


docstrings.attach(globals(), activation_docs.DOCS)
