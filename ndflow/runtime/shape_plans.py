"""Plans specialized to the shapes a function is called with (passes/shape_specialization.py).

A function whose arguments have unknown dimensions (a Keras step: the batch is None) runs
its generic plan, whose shape arithmetic costs a Python step per op. Once the same argument
shapes have come `CALLS_BEFORE_SPECIALIZING` times (a training loop, where every batch has
the batch size), a plan compiled for those shapes runs the calls with them: the shape
arithmetic is folded into constants and the passes see static shapes (Transformer
classifier's step: 505 -> 352 ops). At most `MAX_SHAPES` shapes get a plan of their own, and
a function called with more than `MEGAMORPHIC` different shapes stops counting (XLA's
megamorphic cut-off: one called with ever new shapes, unpadded sentences say, keeps its
generic plan instead of compiling for each). A specialization that fails to compile leaves
the generic plan in use for those shapes; the generic plan reports the error if there is one.
"""

from __future__ import annotations

CALLS_BEFORE_SPECIALIZING = 8
MAX_SHAPES = 4
MEGAMORPHIC = 64
_FAILED = object()


class ShapePlans:
    """One function's specialized plans, keyed by the shapes of its dynamic arguments."""

    def __init__(self, inputs: list):
        # the arguments whose static shape leaves something to learn from a call
        self.dynamic = [i for i, t in enumerate(inputs)
                        if t.shape.rank is None or not t.shape.is_fully_defined()]
        self._names = [inputs[i].name for i in self.dynamic]
        self._dtypes = [inputs[i].dtype for i in self.dynamic]
        self._version = None
        self._plans: dict = {}
        self._seen: dict = {}

    def plan_for(self, values: list, version, build):
        """The plan for these argument `values` (ATen tensors), compiled by
        `build(feed_specs)` once their shapes have come often enough; None: the generic."""
        if version != self._version:   # other optimizer options: start again
            self._version, self._plans, self._seen = version, {}, {}
        key = tuple(tuple(values[i].shape) for i in self.dynamic)
        plan = self._plans.get(key)
        if plan is not None:
            return None if plan is _FAILED else plan
        if len(self._seen) > MEGAMORPHIC or len(self._plans) >= MAX_SHAPES:
            return None
        n = self._seen[key] = self._seen.get(key, 0) + 1
        if n < CALLS_BEFORE_SPECIALIZING:
            return None
        specs = {name: (dtype, shape)
                 for name, dtype, shape in zip(self._names, self._dtypes, key)}
        try:
            plan = build(specs)
        except Exception:  # noqa: BLE001 - the generic plan runs these calls and reports
            plan = _FAILED   # whatever error is the user's; a specialization is optional
        self._plans[key] = plan
        return None if plan is _FAILED else plan
