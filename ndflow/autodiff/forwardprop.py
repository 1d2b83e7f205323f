"""`tf.autodiff.ForwardAccumulator`: Jacobian-vector products (forward-mode autodiff).

TensorFlow carries tangents forward op by op through JVP rules. ndflow derives each JVP from
the gradient functions it already has (the "double backprop" trick TensorFlow itself falls
back on for ops without a forward rule): the accumulator records the computation on a
persistent tape; for a target t, the vector-Jacobian product g(u) = J^T u is linear in u, so
J @ tangent = d<g(u), tangent>/du, one more backward pass recorded by a second tape. Results
equal forward mode's up to rounding; every differentiable op is covered.
"""

from __future__ import annotations

from ndflow.autodiff.gradients import UnconnectedGradients
from ndflow.autodiff.tape import GradientTape
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, map_structure
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.reduction import reduce_sum


@tf_export("autodiff.ForwardAccumulator", v1=[])
class ForwardAccumulator:
    """Computes `acc.jvp(target)`: the product of target's Jacobian with respect to `primals`
    and `tangents`, for targets computed inside the `with` block."""

    def __init__(self, primals, tangents):
        self._primals = flatten(primals)
        self._tangents = [convert_to_tensor(t) for t in flatten(tangents)]
        if len(self._primals) != len(self._tangents):
            raise ValueError("Got a different number of primals and tangents: "
                             f"{len(self._primals)} primals and {len(self._tangents)} tangents")
        for p, t in zip(self._primals, self._tangents):
            shape = p.shape
            if not shape.is_compatible_with(t.shape):
                raise ValueError(f"Tangent {t} shape {t.shape} is not compatible with the "
                                 f"shape {shape} of primal {p}")
            if p.dtype.base_dtype != t.dtype:
                raise TypeError(f"Tangent dtype {t.dtype.name} does not match the primal's "
                                f"dtype {p.dtype.base_dtype.name}")
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)
        self._recording = False

    def __enter__(self):
        self._tape.__enter__()
        for p in self._primals:
            self._tape.watch(p)
        self._recording = True
        return self

    def __exit__(self, exc_type, exc, tb):
        self._recording = False
        return self._tape.__exit__(exc_type, exc, tb)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The Jacobian-vector product of each tensor in `primals` (a structure of tensors
        computed inside the accumulator); None (or zeros) where one does not depend on the
        accumulator's primals."""
        unconnected_gradients = UnconnectedGradients(unconnected_gradients)
        return map_structure(lambda t: self._jvp(t, unconnected_gradients), primals)

    def _jvp(self, target, unconnected_gradients):
        target = convert_to_tensor(target)
        if not target.dtype.is_floating and not target.dtype.is_complex:
            return None
        u = zeros_like(target)
        with GradientTape() as outer:
            outer.watch(u)
            vjps = self._tape.gradient(target, self._primals, output_gradients=[u])
            terms = [reduce_sum(g * t) for g, t in zip(vjps, self._tangents) if g is not None]
            dot = terms[0] if terms else None
            for term in terms[1:]:
                dot = dot + term
        result = None if dot is None else outer.gradient(dot, u)
        if result is None and unconnected_gradients is UnconnectedGradients.ZERO:
            return zeros_like(target)
        return result
