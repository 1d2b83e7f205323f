"""Kernels of the random ops, drawing from their kernel instances' generator states.

On the CPU, RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt are TF's
PhiloxRandomOp: a Philox state per kernel (`KernelStates.philox`: key `seed`, counter from
`seed2`); each execution of n outputs takes the state's counter and skips it n * 256 calls
ahead (ReserveRandomOutputs(n, 256)), and the values are TF's distributions at that counter
(kernels/philox_numba.py), so seeded programs give TensorFlow's exact numbers. On a GPU they
draw from a torch generator seeded from (seed, seed2): fast, not TF's numbers (copying CPU
draws over would cost more than the op). RandomShuffle is TF's permutation on every device
(kernels/philox_shuffle.py; TF has only a CPU kernel). The other stateful ops (multinomial,
gamma, Poisson, candidate samplers) use torch generators everywhere.

States are keyed by the node (op type, name, attrs) in the current instantiation
(kernels/kernel_states.py: per traced tf.function, per tf.data iterator), else in the runtime
context: a graph node keeps its stream across `Session.run` calls, eager ops with the same
attrs continue one stream (TF's eager kernel cache), and an eager `set_seed` starts a new
generation of streams (`random_seed.generation()`), so seeded sequences replay. Eager ops
seeded by the global seed alone take TF's fresh op seed per call
(`random_seed.eager_op_seeds`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels import philox, philox_numba, philox_shuffle
from ndflow.kernels.kernel_states import current as current_states
from ndflow.kernels.registry import kernel
from ndflow.ops import random, random_gamma_poisson, random_seed, stateful_random, stateless_random

_STATE_STEP = 256  # TF skips a Philox state 256 calls per output element
_PHILOX_KIND = {torch.float16: "half", torch.bfloat16: "bfloat16", torch.float32: "float",
                torch.float64: "double"}


def _state_key(node, kind: str) -> tuple:
    """The node's generator key, less the `set_seed` generation (read at each execution)."""
    attrs = tuple((k, tuple(v) if isinstance(v, list) else v)
                  for k, v in sorted(node.attrs.items()) if not k.startswith("_"))
    return (kind, node.type, node.name, attrs)


def _generator_fn(node):
    """`() -> torch.Generator` for one execution of `node`."""
    ctx, device = node.ctx, node.device
    seed, seed2 = int(node.attrs["seed"]), int(node.attrs["seed2"])
    if node.attrs.get(random_seed.GLOBAL_STREAM_ATTR, False):
        def fresh() -> torch.Generator:   # TF: a new op seed, so a new kernel, per call
            s1, s2 = random_seed.eager_op_seeds(seed)
            return torch.Generator(device=device).manual_seed(
                (s1 * 0x9E3779B97F4A7C15 + s2) % (2**63))
        return fresh
    key = _state_key(node, "torch")
    return lambda: (current_states() or ctx.kernel_states).generator(
        (key, random_seed.generation()), seed, seed2, device)


def _state_fn(node):
    """`() -> GuardedPhilox`: the node's Philox state for one execution: the kernel's, in the
    current function instantiation (kernels/kernel_states.py) or the runtime context; for an
    eager op seeded by the global seed alone, a fresh one at TF's next op seed."""
    ctx = node.ctx
    seed, seed2 = int(node.attrs["seed"]), int(node.attrs["seed2"])
    if node.attrs.get(random_seed.GLOBAL_STREAM_ATTR, False):
        return lambda: philox.GuardedPhilox(*random_seed.eager_op_seeds(seed))
    key = _state_key(node, "philox")
    return lambda: (current_states() or ctx.kernel_states).philox(
        (key, random_seed.generation()), seed, seed2)


def _slot_fn(node, what: str, make):
    """`() -> object`: another state of the node's kernel made by `make()`, living as long as
    its Philox state (`_state_fn`); for an eager op seeded by the global seed alone, a fresh
    one per execution (TF: a new kernel per call)."""
    if node.attrs.get(random_seed.GLOBAL_STREAM_ATTR, False):
        return make
    ctx, key = node.ctx, _state_key(node, what)
    return lambda: (current_states() or ctx.kernel_states).slot(
        (key, random_seed.generation()), make)


def _reserve_fn(node):
    """`reserve(n) -> (key, counter)`: the Philox key and counter of one execution drawing n
    outputs, the node's state skipped n * 256 calls ahead (TF's ReserveRandomOutputs)."""
    state_fn = _state_fn(node)

    def reserve(n: int):
        state = state_fn()
        return state.key, state.reserve(n * _STATE_STEP)
    return reserve


