"""`tf.compat.v1.enable_tensor_equality` / `disable_tensor_equality`: whether `==` and `!=`
on eager tensors, variables and tensors of functions traced from eager code compare
elementwise (TF2, the default) or by identity (TF1). TF1 graphs compare by identity either
way. Hashing stays by identity in both modes (TF raises TypeError for `hash(t)` while
equality is on; ndflow keeps tensors usable as dict keys)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export

_use_equality = True  # TF's Tensor._USE_EQUALITY (tf2.enabled() by default)


def enabled() -> bool:
    return _use_equality


@tf_export(v1=["enable_tensor_equality"])
def enable_tensor_equality() -> None:
    """Elementwise `==`/`!=` on tensors and variables outside TF1 graphs (TF2's behaviour)."""
    global _use_equality
    _use_equality = True


@tf_export(v1=["disable_tensor_equality"])
def disable_tensor_equality() -> None:
    """`==`/`!=` on tensors and variables compare Python identity (TF1's behaviour)."""
    global _use_equality
    _use_equality = False
