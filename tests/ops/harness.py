"""Table-driven op tests: one `OpCase` per op behaviour drives every check.

A case gives the public function under test, NumPy inputs (float64 for floating inputs),
and a NumPy float64 reference. The harness then checks
- forward values, eager and graph mode, for each dtype in `dtypes` (floating inputs are cast;
  integer/bool inputs are passed as they are), plus float16/bfloat16 with loose tolerances;
- static shape inference: with fully known input shapes the inferred shape must equal the
  computed one; with every dimension unknown it must stay compatible with it;
- gradients in float64: the symbolic gradient (`tf.gradients` in a graph, and the eager
  `GradientTape`) against central finite differences of the op's own forward pass (per
  element for small inputs, along random directions for large ones);
- the full pass pipeline (`check_pipeline`), as a Session runs a graph: with constant inputs
  (constant folding computes the result), with every pass on, and with the oneDNN bfloat16
  mixed-precision rewrite on.

tests/ops/conftest.py turns each module's `CASES` table into these tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

import ndflow  # noqa: F401 - registers ops and kernels
from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.core import dtypes
from ndflow.core.graph import Graph
from ndflow.core.tensor import EagerTensor
from ndflow.ops.apply import convert_to_tensor, numpy_to_torch
from ndflow.ops.array_core import identity, placeholder
from ndflow.passes.pass_config import resolve_pass_config
from ndflow.runtime.compile import compile_plan
from ndflow.runtime.config_proto import ConfigProto, RewriterConfig
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext

LOW_PRECISION_TOL = {dtypes.float16: 1e-2, dtypes.bfloat16: 4e-2}


@dataclass
class OpCase:
    id: str
    fn: Callable                       # (*tensors) -> tensor or list of tensors
    inputs: list                       # NumPy arrays; floating ones are cast per dtype
    ref: Callable                      # (*float64 arrays) -> array or list of arrays
    dtypes: tuple = (dtypes.float32, dtypes.float64)
    low_precision: bool = True         # also run float16 / bfloat16 forward
    grad: bool | tuple = True          # True: all floating inputs; tuple: those indices
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_eps: float = 1e-6
    grad_tol: float = 1e-5
    static_shape_exact: bool = True    # inferred shape equals the real one (known inputs)

    def __str__(self):
        return self.id


def _is_float(a) -> bool:
    return np.asarray(a).dtype.kind == "f"


# Complex inputs follow the run's dtype (float32 -> complex64), and are fed as floats are.
_COMPLEX_OF = {dtypes.float32: dtypes.complex64}


def _input_dtype(a, dtype):
    kind = np.asarray(a).dtype.kind
    if kind == "f":
        return dtype
    if kind == "c":
        return _COMPLEX_OF.get(dtype, dtypes.complex128)
    return dtypes.as_dtype(np.asarray(a).dtype)


def _cast_inputs(case: OpCase, dtype):
    # C-contiguous copies: numeric_gradient perturbs through `reshape(-1)`, which must be a view
    # (a transposed input, e.g. an NCHW test tensor, would otherwise be perturbed in a copy).
    # np.array(order="C"), not np.ascontiguousarray: the latter turns 0-d inputs into shape [1].
    return [np.array(a, np.float64, order="C") if _is_float(a) else np.array(a, order="C")
            for a in case.inputs], [_input_dtype(a, dtype) for a in case.inputs]


def _eager_tensor(arr, dt):
    return EagerTensor(numpy_to_torch(np.asarray(arr), dt), dt)


def _to_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def run_eager(case: OpCase, dtype):
    arrs, dts = _cast_inputs(case, dtype)
    return [_to_numpy(o) for o in _as_list(case.fn(*[_eager_tensor(a, d)
                                                      for a, d in zip(arrs, dts)]))]


def build_graph(case: OpCase, dtype, unknown_dims: bool = False, constants: bool = False):
    """(graph, placeholders, outputs, feed arrays) with floating inputs as placeholders (as
    constants with `constants=True`)."""
    arrs, dts = _cast_inputs(case, dtype)
    g = Graph()
    feeds, feed_vals, args = [], [], []
    with g.as_default():
        for a, d in zip(arrs, dts):
            if (d.is_floating or d.is_complex) and not constants:
                shape = [None] * a.ndim if unknown_dims else list(a.shape)
                p = placeholder(d, shape)
                feeds.append(p)
                feed_vals.append(a)
                args.append(p)
            else:
                args.append(convert_to_tensor(a, d))
        outs = _as_list(case.fn(*args))
    return g, feeds, outs, feed_vals


def run_plan(graph, feeds, fetches, feed_vals):
    plan = Plan(graph, feeds, fetches, [], RuntimeContext())
    vals = [numpy_to_torch(np.asarray(v), p.dtype) for p, v in zip(feeds, feed_vals)]
    return [_to_numpy(o) for o in plan.run(vals)]


def run_graph(case: OpCase, dtype, unknown_dims: bool = False):
    g, feeds, outs, vals = build_graph(case, dtype, unknown_dims)
    return run_plan(g, feeds, outs, vals)


def reference(case: OpCase):
    arrs, _ = _cast_inputs(case, dtypes.float64)
    return [np.asarray(r) for r in _as_list(case.ref(*arrs))]


def _close(actual, expected, rtol, atol, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype == np.bool_ or expected.dtype.kind in "iu":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    elif expected.dtype.kind == "c":
        assert actual.dtype.kind == "c", f"{what}: dtype {actual.dtype}, expected complex"
        np.testing.assert_allclose(actual.astype(np.complex128), expected, rtol=rtol, atol=atol,
                                   err_msg=what)
    else:
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol, atol=atol,
                                   err_msg=what)


def check_forward(case: OpCase) -> None:
    expected = reference(case)
    runs = [(d, case.rtol if d is not dtypes.float32 else max(case.rtol, 1e-5),
             case.atol if d is not dtypes.float32 else max(case.atol, 1e-5))
            for d in case.dtypes]
    if case.low_precision:
        runs += [(d, tol, tol) for d, tol in LOW_PRECISION_TOL.items()]
    for dtype, rtol, atol in runs:
        for mode, runner in (("eager", run_eager), ("graph", run_graph)):
            got = runner(case, dtype)
            assert len(got) == len(expected), f"{case.id}: {len(got)} outputs"
            for i, (a, e) in enumerate(zip(got, expected)):
                _close(a, e, rtol, atol, f"{case.id} {mode} {dtype.name} output {i}")


def check_shapes(case: OpCase) -> None:
    expected = reference(case)
    dtype = case.dtypes[0]
    _, _, outs, _ = build_graph(case, dtype)
    for o, e in zip(outs, expected):
        if case.static_shape_exact:
            assert o.shape.as_list() == list(e.shape), \
                f"{case.id}: inferred {o.shape}, computed {e.shape}"
        else:
            assert o.shape.is_compatible_with(e.shape), f"{case.id}: {o.shape} vs {e.shape}"
    g, feeds, outs, vals = build_graph(case, dtype, unknown_dims=True)
    got = run_plan(g, feeds, outs, vals)
    for o, a in zip(outs, got):
        assert o.shape.is_compatible_with(a.shape), \
            f"{case.id}: inferred {o.shape} with unknown dims, computed {a.shape}"
        _close(a, reference(case)[outs.index(o)], 1e-4, 1e-4, f"{case.id} unknown dims")


def _grad_indices(case: OpCase) -> list:
    floats = [i for i, a in enumerate(case.inputs) if _is_float(a)]
    return floats if case.grad is True else list(case.grad)


# Inputs up to this many elements get their full numeric gradient (one central difference per
# element); larger ones are checked along random unit directions, as jax.test_util.check_grads
# does: d/dt f(x + t v) at 0 must equal <analytic gradient, v>. A wrong gradient entry shows in
# every direction with a non-zero component there, at a cost of 2 evaluations per direction
# instead of 2 per element (conv and pooling cases have hundreds of elements).
FULL_NUMERIC_MAX = 32
DIRECTIONS = 3


@dataclass
class NumericGradient:
    """Central differences of `sum_k w_k . out_k` with respect to one input: the full gradient
    (`directions` None) or its derivatives along the columns of `directions` (size x k)."""
    values: np.ndarray
    directions: np.ndarray | None

    def project(self, analytic: np.ndarray) -> np.ndarray:
        """The analytic gradient in the same form as `values`."""
        analytic = np.asarray(analytic)
        return analytic if self.directions is None else analytic.reshape(-1) @ self.directions


def _weighted_output(case: OpCase, arrs: list, weights: list) -> float:
    sub = OpCase(case.id, case.fn, arrs, case.ref, dtypes=(dtypes.float64,))
    outs = run_eager(sub, dtypes.float64)
    return sum(float(np.sum(o * w)) for o, w in zip(outs, weights))


def numeric_gradient(case: OpCase, weights: list, idx: int) -> NumericGradient:
    """d(sum_k w_k . out_k)/d input[idx] by central differences of the ndflow forward pass."""
    arrs, _ = _cast_inputs(case, dtypes.float64)
    base = arrs[idx]
    if base.size <= FULL_NUMERIC_MAX:
        directions = None
        steps = [(j, None) for j in range(base.size)]
    else:
        rng = np.random.default_rng(1 + idx)
        directions = rng.standard_normal((base.size, DIRECTIONS))
        directions /= np.linalg.norm(directions, axis=0)
        steps = [(None, directions[:, k]) for k in range(DIRECTIONS)]
    values = np.zeros(base.shape if directions is None else DIRECTIONS, dtype=base.dtype)
    for n, (j, v) in enumerate(steps):
        diffs = []
        for sign in (1.0, -1.0):
            pert = [a.copy() for a in arrs]
            if v is None:
                pert[idx].reshape(-1)[j] += sign * case.grad_eps
            else:
                pert[idx] = base + (sign * case.grad_eps * v).reshape(base.shape)
            diffs.append(_weighted_output(case, pert, weights))
        values.reshape(-1)[n] = (diffs[0] - diffs[1]) / (2 * case.grad_eps)
    return NumericGradient(values, directions)


def check_gradients(case: OpCase) -> None:
    if not case.grad:
        return
    rng = np.random.default_rng(0)
    expected = reference(case)
    weights = [rng.uniform(0.5, 1.5, e.shape) if e.dtype.kind == "f" else None
               for e in expected]
    idx = _grad_indices(case)
    numeric = [numeric_gradient(case, [w for w in weights if w is not None], i) for i in idx]
    # Graph mode: tf.gradients with grad_ys = weights.
    g, feeds, outs, vals = build_graph(case, dtypes.float64)
    float_outs = [o for o in outs if o.dtype.is_floating]
    with g.as_default():
        gys = [convert_to_tensor(w) for w in weights if w is not None]
        fed_pos = [i for i, a in enumerate(case.inputs) if np.asarray(a).dtype.kind in "fc"]
        xs = [feeds[fed_pos.index(i)] for i in idx]
        grads = gradients(float_outs, xs, grad_ys=gys)
        # sparse gradients (IndexedSlices of a gather) are compared as their dense sums
        grads = [None if gr is None else convert_to_tensor(gr) for gr in grads]
    for i, (gr, num) in enumerate(zip(grads, numeric)):
        if gr is None:
            assert np.allclose(num.values, 0), \
                f"{case.id}: graph gradient of input {idx[i]} is None"
            continue
        (analytic,) = run_plan(g, feeds, [gr], vals)
        _close(num.project(analytic), num.values, case.grad_tol, case.grad_tol,
               f"{case.id}: graph gradient of input {idx[i]}")
    # Eager mode: GradientTape with output_gradients = weights.
    arrs, dts = _cast_inputs(case, dtypes.float64)
    ins = [_eager_tensor(a, d) for a, d in zip(arrs, dts)]
    with GradientTape() as tape:
        for i in idx:
            tape.watch(ins[i])
        outs = [o for o in _as_list(case.fn(*ins)) if o.dtype.is_floating]
    grads = tape.gradient(outs, [ins[i] for i in idx],
                          output_gradients=[_eager_tensor(w, dtypes.float64)
                                            for w in weights if w is not None])
    for i, (gr, num) in enumerate(zip(grads, numeric)):
        if gr is None:
            assert np.allclose(num.values, 0), \
                f"{case.id}: eager gradient of input {idx[i]} is None"
            continue
        _close(num.project(convert_to_tensor(gr).numpy()), num.values, case.grad_tol,
               case.grad_tol, f"{case.id}: eager gradient of input {idx[i]}")


# -- the full pass pipeline ------------------------------------------------------------------

def pipeline_session_config(bfloat16: bool) -> ConfigProto:
    """Every optimizer on, for graphs of any size; optionally the oneDNN bf16 rewrite."""
    config = ConfigProto()
    rewrite = config.graph_options.rewrite_options
    rewrite.min_graph_nodes = -1
    for toggle in ("constant_folding", "common_subgraph_elimination", "remapping"):
        setattr(rewrite, toggle, RewriterConfig.ON)
    if bfloat16:
        rewrite.auto_mixed_precision_onednn_bfloat16 = RewriterConfig.ON
    return config


def run_pipeline(case: OpCase, dtype, config: ConfigProto, constants: bool = False):
    """The case's outputs computed by a plan compiled, as a Session compiles it, from the
    graph after the pass pipeline; and that optimized graph. The outputs go through Identity
    so that the op itself is not a fetch (fetched nodes are never rewritten)."""
    g, feeds, outs, vals = build_graph(case, dtype, constants=constants)
    with g.as_default():
        fetches = [identity(o) for o in outs]
    plan = compile_plan(g, feeds, fetches, [], resolve_pass_config(config), RuntimeContext())
    fed = [numpy_to_torch(np.asarray(v), p.dtype) for p, v in zip(plan.feeds, vals)]
    return [_to_numpy(o) for o in plan.run(fed)], plan.graph


def converted_to_bfloat16(graph) -> bool:
    return any(op.type == "Cast" and op.name.endswith("AutoMixedPrecision")
               for op in graph.get_operations())


def check_pipeline(case: OpCase) -> None:
    expected = reference(case)
    dtype = case.dtypes[0]
    rtol, atol = max(case.rtol, 1e-5), max(case.atol, 1e-5)
    runs = [("constant inputs", pipeline_session_config(False), True),
            ("all passes", pipeline_session_config(False), False)]
    if case.low_precision and dtype is dtypes.float32:
        runs.append(("bfloat16 rewrite", pipeline_session_config(True), False))
    for what, config, constants in runs:
        got, graph = run_pipeline(case, dtype, config, constants)
        tol = LOW_PRECISION_TOL[dtypes.bfloat16] if converted_to_bfloat16(graph) else None
        assert len(got) == len(expected), f"{case.id}: {len(got)} outputs"
        for i, (a, e) in enumerate(zip(got, expected)):
            _close(a, e, tol or rtol, tol or atol, f"{case.id} {what} {dtype.name} output {i}")
