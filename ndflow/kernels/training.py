"""ATen kernels for the fused optimizer updates (`ndflow.ops.training`).

A kernel receives the variables as runtime `Resource`s and computes their new values in as
few passes over memory as ATen allows (`add(alpha=)`, `addcmul`, `addcdiv`, `lerp`, `out=`
targets). The targets are the variables' own buffers when nothing else holds them, else new
ones (TF's copy-on-write: `kernels/state.py` `exclusive_value`), so a value read earlier
never changes under its reader. Hyperparameters (lr, momentum, beta powers ...) are host
scalars read once per call; the formulas follow TF's `training_ops.cc` CPU kernels.
"""

from __future__ import annotations

import math

import torch

from ndflow.core import dtypes
from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.kernels import adam_numba, gemm, gemm_epilogue, momentum_numba
from ndflow.kernels.registry import kernel
from ndflow.kernels.state import exclusive_value, update_targets
from ndflow.ops import nn_fused, training


def _shape_str(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _read(res, arg: str, dtype) -> torch.Tensor:
    value = getattr(res, "value", None)
    if not hasattr(res, "value"):
        raise InvalidArgumentError(None, None, f"Input '{arg}' is not a resource variable "
                                   "handle.")
    if value is None:
        raise FailedPreconditionError(
            None, None, f"Could not find variable {res.name}. This could mean that the variable "
            "has been deleted. In TF1, it can also mean the variable is uninitialized.")
    if value.dtype != dtype:
        raise InvalidArgumentError(
            None, None, f"Trying to update variable '{arg}' ({res.name}) with wrong dtype. "
            f"Expected {dtypes.as_dtype(dtype).name} got {dtypes.as_dtype(value.dtype).name}")
    return value


def _check_same(var: torch.Tensor, other: torch.Tensor, arg: str) -> None:
    if var.shape != other.shape:
        raise InvalidArgumentError(None, None, f"var and {arg} do not have the same shape"
                                   f"{_shape_str(var.shape)} {_shape_str(other.shape)}")


def _scalar(t: torch.Tensor, arg: str):
    if t.dim() != 0:
        raise InvalidArgumentError(None, None, f"{arg} is not a scalar: {_shape_str(t.shape)}")
    return t.item()


def grad_where(var: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """`grad` on `var`'s device: an update runs where its variable lives (TensorFlow colocates
    it with the variable), and a gradient made on another device (a GPU step's, all-reduced
    beside CPU variables) is copied there, as TensorFlow's Recv would."""
    return grad if grad.device == var.device else grad.to(var.device)


def n_update_attrs(node) -> tuple:
    """(N, torch dtype, use_nesterov, keras, decay as lists of bools) of a kernel of N
    momentum updates (`_GroupedApplyMomentum`)."""
    a = node.attrs
    return (a["N"], a["T"].torch_dtype, [bool(x) for x in a["use_nesterov"]],
            [bool(x) for x in a["keras"]], [bool(x) for x in a["decay"]])


def scalar_once(t: torch.Tensor, what: str, seen: dict) -> float:
    """A scalar input's value, read once per tensor by a kernel of N updates (which share
    their lr and momentum tensors)."""
    got = seen.get(id(t))
    if got is None:
        got = seen[id(t)] = _scalar(t, what)
    return got


def scalars_once(tensors, what: str, seen: dict) -> list:
    """`scalar_once` of each tensor; one read when all are one tensor (Keras reads its
    learning rate once per variable, each read the same value tensor)."""
    first = tensors[0]
    if all(t is first for t in tensors):
        return [scalar_once(first, what, seen)] * len(tensors)
    return [scalar_once(t, what, seen) for t in tensors]


def _prepare(node, resources: tuple, scalars: tuple, res_vals, scalar_vals, grad, grad_arg):
    """Reads and validates the variables; returns (their tensors, python scalars, the
    tensors to write the new values into, the gradient on the variables' device)."""
    owned = all(exclusive_value(r) for r in res_vals)  # before this frame holds any value
    dtype = node.attrs["T"].torch_dtype
    tensors = [_read(r, name, dtype) for r, name in zip(res_vals, resources)]
    for t, name in zip(tensors[1:], resources[1:]):
        _check_same(tensors[0], t, name)
    nums = [_scalar(v, name) for v, name in zip(scalar_vals, scalars)]
    _check_same(tensors[0], grad, grad_arg)
    return tensors, nums, update_targets(owned, tensors), grad_where(tensors[0], grad)


@kernel(training.ResourceApplyGradientDescent)
def _gradient_descent(node):
    def run(var, alpha, delta):
        (v,), (lr,), (out,), delta = _prepare(
            node, ("var",), ("alpha",), (var,), (alpha,), delta, "delta")
        var.value = torch.add(v, delta, alpha=-lr, out=out)
    return run


@kernel(nn_fused.MatMulApplyGradientDescent)
def _matmul_gradient_descent(node):
    """var -= alpha * op(a) @ op(b): one GEMM accumulating into a copy of the weight (addmm
    with beta 1), the product never written on its own; or, where oneDNN multiplies faster
    than MKL (gemm.library), oneDNN's product and one add."""
    ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])

    def run(var, alpha, a, b):
        a, b = a.t() if ta else a, b.t() if tb else b
        owned = exclusive_value(var)
        v = _read(var, "var", node.attrs["T"].torch_dtype)
        lr = _scalar(alpha, "alpha")
        if tuple(v.shape) != (a.shape[0], b.shape[1]):
            raise InvalidArgumentError(None, None, f"var and delta do not have the same shape"
                                       f"{_shape_str(v.shape)} "
                                       f"{_shape_str((a.shape[0], b.shape[1]))}")
        (out,) = update_targets(owned, [v])
        if gemm.library(a, b.t()) == gemm.ONEDNN:
            var.value = torch.add(v, gemm.linear(a, b.t()), alpha=-lr, out=out)
            return
        var.value = torch.addmm(v, a, b, alpha=-lr, out=out)
    return run