def _dims(shape: torch.Tensor) -> list:
    dims = [int(d) for d in shape.reshape(-1).tolist()]
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(None, None, f"Dimension {min(dims)} must be >= 0")
    return dims


def _stateful_philox(node, kind: str):
    """A PhiloxRandomOp kernel on the CPU: `run(shape, *bounds)`."""
    dtype_attr = node.attrs["Tout" if kind == "uniform_int" else "dtype"]
    dtype, reserve = dtype_attr.torch_dtype, _reserve_fn(node)
    float_kind = _PHILOX_KIND.get(dtype) or ("int64" if dtype == torch.int64 else "int32")
    per_element = bool(node.attrs.get(random_seed.ELEMENT_DRAWS_ATTR, False))

    def draw(n: int, lo: int, hi: int) -> np.ndarray:
        key, counter = reserve(n)
        return philox_numba.generate(kind, float_kind, n, key, counter, lo, hi)

    def run(shape, *bounds):
        dims = _dims(shape)
        lo, hi = _bounds(bounds)
        if per_element and dims:   # a vectorized map: one execution's draw per element
            n = math.prod(dims[1:])
            key, counter = reserve(dims[0] * n)   # the elements' reserves, in one
            out = torch.from_numpy(philox_numba.generate_elements(
                kind, float_kind, dims[0], n, key, counter, lo, hi))
        else:
            out = torch.from_numpy(draw(math.prod(dims), lo, hi))
        if out.dtype != dtype:
            out = out.to(dtype)
        return out if len(dims) == 1 else out.reshape(dims)
    return run


def _bounds(bounds) -> tuple[int, int]:
    if not bounds:
        return 0, 0
    lo, hi = int(bounds[0]), int(bounds[1])
    if lo >= hi:
        raise InvalidArgumentError(None, None, f"Need minval < maxval: {lo} >= {hi}")
    return lo, hi


def _stateful_kernel(op, kind: str, on_device, dtype_attr: str = "dtype") -> None:
    """Registers `op`'s kernel: TF's Philox stream of `kind` on the CPU (_stateful_philox),
    elsewhere on_device(generator_fn, dtype, device) (ATen's generator)."""
    @kernel(op)
    def build(node):
        if node.device.type == "cpu":
            return _stateful_philox(node, kind)
        return on_device(_generator_fn(node), node.attrs[dtype_attr].torch_dtype, node.device)


def _sampled(sample):
    """on_device of an ATen sampler `sample(dims, generator=, dtype=, device=)`."""
    return lambda gen, dtype, device: (
        lambda shape: sample(_dims(shape), generator=gen(), dtype=dtype, device=device))


def _truncated_on_device(gen, dtype, device):
    work = torch.float64 if dtype == torch.float64 else torch.float32
    return lambda shape: _truncated(_dims(shape), gen(), work, device).to(dtype)


def _uniform_int_on_device(gen, dtype, device):
    def run(shape, minval, maxval):
        lo, hi = _bounds((minval, maxval))
        return torch.randint(lo, hi, _dims(shape), generator=gen(), dtype=dtype, device=device)
    return run


_stateful_kernel(random.RandomUniform, "uniform", _sampled(torch.rand))
_stateful_kernel(random.RandomStandardNormal, "normal", _sampled(torch.randn))
_stateful_kernel(random.TruncatedNormal, "truncated_normal", _truncated_on_device)
_stateful_kernel(random.RandomUniformInt, "uniform_int", _uniform_int_on_device, "Tout")


def _truncated(dims: list, g: torch.Generator, work, device) -> torch.Tensor:
    """Standard normal values, those beyond 2 stddev redrawn (our fresh buffer, in place)."""
    x = torch.randn(dims, generator=g, dtype=work, device=device)
    bad = x.abs() > 2.0
    n = int(bad.sum())
    while n:
        x[bad] = torch.randn(n, generator=g, dtype=work, device=device)
        bad = x.abs() > 2.0
        n = int(bad.sum())
    return x


def shuffle_permutation_fn(node):
    """`perm(n) -> int64 NumPy [n]`: TF's RandomShuffle permutation of the node's next
    execution on n rows (kernels/philox_shuffle.py), on any device (TF shuffles on the CPU)."""
    state_fn = _state_fn(node)
    return lambda n: philox_shuffle.shuffle_of(n, state_fn())


@kernel(random.RandomShuffle)
def _random_shuffle(node):
    perm_fn = shuffle_permutation_fn(node)

    def run(x):
        if x.dim() == 0 or x.numel() <= 1 or x.shape[0] <= 1:
            return x   # TF forwards the input and draws nothing
        perm = torch.from_numpy(perm_fn(x.shape[0]))
        return x.index_select(0, perm.to(x.device))

    return run


