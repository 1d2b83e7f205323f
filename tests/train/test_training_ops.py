"""Fused optimizer ops (ResourceApply*): exact TF update rules, eager and planned graphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow  # noqa: F401 - registers ops and kernels
from ndflow.core import dtypes
from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.tensor import EagerTensor
from ndflow.kernels import adam_numba, momentum_numba
from ndflow.kernels import training as training_kernels
from ndflow.ops import training, variables
from ndflow.ops.apply import numpy_to_torch
from ndflow.ops.array_core import placeholder
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import Resource, RuntimeContext
from tests.train import reference as R

RNG = np.random.default_rng(1234)
N = 7
X0 = RNG.normal(size=N)
POS = [RNG.normal(size=N) ** 2 + 0.1 for _ in range(4)]
GRADS = [RNG.normal(size=N) for _ in range(4)]


def _resource(value, dtype=dtypes.float64, name="var"):
    r = Resource(name, dtype, tuple(np.shape(value)), torch.device("cpu"))
    r.value = numpy_to_torch(np.asarray(value), dtype).clone()  # as AssignVariableOp: owned
    return r


def _handle(r):
    return EagerTensor(r, dtypes.resource)


def _t(a):
    return EagerTensor(torch.from_numpy(np.asarray(a)))


def _np(r):
    return r.value.numpy()


# Each case: (name, wrapper, resource initial values, ref fn, per-step scalars, attrs).
# `scalars(t)` gives the scalar inputs of step t (1-based) in the op's argument order with the
# gradient marked by "g"; `ref(state, g, t)` gives the new state.
def _adam_scalars(t):
    return [0.9 ** t, 0.999 ** t, 0.01, 0.9, 0.999, 1e-3, "g"]


CASES = [
    ("gd", training.resource_apply_gradient_descent, [X0], lambda t: [0.1, "g"], {},
     lambda s, g, t: [R.gradient_descent(s[0], 0.1, g)]),
    ("momentum", training.resource_apply_momentum, [X0, POS[0]], lambda t: [0.1, "g", 0.9], {},
     lambda s, g, t: list(R.momentum(*s, 0.1, g, 0.9))),
    ("momentum_nesterov", training.resource_apply_momentum, [X0, POS[0]],
     lambda t: [0.1, "g", 0.9], {"use_nesterov": True},
     lambda s, g, t: list(R.momentum(*s, 0.1, g, 0.9, True))),
    ("keras_momentum", training.resource_apply_keras_momentum, [X0, POS[0]],
     lambda t: [0.1, "g", 0.9], {}, lambda s, g, t: list(R.keras_momentum(*s, 0.1, g, 0.9))),
    ("keras_momentum_nesterov", training.resource_apply_keras_momentum, [X0, POS[0]],
     lambda t: [0.1, "g", 0.9], {"use_nesterov": True},
     lambda s, g, t: list(R.keras_momentum(*s, 0.1, g, 0.9, True))),
    ("adam", training.resource_apply_adam, [X0, POS[0], POS[1]], _adam_scalars, {},
     lambda s, g, t: list(R.adam(*s, 0.9 ** t, 0.999 ** t, 0.01, 0.9, 0.999, 1e-3, g))),
    ("adam_nesterov", training.resource_apply_adam, [X0, POS[0], POS[1]], _adam_scalars,
     {"use_nesterov": True},
     lambda s, g, t: list(R.adam(*s, 0.9 ** t, 0.999 ** t, 0.01, 0.9, 0.999, 1e-3, g, True))),
    ("adam_amsgrad", training.resource_apply_adam_with_amsgrad,
     [X0, POS[0], POS[1], POS[2]], _adam_scalars, {},
     lambda s, g, t: list(R.adam_amsgrad(*s, 0.9 ** t, 0.999 ** t, 0.01, 0.9, 0.999, 1e-3,
                                         g))),
    ("rms_prop", training.resource_apply_rms_prop, [X0, POS[0], POS[1]],
     lambda t: [0.01, 0.9, 0.5, 1e-3, "g"], {},
     lambda s, g, t: list(R.rms_prop(*s, 0.01, 0.9, 0.5, 1e-3, g))),
    ("centered_rms_prop", training.resource_apply_centered_rms_prop,
     [X0, 0.1 * POS[0], POS[1], POS[2]], lambda t: [0.01, 0.9, 0.5, 1e-3, "g"], {},
     lambda s, g, t: list(R.centered_rms_prop(*s, 0.01, 0.9, 0.5, 1e-3, g))),
]


def _args(scalars, g, dtype):
    out = []
    for s in scalars:
        arr = np.asarray(g if isinstance(s, str) else s)
        out.append(EagerTensor(numpy_to_torch(arr, dtype), dtype))
    return out


@pytest.mark.parametrize("dtype", [dtypes.float64, dtypes.float32])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_eager_matches_reference(case, dtype):
    _, fn, init, scalars, attrs, ref = case
    res = [_resource(np.asarray(v, dtype.np_dtype), dtype, f"r{i}") for i, v in enumerate(init)]
    state = [np.asarray(v, np.float64) for v in init]
    old = [r.value for r in res]
    for t, g in enumerate(GRADS, 1):
        op = fn(*[_handle(r) for r in res], *_args(scalars(t), g, dtype), **attrs)
        assert op.outputs == []
        state = ref(state, g, t)
    tol = 1e-12 if dtype is dtypes.float64 else 2e-5
    for r, s in zip(res, state):
        np.testing.assert_allclose(_np(r), s, rtol=tol, atol=tol)
        assert r.value.dtype == dtype.torch_dtype
    # copy-on-write: the tensors the resources held before (still referenced here) were
    # never written
    for o, v in zip(old, init):
        np.testing.assert_array_equal(o.numpy(), np.asarray(v, dtype.np_dtype))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_planned_graph_matches_reference(case):
    _, fn, init, scalars, attrs, ref = case
    g = Graph()
    with g.as_default():
        handles = [placeholder(dtypes.resource, [], name=f"h{i}") for i in range(len(init))]
        grad = placeholder(dtypes.float64, [N], name="grad")
        step = placeholder(dtypes.float64, [], name="t")
        args = []
        for s in scalars(1):
            args.append(grad if isinstance(s, str) else s)
        # beta powers depend on the step: feed them through the `t` placeholder
        if case[3] is _adam_scalars:
            args[0] = step
            b2 = placeholder(dtypes.float64, [], name="b2")
            args[1] = b2
        op = fn(*handles, *args, **attrs)
    assert op.type.startswith("ResourceApply")
    assert op.is_stateful and op.outputs == []
    ctx = RuntimeContext()
    feeds = handles + [grad] + ([step, b2] if case[3] is _adam_scalars else [])
    plan = Plan(g, feeds, [], [op], ctx)
    res = [_resource(v, name=f"r{i}") for i, v in enumerate(init)]
    state = [np.asarray(v, np.float64) for v in init]
    for t, gv in enumerate(GRADS, 1):
        vals = res + [torch.from_numpy(gv)]
        if case[3] is _adam_scalars:
            vals += [torch.tensor(0.9 ** t, dtype=torch.float64),
                     torch.tensor(0.999 ** t, dtype=torch.float64)]
        plan.run(vals)
        state = ref(state, gv, t)
    for r, s in zip(res, state):
        np.testing.assert_allclose(_np(r), s, rtol=1e-12, atol=1e-12)


def test_op_defs_are_tensorflows():
    adam = training.ResourceApplyAdam
    assert [a.name for a in adam.inputs] == ["var", "m", "v", "beta1_power", "beta2_power",
                                             "lr", "beta1", "beta2", "epsilon", "grad"]
    assert [a.dtype for a in adam.inputs[:3]] == [dtypes.resource] * 3
    assert set(adam.attrs) == {"T", "use_locking", "use_nesterov"}
    mom = training.ResourceApplyMomentum
    assert [a.name for a in mom.inputs] == ["var", "accum", "lr", "grad", "momentum"]
    assert [a.name for a in training.ResourceApplyGradientDescent.inputs] == \
        ["var", "alpha", "delta"]
    assert [a.name for a in training.ResourceApplyCenteredRMSProp.inputs] == \
        ["var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"]
    for op in (adam, mom, training.ResourceApplyRMSProp):
        assert op.is_stateful and op.outputs == []


def test_non_scalar_learning_rate_is_rejected():
    r = _resource(X0)
    with pytest.raises(InvalidArgumentError, match=r"alpha is not a scalar: \[1\]"):
        training.resource_apply_gradient_descent(_handle(r), np.array([0.1]), X0)
    g = Graph()
    with g.as_default():
        h = placeholder(dtypes.resource, [])
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            training.resource_apply_gradient_descent(h, np.array([0.1]), X0)


def test_shape_mismatch_is_rejected_with_tf_message():
    r = _resource(X0)
    with pytest.raises(InvalidArgumentError,
                       match=r"var and delta do not have the same shape\[7\] \[3\]"):
        training.resource_apply_gradient_descent(_handle(r), 0.1, _t(np.zeros(3)))
    a = _resource(np.zeros(3), name="accum")
    with pytest.raises(InvalidArgumentError, match="var and accum do not have the same shape"):
        training.resource_apply_momentum(_handle(r), _handle(a), 0.1, _t(X0), 0.9)
    assert np.array_equal(_np(r), X0)  # a failed update leaves the variable untouched


def test_graph_static_shape_check_uses_the_variable_shape():
    g = Graph()
    with g.as_default():
        w = variables.Variable(X0, name="w")
        with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are "
                                             r"7 and 3. Shapes are \[7\] and \[3\]."):
            training.resource_apply_gradient_descent(w.handle, 0.1, np.zeros(3))
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            training.resource_apply_gradient_descent(w, np.array([0.1]), X0)
        op = training.resource_apply_adam(w, w, w, np.float64(0.9), 0.99, 0.1, 0.9, 0.99, 1e-7,
                                          X0)
        assert op.type == "ResourceApplyAdam" and op.get_attr("T") is dtypes.float64


def test_uninitialized_variable_is_a_failed_precondition():
    r = Resource("w", dtypes.float64, (N,), torch.device("cpu"))
    with pytest.raises(FailedPreconditionError, match="Could not find variable w"):
        training.resource_apply_gradient_descent(_handle(r), 0.1, X0)


def test_dtype_mismatch_is_rejected():
    r = _resource(X0.astype(np.float32), dtypes.float32)
    with pytest.raises(InvalidArgumentError, match="wrong dtype. Expected float64 got float32"):
        training.resource_apply_gradient_descent(_handle(r), 0.1, _t(X0))


def test_non_resource_var_is_a_type_error():
    with pytest.raises(TypeError, match="resource"):
        training.resource_apply_gradient_descent(EagerTensor(torch.zeros(2)), 0.1,
                                                 np.zeros(2))


def test_low_precision_variables_keep_their_dtype():
    r = _resource(X0.astype(np.float32), dtypes.bfloat16)
    training.resource_apply_gradient_descent(
        _handle(r), EagerTensor(torch.tensor(0.5, dtype=torch.bfloat16), dtypes.bfloat16),
        EagerTensor(torch.ones(N, dtype=torch.bfloat16), dtypes.bfloat16))
    assert r.value.dtype == torch.bfloat16
    np.testing.assert_allclose(r.value.float().numpy(), X0 - 0.5, rtol=1e-2, atol=1e-2)


# Large float32 momentum updates run as one numba pass (kernels/momentum_numba.py); checked
# against the float64 reference in place and with a read of the variable held (copy-on-write:
# the update goes to new buffers and the held value keeps the old one).
@pytest.mark.parametrize("hold_read", [False, True], ids=["in_place", "copy_on_write"])
@pytest.mark.parametrize("op,ref,nesterov", [
    (training.resource_apply_momentum, R.momentum, False),
    (training.resource_apply_momentum, R.momentum, True),
    (training.resource_apply_keras_momentum, R.keras_momentum, False),
    (training.resource_apply_keras_momentum, R.keras_momentum, True)])
def test_large_float32_momentum_matches_reference(op, ref, nesterov, hold_read):
    n = 2 * training_kernels._ONE_PASS_MIN + 3
    if not momentum_numba.applies(torch.zeros(n)):
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    x0, a0 = RNG.normal(size=n), RNG.normal(size=n)
    var = _resource(x0, dtypes.float32)
    acc = _resource(a0, dtypes.float32, "accum")
    state = [x0.astype(np.float32).astype(np.float64), a0.astype(np.float32).astype(np.float64)]
    for _ in range(3):
        g = RNG.normal(size=n).astype(np.float32)
        held = var.value if hold_read else None
        before = held.clone() if hold_read else None
        op(_handle(var), _handle(acc), _t(np.float32(0.1)), _t(g), _t(np.float32(0.9)),
           use_nesterov=nesterov)
        if hold_read:
            assert var.value is not held and torch.equal(held, before)
        state = list(ref(*state, 0.1, g.astype(np.float64), 0.9, nesterov))
        np.testing.assert_allclose(_np(var), state[0], rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(_np(acc), state[1], rtol=2e-6, atol=2e-6)


# float32 Adam updates run as one numba pass (kernels/adam_numba.py), in place and
# with a read of the variable held (copy-on-write).
@pytest.mark.parametrize("hold_read", [False, True], ids=["in_place", "copy_on_write"])
def test_large_float32_adam_matches_reference(hold_read):
    n = 3 * adam_numba.CHUNK + 5   # several of the kernel's chunks
    if not adam_numba.applies(torch.zeros(n)):
        pytest.skip("numba or ATen's OpenMP launcher is missing")
    x0 = RNG.normal(size=n)
    var = _resource(x0, dtypes.float32)
    m, v = _resource(np.zeros(n), dtypes.float32, "m"), _resource(np.zeros(n), dtypes.float32, "v")
    state = [x0.astype(np.float32).astype(np.float64), np.zeros(n), np.zeros(n)]
    for step in range(1, 4):
        g = RNG.normal(size=n).astype(np.float32)
        held = var.value if hold_read else None
        before = held.clone() if hold_read else None
        scalars = [np.float32(0.9 ** step), np.float32(0.999 ** step), np.float32(0.01),
                   np.float32(0.9), np.float32(0.999), np.float32(1e-7)]
        training.resource_apply_adam(_handle(var), _handle(m), _handle(v),
                                     *(_t(s) for s in scalars), _t(g))
        if hold_read:
            assert var.value is not held and torch.equal(held, before)
        state = list(R.adam(*state, *(float(s) for s in scalars), g.astype(np.float64)))
        for r, want in zip((var, m, v), state):
            np.testing.assert_allclose(_np(r), want, rtol=2e-5, atol=2e-6)