@kernel(nn_fused.MatMulApplyMomentum)
def _matmul_momentum(node):
    """The momentum update of grad = op(a) @ op(b) + scale * var with the product accumulated
    into the accumulator by the GEMM (`beta` = momentum; Keras: alpha = -lr), then one pass
    adding the L2 term to the accumulator and the accumulator to the weight."""
    ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])
    keras = bool(node.attrs["keras"])
    dtype = node.attrs["T"].torch_dtype

    def run(var, accum, lr, a_in, b_in, scale, momentum):
        a, b = a_in.t() if ta else a_in, b_in.t() if tb else b_in
        owned = exclusive_value(var) and exclusive_value(accum)
        v, acc = _read(var, "var", dtype), _read(accum, "accum", dtype)
        _check_same(v, acc, "accum")
        if tuple(v.shape) != (a.shape[0], b.shape[1]):
            raise InvalidArgumentError(None, None, f"var and grad do not have the same shape"
                                       f"{_shape_str(v.shape)} "
                                       f"{_shape_str((a.shape[0], b.shape[1]))}")
        lr, s, mu = _scalar(lr, "lr"), _scalar(scale, "scale"), _scalar(momentum, "momentum")
        v_out, a_out = update_targets(owned, [v, acc])
        if gemm.library(a, b.t()) == gemm.ONEDNN:
            # oneDNN's product beats MKL's by more than finishing MKL's blocks in cache saves
            _apply_momentum(var, accum, gemm.linear(a, b.t()), [v, acc], [v_out, a_out], s, lr,
                            mu, False, keras)
            return
        # Keras: accum * mu - lr * ab; TF: accum * mu + ab
        alpha = -lr if keras else 1.0
        decay, step = (-lr * s, 1.0) if keras else (s, -lr)
        if s and a_out is acc and gemm_epilogue.matmul_apply_accumulated(
                a_in, b_in, ta, tb, acc, v, v_out, alpha, mu, decay, step):
            var.value, accum.value = v_out, a_out   # each block updated as it was computed
            return
        torch.addmm(acc, a, b, beta=mu, alpha=alpha, out=a_out)
        if s and one_pass(v, a_out) and v_out.is_contiguous():
            momentum_numba.apply_accumulated(v, a_out, v_out, decay, step)
        else:
            if s:
                a_out.add_(v, alpha=decay)
            torch.add(v, a_out, alpha=step, out=v_out)
        var.value, accum.value = v_out, a_out
    return run