# -- stateless ops: TensorFlow's Philox streams (kernels/philox_numba.py) --

def _check_seed(seed: torch.Tensor) -> list:
    if seed.numel() != 2:
        raise InvalidArgumentError(None, None, f"seed must have shape [2], not "
                                   f"{list(seed.shape)}")
    return [int(v) for v in seed.reshape(-1).tolist()]


def _seeded(seed: torch.Tensor, device) -> torch.Generator:
    # ATen's CPU generator (mt19937) keeps 32 bits of a seed: mix all 128 bits into them.
    words = [v & 0xFFFFFFFFFFFFFFFF for v in _check_seed(seed)]
    mixed = int(np.random.SeedSequence(words).generate_state(1)[0])
    return torch.Generator(device=device).manual_seed(mixed)


def philox_draw(node, kind: str):
    """`draw(n, key, counter, *bounds)` -> NumPy values of TF's `kind` distribution
    ('uniform', 'normal', 'truncated_normal', 'uniform_int', 'full_int') for `node`'s dtype."""
    dtype = node.attrs["dtype"].torch_dtype
    float_kind = _PHILOX_KIND.get(dtype) or ("int64" if dtype == torch.int64 else "int32")

    def draw(n, key, counter, *bounds):
        lo, hi = _bounds(bounds)
        return philox_numba.generate(kind, float_kind, n, key, counter, lo, hi)
    return draw


def drawn(draw, shape, key, counter, bounds, dtype, device) -> tuple[torch.Tensor, int]:
    """(the drawn tensor of `shape`, the number of values drawn)."""
    dims = _dims(shape)
    n = math.prod(dims)
    values = draw(n, key, counter, *bounds) if n else np.zeros(0, np.float32)
    out = torch.from_numpy(np.ascontiguousarray(values)).to(dtype).reshape(dims)
    return out.to(device), n


def _philox_fill(node, kind: str):
    """A stateless kernel: the op's seed scrambled into TF's Philox key and counter."""
    draw, dtype, device = philox_draw(node, kind), node.attrs["dtype"].torch_dtype, node.device

    def run(shape, seed, *bounds):
        key, counter = philox.key_counter_from_seed(*_check_seed(seed))
        return drawn(draw, shape, key, counter, bounds, dtype, device)[0]
    return run


# the distribution each stateless op draws (philox_draw's kinds)
for _op, _kind in ((stateless_random.StatelessRandomUniform, "uniform"),
                   (stateless_random.StatelessRandomNormal, "normal"),
                   (stateless_random.StatelessTruncatedNormal, "truncated_normal"),
                   (stateless_random.StatelessRandomUniformInt, "uniform_int"),
                   (stateless_random.StatelessRandomUniformFullInt, "full_int")):
    kernel(_op)(lambda node, kind=_kind: _philox_fill(node, kind))


# -- stateful ops on a tf.random.Generator's Philox state -------------------------------------


def read_philox_state(res, alg) -> tuple:
    """(state, counter low, counter high, key) of a Generator's state variable, checked as
    TF's stateful kernels check it (auto-select is Philox on CPUs and GPUs; TF has ThreeFry
    on XLA devices only)."""
    state = res.value
    if state is None:
        raise InvalidArgumentError(None, None, "Trying to read a tf.random.Generator's "
                                   "state, which is uninitialized.")
    if int(alg) == 2:
        raise UnimplementedError(None, None,
                                 "Non-XLA devices don't support the ThreeFry algorithm.")
    if int(alg) not in (1, 3):
        raise InvalidArgumentError(None, None, f"Unsupported algorithm id: {int(alg)}")
    if state.numel() < 3:
        raise InvalidArgumentError(None, None, "The size of the state must be at least 3; "
                                   f"got {state.numel()}")
    lo, hi, key = (int(v) for v in state.reshape(-1)[:3].tolist())
    return state, lo, hi, key


def advance_philox_state(res, state, lo: int, hi: int, delta: int) -> None:
    """Writes the state back with its 128-bit counter advanced by `delta`."""
    new_lo = (lo & 0xFFFFFFFFFFFFFFFF) + delta
    words = [new_lo & 0xFFFFFFFFFFFFFFFF, (hi + (new_lo >> 64)) & 0xFFFFFFFFFFFFFFFF]
    new_state = state.clone()
    new_state.view(-1)[:2] = torch.tensor([w - (1 << 64) if w >= 1 << 63 else w
                                           for w in words], dtype=state.dtype)
    res.value = new_state


