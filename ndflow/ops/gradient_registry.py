"""The user's gradient registrations by name, as TensorFlow's `tf.RegisterGradient` and
`tf.no_gradient`: a gradient function registered under a name serves ops of that type that
have none, and ops built inside `graph.gradient_override_map({"OpType": "Name"})` (the
classic way to swap the gradient of an existing op in a TF1 graph). ndflow's own ops declare
their gradients on their OpDefs (`@OpDef.def_grad`)."""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core import lazy_api
from ndflow.core.api_export import tf_export
from ndflow.ops.op_def import REGISTRY

GRADIENTS: dict[str, Callable | None] = {}   # name -> fn, or None for "not differentiable"


def _check_new(name: str) -> None:
    if name not in REGISTRY:   # an op of a family not used yet is registered all the same
        lazy_api.load_op(name)
    lazy_api.load_gradient(name)
    od = REGISTRY.get(name)
    taken = name in GRADIENTS or (od is not None and (
        od.grad_fn is not None or od.not_differentiable))
    if taken:
        raise KeyError(f"Registering two gradient with name '{name}'! (Previous registration "
                       "was in another module)")


@tf_export("RegisterGradient", v1=["RegisterGradient"])
class RegisterGradient:
    """Decorator: `@tf.RegisterGradient("Name")` registers `fn(op, *grads)` under `Name`."""

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: Callable) -> Callable:
        _check_new(self._op_type)
        GRADIENTS[self._op_type] = f
        return f


@tf_export("no_gradient", v1=["no_gradient", "NoGradient", "NotDifferentiable"])
def no_gradient(op_type: str) -> None:
    """Declares ops of type `op_type` not differentiable (their inputs get no gradient)."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _check_new(op_type)
    GRADIENTS[op_type] = None


def gradient_function(op) -> tuple[bool, Callable | None]:
    """(found, fn) for `op` from the user's registrations: its override name first (set by
    `gradient_override_map`, or TF's `_gradient_op_type` attr, which copies of the op keep),
    then its type; fn None means not differentiable."""
    name = getattr(op, "gradient_override", None)
    if name is None:   # an op of a loaded SavedModel with a saved custom gradient
        attrs = getattr(op, "attrs", None)
        name = attrs.get("_gradient_op_type") if isinstance(attrs, dict) else None
    if name is not None:
        if name not in GRADIENTS:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: "
                              f"{op.type}) under the override name '{name}'.")
        return True, GRADIENTS[name]
    if op.type in GRADIENTS:
        return True, GRADIENTS[op.type]
    return False, None