_ONE_PASS_MIN = 1 << 14  # elements from which a variable's update is worth its own launch


def one_pass(v: torch.Tensor, a: torch.Tensor) -> bool:
    """Whether a momentum update runs as one numba pass over grad, var and accum
    (kernels/momentum_numba.py: 5 passes over memory instead of ATen's 6): contiguous float32
    CPU variables of any size, so that an update rounds the same whether it runs alone or
    with others (`_GroupedApplyMomentum`)."""
    return momentum_numba.applies(v) and v.is_contiguous() and a.is_contiguous()


def momentum_values(grad, tensors, outs, scale: float, lr: float, mu: float, nesterov: bool,
                    keras: bool) -> tuple:
    """The new (var, accum) of TF's (accum = accum * mu + g; var -= lr * accum) or, with
    `keras`, Keras' (accum = accum * mu - lr * g; var += accum) momentum update of g = grad +
    scale * var, written into `outs` (the variables' own buffers, or new ones): one numba
    pass on large float32 CPU variables, else ATen in as few passes as it allows."""
    (v, a), (v_out, a_out) = tensors, outs
    if one_pass(v, a):
        momentum_numba.update(grad, v, a, v_out, a_out, scale, lr, mu, nesterov, keras)
        return v_out, a_out
    # var * scale rounded, then the sum: the unfused AddN(grad, Mul(var, scale)) (ATen's add
    # with alpha would round once, a fused multiply-add, and differ in the last bit)
    g = torch.mul(v, scale).add_(grad) if scale else grad
    if keras:
        a = torch.mul(a, mu, out=a_out).add_(g, alpha=-lr)     # accum * momentum - lr * g
        if nesterov:                                            # var += accum * mu - lr * g
            v = torch.add(v, a, alpha=mu, out=v_out).add_(g, alpha=-lr)
        else:
            v = torch.add(v, a, out=v_out)
    else:
        a = torch.add(g, a, alpha=mu, out=a_out)               # accum * momentum + g
        step = torch.add(g, a, alpha=mu) if nesterov else a
        v = torch.add(v, step, alpha=-lr, out=v_out)           # var -= lr * step
    return v, a


def _apply_momentum(var, accum, grad, tensors, outs, scale: float, lr: float, mu: float,
                    nesterov: bool, keras: bool) -> None:
    """`momentum_values` stored into the variables."""
    var.value, accum.value = momentum_values(grad, tensors, outs, scale, lr, mu, nesterov,
                                             keras)


def _momentum_kernel(node, keras: bool):
    nesterov = node.attrs["use_nesterov"]

    def run(var, accum, lr, grad, momentum):
        tensors, (lr, mu), outs, grad = _prepare(
            node, ("var", "accum"), ("lr", "momentum"), (var, accum), (lr, momentum), grad,
            "grad")
        _apply_momentum(var, accum, grad, tensors, outs, 0.0, lr, mu, nesterov, keras)
    return run


@kernel(training.ResourceApplyMomentum)
def _momentum(node):
    return _momentum_kernel(node, keras=False)


@kernel(training.ResourceApplyKerasMomentum)
def _keras_momentum(node):
    return _momentum_kernel(node, keras=True)


@kernel(nn_fused.ResourceApplyMomentumWithDecay)
def _momentum_with_decay(node):
    """(Keras) momentum on grad + scale * var (the remapper's fusion of an L2 term)."""
    nesterov, keras = node.attrs["use_nesterov"], node.attrs["keras"]

    def run(var, accum, lr, grad, scale, momentum):
        tensors, (lr, s, mu), outs, grad = _prepare(
            node, ("var", "accum"), ("lr", "scale", "momentum"), (var, accum),
            (lr, scale, momentum), grad, "grad")
        _apply_momentum(var, accum, grad, tensors, outs, s, lr, mu, nesterov, keras)
    return run