def _philox_state_kernel(node, draw):
    """Reads [counter low, counter high, key] from the state variable, draws from that key and
    counter, and writes the state back with the counter advanced."""
    dtype, device = node.attrs["dtype"].torch_dtype, node.device

    def run(res, alg, shape, *bounds):
        state, lo, hi, key = read_philox_state(res, alg)
        k, c = philox.key_counter_from_state(lo, hi, key)
        out, n = drawn(draw, shape, k, c, bounds, dtype, device)
        advance_philox_state(res, state, lo, hi, n * _STATE_STEP)
        return out
    return run


def _register_stateful(op, kind: str) -> None:
    kernel(op)(lambda node: _philox_state_kernel(node, philox_draw(node, kind)))


for _op, _kind in ((stateful_random.StatefulUniform, "uniform"),
                   (stateful_random.StatefulStandardNormalV2, "normal"),
                   (stateful_random.StatefulUniformInt, "uniform_int"),
                   (stateful_random.StatefulUniformFullInt, "full_int"),
                   (stateful_random.StatefulTruncatedNormal, "truncated_normal")):
    _register_stateful(_op, _kind)


# -- gamma and Poisson (ATen's samplers) ----------------------------------------------------

def _param_sample(dims: list, param: torch.Tensor) -> torch.Tensor:
    """`param` expanded to `dims ++ param.shape` (one draw per element)."""
    return param.expand(list(dims) + list(param.shape))


@kernel(random_gamma_poisson.RandomGamma)
def _random_gamma(node):
    gen = _generator_fn(node)

    def run(shape, alpha):
        dims = _dims(shape)
        work = alpha.double() if alpha.dtype == torch.float16 else alpha
        params = _param_sample(dims, work).contiguous()
        sample = torch._standard_gamma(params, generator=gen())
        return _nan_where_invalid(sample, params).to(alpha.dtype)
    return run


def _nan_where_invalid(sample: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """TF's sampler gives NaN for alpha <= 0 (ATen's gives 0)."""
    return torch.where(alpha > 0, sample, torch.full_like(sample, float("nan")))


def gamma_sample_der_alpha(alpha: torch.Tensor, sample: torch.Tensor) -> torch.Tensor:
    """d sample / d alpha of a Gamma(alpha, 1) sample at fixed CDF value (implicit
    reparameterization): -(dP(alpha, x)/d alpha) / pdf(x), the CDF derivative by a 4th-order
    central difference of ATen's regularized incomplete gamma in float64 (the tail side
    through Q = 1 - P against cancellation). ~1e-7 relative to TF's exact series (ATen's
    _standard_gamma_grad approximates to ~1%)."""
    a, x = alpha.double(), sample.double()
    h = 1e-4 * a.clamp_min(1e-3)
    upper = torch.special.gammainc(a, x) > 0.5

    def cdf(aa):
        return torch.where(upper, -torch.special.gammaincc(aa, x), torch.special.gammainc(aa, x))
    dcdf = (-cdf(a + 2 * h) + 8 * cdf(a + h) - 8 * cdf(a - h) + cdf(a - 2 * h)) / (12 * h)
    log_pdf = (a - 1) * torch.log(x) - x - torch.lgamma(a)
    return (-dcdf / torch.exp(log_pdf)).to(alpha.dtype)


@kernel(random_gamma_poisson.RandomGammaGrad)
def _random_gamma_grad(node):
    def run(alpha, sample):
        a, s = torch.broadcast_tensors(alpha, sample)
        return gamma_sample_der_alpha(a, s)
    return run


@kernel(random_gamma_poisson.RandomPoissonV2)
def _random_poisson(node):
    gen, out = _generator_fn(node), node.attrs["dtype"].torch_dtype

    def run(shape, rate):
        rates = _param_sample(_dims(shape), rate.double()).contiguous()
        return torch.poisson(rates.clamp_min(0), generator=gen()).to(out)
    return run


@kernel(random_gamma_poisson.StatelessRandomGammaV2)
def _stateless_gamma(node):
    device = node.device

    def run(shape, seed, alpha):
        dims = _dims(shape)
        work = alpha.double() if alpha.dtype == torch.float16 else alpha
        a = work.expand(dims).contiguous().cpu()
        sample = torch._standard_gamma(a, generator=_seeded(seed, torch.device("cpu")))
        return _nan_where_invalid(sample, a).to(alpha.dtype).to(device)
    return run


@kernel(random_gamma_poisson.StatelessRandomPoisson)
def _stateless_poisson(node):
    out, device = node.attrs["dtype"].torch_dtype, node.device

    def run(shape, seed, lam):
        rates = lam.double().expand(_dims(shape)).contiguous().cpu().clamp_min(0)
        sample = torch.poisson(rates, generator=_seeded(seed, torch.device("cpu")))
        return sample.to(out).to(device)
    return run
