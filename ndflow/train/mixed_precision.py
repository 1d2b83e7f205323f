"""`tf.compat.v1.mixed_precision.enable/disable_mixed_precision_graph_rewrite` (TF's
training/experimental/mixed_precision.py and mixed_precision_global_state.py).

`enable_mixed_precision_graph_rewrite(opt, loss_scale='dynamic')`:

1. ValueError if a Keras mixed-precision global policy is set (Keras's `set_global_policy`
   reports it through `set_using_mixed_precision_policy`);
2. wraps `opt` through the registry {optimizer class: (wrapper factory, wrapper class)} —
   `tf.compat.v1.train.Optimizer` -> `MixedPrecisionLossScaleOptimizer` here, Keras registers
   its `LossScaleOptimizer` — with TF's ValueErrors for an already wrapped optimizer and for
   anything else;
3. only then turns the `auto_mixed_precision` graph-optimizer option and the global "graph
   rewrite enabled" flag on (core/optimizer_options.py), so a failed call changes nothing.

`disable_mixed_precision_graph_rewrite()` turns both off (warning when already off); loss
scaling of optimizers already wrapped stays, as in TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core import logging, optimizer_options
from ndflow.core.api_export import tf_export
from ndflow.train.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer
from ndflow.train.optimizer import Optimizer

_REGISTERED_WRAPPER_OPTIMIZER_CLS: dict = {
    Optimizer: (MixedPrecisionLossScaleOptimizer, MixedPrecisionLossScaleOptimizer),
}
_using_mixed_precision_policy = False


def register_loss_scale_wrapper(optimizer_cls: type, wrapper_fn: Callable,
                                wrapper_cls: type | None = None) -> None:
    """Registers how `enable_mixed_precision_graph_rewrite` wraps `optimizer_cls`
    instances: `wrapper_fn(optimizer, loss_scale)` returning a `wrapper_cls`."""
    _REGISTERED_WRAPPER_OPTIMIZER_CLS[optimizer_cls] = (wrapper_fn, wrapper_cls or wrapper_fn)


def set_using_mixed_precision_policy(is_using: bool) -> None:
    """Called by Keras's `set_global_policy`: whether the global policy is a mixed one."""
    global _using_mixed_precision_policy
    _using_mixed_precision_policy = bool(is_using)


def is_using_mixed_precision_policy() -> bool:
    return _using_mixed_precision_policy


def is_mixed_precision_graph_rewrite_enabled() -> bool:
    return optimizer_options.mixed_precision_graph_rewrite_enabled()


def _wrap_optimizer(opt, loss_scale):
    for _, wrapper_cls in _REGISTERED_WRAPPER_OPTIMIZER_CLS.values():
        if isinstance(opt, wrapper_cls):
            raise ValueError(f'"opt" must not already be an instance of a '
                             f"{wrapper_cls.__name__}. `enable_mixed_precision_graph_rewrite` "
                             f"will automatically wrap the optimizer with a "
                             f"{wrapper_cls.__name__}.")
    for optimizer_cls, (wrapper_fn, _) in _REGISTERED_WRAPPER_OPTIMIZER_CLS.items():
        if isinstance(opt, optimizer_cls):
            return wrapper_fn(opt, loss_scale)
    raise ValueError('"opt" must be an instance of a tf.train.Optimizer or a '
                     f"tf.keras.optimizers.Optimizer, but got: {opt}")


@tf_export("train.experimental.enable_mixed_precision_graph_rewrite",
           v1=["mixed_precision.enable_mixed_precision_graph_rewrite",
               "train.experimental.enable_mixed_precision_graph_rewrite"])
def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """Turns the mixed-precision graph rewrite on and returns `opt` wrapped with loss
    scaling (`loss_scale`: "dynamic", a number, or a LossScale)."""
    if _using_mixed_precision_policy:
        raise ValueError(
            "The mixed precision graph rewrite cannot be enabled, because the global Keras "
            "dtype Policy has been set to a mixed precision policy. At most, one of the "
            "following can be called:\n\n"
            "  1. tf.keras.mixed_precision.set_global_policy() with a mixed precision policy "
            "(You called this first)\n\n"
            "  2. tf.train.experimental.enable_mixed_precision_graph_rewrite() (You called "
            "this second)\n"
            "You called both functions, which is an error, because both functions enable you "
            "to use mixed precision. If in doubt which function to use, use the first, as it "
            "supports Eager execution and is more customizable.")
    if optimizer_options.non_mixed_precision_session_created():
        logging.warning("You already have existing Sessions that do not use mixed precision. "
                        "enable_mixed_precision_graph_rewrite() will not affect these "
                        "Sessions.")
    opt = _wrap_optimizer(opt, loss_scale)
    optimizer_options.set_experimental_options({"auto_mixed_precision": True})
    optimizer_options.set_mixed_precision_graph_rewrite_enabled(True)
    return opt


@tf_export("train.experimental.disable_mixed_precision_graph_rewrite",
           v1=["mixed_precision.disable_mixed_precision_graph_rewrite",
               "train.experimental.disable_mixed_precision_graph_rewrite"])
def disable_mixed_precision_graph_rewrite() -> None:
    """Turns the graph rewrite off for graphs run from now on (loss scaling stays)."""
    if not optimizer_options.mixed_precision_graph_rewrite_enabled():
        logging.warning("disable_mixed_precision_graph_rewrite() called when mixed precision "
                        "is already disabled.")
    optimizer_options.set_experimental_options({"auto_mixed_precision": False})
    optimizer_options.set_mixed_precision_graph_rewrite_enabled(False)


__all__ = ["disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite",
           "register_loss_scale_wrapper"]