@kernel(nn_fused.ResourceApplyMomentumWithCastDecay)
def _momentum_with_cast_decay(node):
    """(Keras) momentum on T(Tgrad(Tgrad(scale * var) + grad)): one numba pass for a float32
    CPU variable with a bfloat16 gradient, else the unfused ops' ATen forms (Mul, Cast, the
    16-bit add, Cast), which round the same."""
    nesterov, keras = node.attrs["use_nesterov"], node.attrs["keras"]
    narrow = node.attrs["Tgrad"].torch_dtype

    def run(var, accum, lr, grad, scale, momentum):
        tensors, (lr, s, mu), outs, grad = _prepare(
            node, ("var", "accum"), ("lr", "scale", "momentum"), (var, accum),
            (lr, scale, momentum), grad, "grad")
        (v, a), (v_out, a_out) = tensors, outs
        if narrow == torch.bfloat16 and one_pass(v, a) and grad.is_contiguous():
            momentum_numba.update_bf16_decay(grad, v, a, v_out, a_out, s, lr, mu, nesterov,
                                             keras)
            var.value, accum.value = v_out, a_out
            return
        g = _cast_decayed(grad, v, s, narrow)
        _apply_momentum(var, accum, g, tensors, outs, 0.0, lr, mu, nesterov, keras)
    return run


@kernel(nn_fused.CastDecayedGradient)
def _cast_decayed_gradient(node):
    """T(Tgrad(Tgrad(x * scale) + grad)): numba's pass for a bfloat16 grad and a float32 CPU
    x, else the unfused ops' ATen forms, which round the same."""
    narrow = node.attrs["Tgrad"].torch_dtype

    def run(grad, x, scale):
        s = _scalar(scale, "scale")
        if (narrow == torch.bfloat16 and momentum_numba.applies(x) and grad.shape == x.shape
                and grad.device == x.device):
            return momentum_numba.bf16_decayed_gradient(grad, x, s)
        return _cast_decayed(grad, x, s, narrow)
    return run


def _cast_decayed(grad, x, s: float, narrow: torch.dtype) -> torch.Tensor:
    """T(Tgrad(Tgrad(x * s) + grad)) by ATen: the unfused Mul, Cast, 16-bit add and Cast."""
    return torch.mul(x, s).to(narrow).add_(grad).to(x.dtype)


_ADAM_SCALARS = ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")
def one_pass_adam(w, m, v, grad, nesterov: bool) -> bool:
    """Whether an Adam update runs Adam's one-pass kernel (adam_numba: contiguous float32
    CPU tensors, not Nesterov), alone or in _GroupedApplyAdam's launch: both must give one
    variable the same bits, so both take it whatever the size (ATen's seven calls cost a
    small variable ~85 us, the kernel ~10)."""
    return (not nesterov and adam_numba.applies(w) and grad.dtype == w.dtype
            and grad.device == w.device and all(t.is_contiguous() for t in (w, m, v)))


def _adam_moments(m, v, grad, beta1: float, beta2: float, m_out, v_out):
    m = torch.lerp(m, grad, 1.0 - beta1, out=m_out)           # m + (g - m) * (1 - beta1)
    v = torch.mul(v, beta2, out=v_out).addcmul_(grad, grad, value=1.0 - beta2)
    return m, v


def adam_alpha(b1p: float, b2p: float, lr: float) -> float:
    """Adam's step size lr * sqrt(1 - beta2^t) / (1 - beta1^t)."""
    return lr * math.sqrt(1.0 - b2p) / (1.0 - b1p)


def adam_params(scalars) -> tuple:
    """(c1, c2, alpha, eps), adam_numba's parameters, from beta1_power, beta2_power, lr,
    beta1, beta2, epsilon: m += (g - m) c1; v += (g^2 - v) c2; var -= alpha m / (sqrt(v) +
    eps)."""
    b1p, b2p, lr, b1, b2, eps = scalars
    return 1.0 - b1, 1.0 - b2, adam_alpha(b1p, b2p, lr), eps


def adam_values(grad, tensors, outs, scalars, nesterov: bool) -> tuple:
    """The new (var, m, v) of an Adam update, written into `outs` (the variables' own
    buffers, or new ones); `scalars`: beta1_power, beta2_power, lr, beta1, beta2, epsilon."""
    (w, m_, v_), (w_out, m_out, v_out) = tensors, outs
    b1p, b2p, lr, b1, b2, eps = scalars
    if one_pass_adam(w, m_, v_, grad, nesterov):
        adam_numba.update_dense(w, m_, v_, outs, grad, *adam_params(scalars))
        return w_out, m_out, v_out
    m_, v_ = _adam_moments(m_, v_, grad, b1, b2, m_out, v_out)
    denom = torch.sqrt(v_).add_(eps)
    num = torch.mul(grad, 1.0 - b1).add_(m_, alpha=b1) if nesterov else m_
    return torch.addcdiv(w, num, denom, value=-adam_alpha(b1p, b2p, lr), out=w_out), m_, v_


@kernel(training.ResourceApplyAdam)
def _adam(node):
    nesterov = node.attrs["use_nesterov"]

    def run(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
        tensors, scalars, outs, grad = _prepare(
            node, ("var", "m", "v"), _ADAM_SCALARS, (var, m, v),
            (beta1_power, beta2_power, lr, beta1, beta2, epsilon), grad, "grad")
        var.value, m.value, v.value = adam_values(grad, tensors, outs, scalars, nesterov)
    return run


@kernel(training.ResourceApplyAdamWithAmsgrad)
def _adam_amsgrad(node):
    def run(var, m, v, vhat, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
        (w, m_, v_, vh), (b1p, b2p, lr, b1, b2, eps), outs, grad = _prepare(
            node, ("var", "m", "v", "vhat"), _ADAM_SCALARS, (var, m, v, vhat),
            (beta1_power, beta2_power, lr, beta1, beta2, epsilon), grad, "grad")
        alpha = adam_alpha(b1p, b2p, lr)
        m_, v_ = _adam_moments(m_, v_, grad, b1, b2, outs[1], outs[2])
        vh = torch.maximum(vh, v_, out=outs[3])
        denom = torch.sqrt(vh).add_(eps)
        m.value, v.value, vhat.value = m_, v_, vh
        var.value = torch.addcdiv(w, m_, denom, value=-alpha, out=outs[0])
    return run


_RMS_SCALARS = ("lr", "rho", "momentum", "epsilon")


@kernel(training.ResourceApplyRMSProp)
def _rms_prop(node):
    def run(var, ms, mom, lr, rho, momentum, epsilon, grad):
        (w, ms_, mom_), (lr, rho, mu, eps), (w_out, ms_out, mom_out), grad = _prepare(
            node, ("var", "ms", "mom"), _RMS_SCALARS, (var, ms, mom),
            (lr, rho, momentum, epsilon), grad, "grad")
        ms_ = torch.mul(ms_, rho, out=ms_out).addcmul_(grad, grad, value=1.0 - rho)
        denom = torch.add(ms_, eps).sqrt_()
        mom_ = torch.mul(mom_, mu, out=mom_out).addcdiv_(grad, denom, value=lr)
        ms.value, mom.value = ms_, mom_
        var.value = torch.sub(w, mom_, out=w_out)
    return run


@kernel(training.ResourceApplyCenteredRMSProp)
def _centered_rms_prop(node):
    def run(var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
        (w, mg_, ms_, mom_), (lr, rho, mu, eps), outs, grad = _prepare(
            node, ("var", "mg", "ms", "mom"), _RMS_SCALARS, (var, mg, ms, mom),
            (lr, rho, momentum, epsilon), grad, "grad")
        mg_ = torch.lerp(mg_, grad, 1.0 - rho, out=outs[1])
        ms_ = torch.mul(ms_, rho, out=outs[2]).addcmul_(grad, grad, value=1.0 - rho)
        denom = torch.addcmul(ms_, mg_, mg_, value=-1.0).add_(eps).sqrt_()
        mom_ = torch.mul(mom_, mu, out=outs[3]).addcdiv_(grad, denom, value=lr)
        mg.value, ms.value, mom.value = mg_, ms_, mom_
        var.value = torch.sub(w, mom_, out=outs[0])
    return run
