"""The CPU convolution autotuner (ndflow/kernels/autotune.py): whichever algorithm it
picks (ATen on channels-last or plain NCHW memory, the FFT product, for an asymmetrically
padded input gradient the flipped transposed convolution, for an input gradient of few
channels the GEMM and col2im), Conv2D, its two backprop ops and the remapper's fused conv
give NumPy's results."""

import functools
import os
import subprocess
import sys
import time
import types

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import core_monitor
from ndflow.kernels import autotune
from ndflow.kernels.autotune import CHANNELS_LAST, COL2IM, FFT, FLIPPED, NCHW
from tests.ops import nn_reference as ref
from tests.ops.test_nn_conv_ops import _conv_filter_grad_ref, _conv_input_grad_ref
from tests.passes.graph_helpers import op_counts, run_graph
from tests.passes.test_remapper import _optimize

rng = np.random.default_rng(11)

CASES = [  # x shape, filter shape, strides, padding, whether the FFT / the flipped input
    ((2, 7, 6, 3), (3, 3, 3, 4), 1, "SAME", True, False),  # gradient are candidates
    ((2, 7, 6, 3), (2, 2, 3, 4), 2, "SAME", False, True),  # asymmetric SAME: an explicit pad
    ((1, 6, 7, 2), (3, 2, 2, 3), 1, "VALID", False, False),  # a 2-wide filter: no FFT
    # asymmetric SAME rows (1 above, 2 below) at stride 1: ATen's output padding must be 0
    ((2, 9, 8, 3), (4, 3, 3, 2), 1, "SAME", True, False),
    ((2, 8, 9, 2), (5, 3, 2, 3), 1, "VALID", True, False),
    ((2, 10, 9, 3), (5, 5, 3, 2), 2, "SAME", False, True),  # a GAN's 5x5 stride-2 layer
    ((2, 12, 11, 2), (3, 3, 2, 3), 3, "SAME", False, True),
    # few input channels (kh * kw * in <= out): col2im is an input-gradient candidate too
    ((2, 9, 8, 1), (3, 3, 1, 9), 2, "SAME", False, True),
    ((2, 10, 9, 2), (5, 5, 2, 50), 2, "SAME", False, True),   # a GAN's image layer
    ((1, 7, 6, 1), (2, 3, 1, 6), 1, "VALID", False, False),
    # channels that are multiples of 16: the FFT's products in conv_fft_numba's kernel
    ((3, 9, 8, 16), (3, 3, 16, 32), 1, "SAME", True, False),
    ((2, 7, 7, 32), (5, 5, 32, 16), 1, "SAME", True, False),
]
FORWARD_ALGORITHMS = [CHANNELS_LAST, NCHW, FFT]
ALGORITHMS = FORWARD_ALGORITHMS + [FLIPPED, COL2IM]


# the core monitor ready to time, and every convolution tuned by `tuner` (tests/ops/conftest.py)
pytestmark = pytest.mark.usefixtures("ready_to_time")


def _conv_and_grads(x, w, g, strides, padding):
    xt, wt = tf.constant(x, tf.float32), tf.constant(w, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        y = tf.nn.conv2d(xt, wt, strides, padding)
    dx, dw = tape.gradient(y, [xt, wt], output_gradients=tf.constant(g, tf.float32))
    return y.numpy(), dx.numpy(), dw.numpy()


def _expected_choice(kind: str, algorithm: str, fft: bool, flip: bool, ws) -> str:
    col2im = kind == "backprop_input" and ws[0] * ws[1] * ws[2] <= ws[3]
    candidate = {FFT: fft, FLIPPED: flip and kind == "backprop_input",
                 COL2IM: col2im}.get(algorithm, True)
    return algorithm if candidate else CHANNELS_LAST


@functools.cache
def _case(xs, ws, strides, padding):
    """A case's operands (seeded by its shapes) and NumPy float64 references, computed once
    for all the algorithms checked on it (the gradients' references probe each basis vector:
    seconds for a 5x5x32x16 filter)."""
    r = np.random.default_rng([*xs, *ws, strides])
    x, w = r.uniform(-1, 1, xs), r.uniform(-1, 1, ws)
    expected = ref.conv2d(x, w, (strides, strides), padding)
    g = r.uniform(-1, 1, expected.shape)
    return (x, w, g, expected, _conv_input_grad_ref(w, g, xs, (strides, strides), padding),
            _conv_filter_grad_ref(x, g, ws, (strides, strides), padding))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("xs,ws,strides,padding,fft,flip", CASES)
def test_every_algorithm_matches_numpy(tuner, algorithm, xs, ws, strides, padding, fft, flip):
    tuner.algorithm = algorithm
    x, w, g, expected, dx_ref, dw_ref = _case(xs, ws, strides, padding)
    y, dx, dw = _conv_and_grads(x, w, g, strides, padding)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, dw_ref, rtol=1e-5, atol=1e-5)
    # the FFT's transforms are GEMMs whose library is tuned too: counted apart
    chosen = {k: v for k, v in autotune.choices().items() if k[0] != "gemm"}
    assert sorted(k[0] for k in chosen) == ["backprop_filter", "backprop_input", "forward"]
    for key, choice in chosen.items():
        assert choice == _expected_choice(key[0], algorithm, fft, flip, ws), key


def test_col2im_input_gradient_with_dilation(tuner):
    """Dilated windows: col2im's input gradient equals the default algorithm's (whose
    dilated gradients are checked against NumPy in test_nn_conv_ops)."""
    x = tf.constant(rng.uniform(-1, 1, (2, 11, 10, 1)), tf.float32)
    w = tf.constant(rng.uniform(-1, 1, (3, 3, 1, 12)), tf.float32)
    g = tf.constant(rng.uniform(-1, 1, (2, 11, 10, 12)), tf.float32)
    grads = {}
    for algorithm in (CHANNELS_LAST, COL2IM):
        tuner.algorithm = algorithm
        autotune.clear()
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.conv2d(x, w, 1, "SAME", dilations=2)
        grads[algorithm] = tape.gradient(y, x, output_gradients=g).numpy()
        assert [v for k, v in autotune.choices().items() if k[0] == "backprop_input"] == \
            [algorithm]
    np.testing.assert_allclose(grads[COL2IM], grads[CHANNELS_LAST], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", ["relu", "elu"])
@pytest.mark.parametrize("algorithm", FORWARD_ALGORITHMS)
def test_fused_conv_bias_activation_in_every_algorithm(tuner, algorithm, activation):
    tuner.algorithm = algorithm
    x = rng.uniform(-1, 1, (2, 6, 6, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 3, 5)).astype(np.float32)
    b = rng.uniform(-1, 1, 5).astype(np.float32)

    g = tf.Graph()
    with g.as_default():
        xp = tf.compat.v1.placeholder(tf.float32, x.shape, name="x")
        getattr(tf.nn, activation)(tf.nn.bias_add(tf.nn.conv2d(xp, w, 1, "SAME"), b), name="y")
    g2, names = _optimize(g, ["y:0"], ["x:0"])
    assert op_counts(g2)["_FusedConv2D"] == 1
    (y,) = run_graph(g2, [names["y:0"]], {names["x:0"]: x})
    z = ref.conv2d(x.astype(np.float64), w) + b
    expected = np.maximum(z, 0) if activation == "relu" else np.where(z > 0, z, np.expm1(z))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    assert [v for k, v in autotune.choices().items() if k[0] == "forward"] == [algorithm]


def test_autotune_off_keeps_channels_last(tuner, monkeypatch):
    monkeypatch.setenv("TF_CUDNN_USE_AUTOTUNE", "0")
    x, w = rng.uniform(-1, 1, (1, 5, 5, 2)), rng.uniform(-1, 1, (3, 3, 2, 2))
    y = tf.nn.conv2d(tf.constant(x, tf.float32), tf.constant(w, tf.float32), 1, "SAME")
    np.testing.assert_allclose(y.numpy(), ref.conv2d(x, w), rtol=1e-5, atol=1e-5)
    assert autotune.choices() == {}


def test_small_convolutions_are_not_tuned():
    autotune.clear()
    x, w = rng.uniform(-1, 1, (1, 5, 5, 2)), rng.uniform(-1, 1, (3, 3, 2, 2))
    tf.nn.conv2d(tf.constant(x, tf.float32), tf.constant(w, tf.float32), 1, "SAME")
    assert autotune.choices() == {}


def test_a_small_convolution_slow_for_its_size_is_tuned(monkeypatch):
    """A shape below MIN_FLOPS runs its default, whose first runs are timed: one slower than
    a MIN_FLOPS convolution at SLOW_RATE is tuned from its third run; a fast one never."""
    times = {CHANNELS_LAST: 1.0, NCHW: 1.0, FFT: 1.0, FLIPPED: 1.0, COL2IM: 0.2}
    monkeypatch.setattr(autotune, "_timed", lambda run, a, credit=None: (times[a], run(a)))
    for rate, tuned in ((1e40, True), (1.0, False)):   # every run slow / every run fast
        monkeypatch.setattr(autotune, "SLOW_RATE", rate)
        autotune.clear()
        calls = []
        for _ in range(2):
            autotune.run_tuned("small", 1.0, calls.append, ALGORITHMS)
        assert calls == [CHANNELS_LAST] * 2 and autotune.choices() == {}
        calls.clear()
        autotune.run_tuned("small", 1.0, calls.append, ALGORITHMS)
        if tuned:
            assert set(calls) == set(ALGORITHMS) and autotune.choices() == {"small": COL2IM}
        else:
            assert calls == [CHANNELS_LAST] and autotune.choices() == {}
    autotune.clear()


def test_another_algorithm_needs_a_clear_margin(monkeypatch):
    """A candidate 5% faster than the default is within its copies' noise: the default stays;
    a clearly faster one is chosen, and later calls run it alone, untimed."""
    times = {CHANNELS_LAST: 1.0, NCHW: 0.95, FFT: 0.97, FLIPPED: 0.96, COL2IM: 0.94}
    monkeypatch.setattr(autotune, "_timed", lambda run, a, credit=None: (times[a], run(a)))
    autotune.clear()
    calls = []
    out = autotune.run_tuned("k", autotune.MIN_FLOPS, calls.append, ALGORITHMS)
    assert out is None and autotune.choices() == {"k": CHANNELS_LAST}
    assert calls[-1] == CHANNELS_LAST  # the result returned is the chosen algorithm's
    assert set(calls) == set(ALGORITHMS)
    times[FFT] = 0.5
    calls.clear()
    autotune.run_tuned("k2", autotune.MIN_FLOPS, calls.append, ALGORITHMS)
    assert autotune.choices()["k2"] == FFT and calls[-1] == FFT
    calls.clear()
    autotune.run_tuned("k2", autotune.MIN_FLOPS, calls.append, ALGORITHMS)
    assert calls == [FFT]
    autotune.run_tuned("k3", autotune.MIN_FLOPS, calls.append)  # layouts only
    assert autotune.choices()["k3"] == CHANNELS_LAST and FFT not in calls[1:]
    autotune.clear()


def test_nothing_is_timed_before_the_monitor_knows_the_load(monkeypatch):
    """In the core monitor's first window a busy neighbour has not yet lowered the thread
    count, so timings would be of stalls: the default runs and nothing is recorded; once the
    load is known the next call tunes."""
    times = {CHANNELS_LAST: 1.0, NCHW: 1.0, FFT: 0.5}
    monkeypatch.setattr(autotune, "_timed", lambda run, a, credit=None: (times[a], run(a)))
    autotune.clear()
    monkeypatch.setattr(core_monitor, "ready_to_time", lambda threads: False)
    calls = []
    for _ in range(3):
        autotune.run_tuned("k", autotune.MIN_FLOPS, calls.append, FORWARD_ALGORITHMS)
    assert calls == [CHANNELS_LAST] * 3 and autotune.choices() == {}
    monkeypatch.setattr(core_monitor, "ready_to_time", lambda threads: True)
    autotune.run_tuned("k", autotune.MIN_FLOPS, calls.append, FORWARD_ALGORITHMS)
    assert autotune.choices() == {"k": FFT} and calls[-1] == FFT
    autotune.clear()


def test_a_choice_holds_for_the_thread_count_it_was_timed_with(monkeypatch):
    """With one thread (the core monitor's cap beside a busy process) the best algorithm can
    differ from two threads': each count is tuned on its own, and keeps its own choice."""
    times = {CHANNELS_LAST: 1.0, FFT: 0.5}
    monkeypatch.setattr(autotune, "_timed", lambda run, a, credit=None: (times[a], run(a)))
    autotune.clear()
    before = torch.get_num_threads()
    calls = []
    try:
        torch.set_num_threads(1)
        autotune.run_tuned("k", autotune.MIN_FLOPS, calls.append, (CHANNELS_LAST, FFT))
        times[FFT] = 2.0
        torch.set_num_threads(2)
        autotune.run_tuned("k", autotune.MIN_FLOPS, calls.append, (CHANNELS_LAST, FFT))
        assert autotune.choices() == {"k": CHANNELS_LAST}   # the calling thread's count
        torch.set_num_threads(1)
        calls.clear()
        autotune.run_tuned("k", autotune.MIN_FLOPS, calls.append, (CHANNELS_LAST, FFT))
        assert calls == [FFT]                                    # kept, not timed again
    finally:
        torch.set_num_threads(before)
    assert autotune.choices(1) == {"k": FFT}
    assert autotune.choices(2) == {"k": CHANNELS_LAST}
    autotune.clear()


def test_work_another_op_saves_is_credited(monkeypatch):
    """An algorithm whose run leaves work for another op (the FFT's spectra for the filter
    gradient) is timed without it: 1.1 s less 0.3 s of credit beats the default's 1.0 s."""
    runs = {CHANNELS_LAST: 1.0, FFT: 1.1}
    now = [0.0]
    # the tuner's own clock only (patching time.perf_counter would stop every clock)
    monkeypatch.setattr(autotune, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def run(algorithm):
        now[0] += runs[algorithm]
    autotune.clear()
    credit = {CHANNELS_LAST: 0.0, FFT: 0.3}
    autotune.run_tuned("k", autotune.MIN_FLOPS, run, (CHANNELS_LAST, FFT),
                            lambda a: credit[a])
    assert autotune.choices()["k"] == FFT
    autotune.run_tuned("k2", autotune.MIN_FLOPS, run, (CHANNELS_LAST, FFT))
    assert autotune.choices()["k2"] == CHANNELS_LAST
    autotune.clear()


def _conv_step(x, w):
    @tf.function
    def train():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME") ** 2)
        return tape.gradient(loss, [x, w])
    return train


def test_fft_choices_that_counted_on_another_pass_are_timed_again(tuner):
    """The forward pass and the filter gradient tuned to the FFT (sharing spectra with the
    input gradient), then the input gradient tuned to oneDNN: the two are timed again, and
    oneDNN (the fastest here) replaces them; the FFT's credit for a spectrum left for a pass
    tuned otherwise is nothing."""
    from ndflow.kernels import conv_fft, nn_conv
    tuner.algorithm = CHANNELS_LAST
    x = tf.Variable(rng.uniform(-1, 1, (2, 9, 9, 3)).astype(np.float32))
    w = tf.Variable(rng.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32))
    tail = ((2, 9, 9, 3), (3, 3, 3, 4), (1, 1), (1, 1), "SAME", (0, 0, 0, 0))
    threads = torch.get_num_threads()
    for kind in ("forward", "backprop_filter"):
        autotune._choices[(threads, (kind, *tail))] = FFT
    train = _conv_step(x, w)
    train()
    train()
    assert {k[0]: c for k, c in autotune.choices().items() if k[1:] == tail} == {
        "forward": CHANNELS_LAST, "backprop_input": CHANNELS_LAST,
        "backprop_filter": CHANNELS_LAST}
    conv_fft._left.seconds = 0.25           # a spectrum left for the input gradient
    assert nn_conv._fft_credit(("backprop_filter", *tail))(FFT) == 0.0
    autotune.forget(("backprop_input", *tail))
    conv_fft._left.seconds = 0.25
    assert nn_conv._fft_credit(("backprop_filter", *tail))(FFT) == 0.25
    assert nn_conv._fft_credit(("backprop_filter", *tail))(CHANNELS_LAST) == 0.0
    conv_fft.clear_shared_spectra()


def test_spectra_a_timed_fft_left_go_when_its_pass_chose_otherwise(tuner):
    """The forward pass's FFT candidate leaves x's spectrum while it is timed; tuned to oneDNN,
    the pass drops it, so the filter gradient's FFT is not then timed on a spectrum no step
    will leave for it."""
    from ndflow.kernels import conv_fft
    conv_fft.clear_shared_spectra()
    x = torch.from_numpy(rng.uniform(-1, 1, (2, 9, 9, 3)).astype(np.float32))
    w = torch.from_numpy(rng.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32))
    other = x.clone()
    conv_fft.forward(x, w, (1, 1, 1, 1))
    conv_fft.forward(other, w, (1, 1, 1, 1))
    assert len(conv_fft._shared) == 2
    conv_fft.drop_left(x, conv_fft.INPUT_GRADIENT)       # left by another pass: kept
    assert len(conv_fft._shared) == 2
    conv_fft.drop_left(x, conv_fft.FORWARD)
    assert [e[0] for e in conv_fft._shared.values()] == [other]
    conv_fft.clear_shared_spectra()
    # a training step whose three passes are tuned to oneDNN leaves no spectrum behind
    tuner.algorithm = CHANNELS_LAST
    _conv_step(tf.Variable(x.numpy()), tf.Variable(w.numpy()))()
    assert {c for k, c in autotune.choices().items() if k[0] != "gemm"} == {CHANNELS_LAST}
    assert len(conv_fft._shared) == 0


def test_a_non_finite_input_stays_in_its_windows_with_the_fft(tuner):
    """A transform would spread a NaN over the whole image; the FFT algorithm's results with
    one are recomputed directly, so NaNs and infinities land where TF's kernels put them."""
    tuner.algorithm = FFT
    x, w = rng.uniform(-1, 1, (2, 9, 9, 3)), rng.uniform(-1, 1, (3, 3, 3, 4))
    x[0, 4, 4, 1] = np.nan
    x[1, 0, 8, 2] = np.inf
    with np.errstate(invalid="ignore"):
        expected = ref.conv2d(x, w, (1, 1), "SAME")
    g = rng.uniform(-1, 1, expected.shape)
    y, dx, dw = _conv_and_grads(x, w, g, 1, "SAME")
    assert set(autotune.choices().values()) == {FFT}
    np.testing.assert_array_equal(np.isnan(y), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(y), np.isinf(expected))
    assert np.isnan(y).sum() == 9 * 4 and np.isinf(y).sum() == 4 * 4   # the windows only
    np.testing.assert_allclose(y[np.isfinite(y)], expected[np.isfinite(expected)], atol=1e-5)
    gx = rng.uniform(-1, 1, expected.shape)
    gx[1, 2, 2, 0] = np.nan                            # a NaN in the output gradient
    _, dx, dw = _conv_and_grads(rng.uniform(-1, 1, x.shape), w, gx, 1, "SAME")
    assert np.isnan(dx).sum() == 9 * 3                 # the window, every input channel
    assert np.isnan(dw[..., 0]).all() and not np.isnan(dw[..., 1:]).any()


def test_only_a_graph_with_a_filter_gradient_leaves_spectra(tuner, monkeypatch):
    """An FFT forward pass leaves its input's spectrum only where the graph has a filter
    gradient reading that input: a tf.function that only infers leaves none behind (nor is
    credited for it); a training step's filter gradient takes the forward pass's."""
    from ndflow.kernels import conv_fft
    tuner.algorithm = FFT
    conv_fft.clear_shared_spectra()
    computed = []
    original = conv_fft._spectrum
    monkeypatch.setattr(conv_fft, "_spectrum",
                        lambda t, ph, pw: computed.append(t) or original(t, ph, pw))
    x = tf.constant(rng.uniform(-1, 1, (2, 9, 9, 3)), tf.float32)
    w = tf.Variable(rng.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32))

    @tf.function
    def infer(x):
        return tf.nn.conv2d(x, w, 1, "SAME")

    infer(x)                  # tunes: runs each algorithm a few times
    computed.clear()
    infer(x)
    assert conv_fft._shared == {} and len(computed) == 1

    @tf.function
    def train(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME") ** 2)
        return tape.gradient(loss, w)

    train(x)
    computed.clear()
    dw = train(x)
    assert len(computed) == 2 and conv_fft._shared == {}   # x's and the gradient's, once
    xv, wv = x.numpy().astype(np.float64), w.numpy().astype(np.float64)
    g = 2 * ref.conv2d(xv, wv)
    np.testing.assert_allclose(dw.numpy(), _conv_filter_grad_ref(xv, g, wv.shape, (1, 1),
                                                                 "SAME"), rtol=1e-4, atol=1e-4)
    conv_fft.clear_shared_spectra()


_BESIDE_A_BUSY_PROCESS = """
import time
import ndflow as tf
from ndflow.kernels import autotune
x = tf.random.normal((16, 28, 28, 32))
w = tf.Variable(tf.random.normal((5, 5, 32, 64)))
@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME") ** 2)
    w.assign_sub(1e-6 * tape.gradient(loss, w))
t = time.time()
while time.time() - t < 2.0:
    step()
# the FFT candidates' transforms tune their GEMMs too ("gemm" keys), for the same thread
print(sorted(k[0] for k in autotune.choices(1) if k[0] != "gemm"), len(autotune.choices(2)),
      all(k[0] in ("gemm", "forward", "backprop_filter") for k in autotune.choices(1)))
"""


@pytest.mark.slow  # real processes competing for the cores: CI's serial slow pass runs it
@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) != 2,
                    reason="needs a Linux machine of 2 cores")
def test_a_process_started_beside_a_busy_one_tunes_for_the_thread_it_gets():
    """Started beside a busy process, a training step's convolutions are timed only once the
    core monitor has capped the step at the one core left: every choice is for one thread,
    none is timed with two threads that stall each other."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        out = subprocess.run([sys.executable, "-c", _BESIDE_A_BUSY_PROCESS], check=True,
                             capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    finally:
        spinner.kill()
        spinner.wait()
    assert out.stdout.splitlines()[-1] == "['backprop_filter', 'forward'] 0 True", out.stdout


def test_the_fft_tunes_its_own_transforms_while_it_is_timed(monkeypatch):
    """The FFT algorithm's transforms are GEMMs whose library (kernels/gemm.py) is chosen by
    timing the first time a shape comes, which happens while the convolution's candidates
    are timed: the tuner's lock is reentrant (a plain lock hung the first FFT candidate),
    both choices are kept, and the results are NumPy's with oneDNN's transforms."""
    import threading

    from ndflow.kernels import gemm
    monkeypatch.setattr(autotune, "MIN_FLOPS", 0)
    monkeypatch.setattr(gemm, "MIN_FLOPS", 0)
    monkeypatch.setattr(autotune, "_timed", lambda run, algorithm, credit=None: (
        0.001 if algorithm in (FFT, gemm.ONEDNN) else 0.002, run(algorithm)))
    monkeypatch.delenv("TF_CUDNN_USE_AUTOTUNE", raising=False)
    autotune.clear()
    x, w = rng.uniform(-1, 1, (2, 9, 8, 3)), rng.uniform(-1, 1, (3, 3, 3, 4))
    expected = ref.conv2d(x, w, (1, 1), "SAME")
    g = rng.uniform(-1, 1, expected.shape)
    out = []
    worker = threading.Thread(target=lambda: out.append(_conv_and_grads(x, w, g, 1, "SAME")),
                              daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "the FFT candidate's GEMM tuning deadlocked"
    y, dx, dw = out[0]
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, _conv_input_grad_ref(w, g, x.shape, (1, 1), "SAME"),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, _conv_filter_grad_ref(x, g, w.shape, (1, 1), "SAME"),
                               rtol=1e-5, atol=1e-5)
    chosen = {}
    for t in range(1, 65):   # the worker thread's intra-op count
        chosen.update(autotune.choices(t))
    assert {c for k, c in chosen.items() if k[0] != "gemm"} == {FFT}
    assert {c for k, c in chosen.items() if k[0] == "gemm"} == {gemm.ONEDNN}
    autotune.clear()


def test_a_filter_gradient_is_timed_with_the_spectrum_the_forward_pass_left(tuner,
                                                                         monkeypatch):
    """While the tuner times the FFT filter gradient, every run takes the input's spectrum
    the forward pass left, as a step's one run does (taken once, later runs recomputed it
    and the FFT was timed at more than its cost)."""
    from ndflow.kernels import conv_fft
    tuner.algorithm = FFT
    conv_fft.clear_shared_spectra()
    in_filter_gradient, recomputed = [False], []
    spectrum, filter_gradient = conv_fft._spectrum, conv_fft.backprop_filter

    def counting_spectrum(t, ph, pw):
        if in_filter_gradient[0] and t.shape[-1] == 3:     # x's channels (g has 4)
            recomputed.append(t)
        return spectrum(t, ph, pw)

    def flagged_filter_gradient(*args, **kwargs):
        in_filter_gradient[0] = True
        try:
            return filter_gradient(*args, **kwargs)
        finally:
            in_filter_gradient[0] = False
    monkeypatch.setattr(conv_fft, "_spectrum", counting_spectrum)
    monkeypatch.setattr(conv_fft, "backprop_filter", flagged_filter_gradient)
    x = tf.Variable(rng.uniform(-1, 1, (2, 9, 9, 3)).astype(np.float32))
    w = tf.Variable(rng.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32))

    @tf.function
    def train():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME") ** 2)
        return tape.gradient(loss, [x, w])

    dx, dw = train()     # tunes the three passes
    assert autotune.choices()[("backprop_filter", (2, 9, 9, 3), (3, 3, 3, 4), (1, 1), (1, 1),
                               "SAME", (0, 0, 0, 0))] == FFT
    assert recomputed == []
    xv, wv = x.numpy().astype(np.float64), w.numpy().astype(np.float64)
    g = 2 * ref.conv2d(xv, wv)
    np.testing.assert_allclose(dw.numpy(), _conv_filter_grad_ref(xv, g, wv.shape, (1, 1),
                                                                 "SAME"), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx.numpy(), _conv_input_grad_ref(wv, g, xv.shape, (1, 1),
                                                                "SAME"), rtol=1e-4, atol=1e-4)
    conv_fft.clear_shared_spectra()


@pytest.mark.parametrize("algorithm", [CHANNELS_LAST, FLIPPED, NCHW])
def test_cropped_input_gradient_is_dense_nhwc(tuner, algorithm):
    """A SAME stride-2 convolution of an even-sized image pads one more row and column at the
    bottom and right: ATen's input gradient over the padded image is cropped, and the crop is
    copied out dense, so the layers after it (a BatchNorm gradient: 12.9 against 0.7 ms in a
    DCGAN) read contiguous NHWC memory, and the tuner times that copy."""
    tuner.algorithm = algorithm
    x_shape, ws = (2, 10, 10, 8), (5, 5, 8, 16)
    w = tf.constant(rng.uniform(-1, 1, ws), tf.float32)
    g = tf.constant(rng.uniform(-1, 1, (2, 5, 5, 16)), tf.float32)
    dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=x_shape, filter=w, out_backprop=g,
                                        strides=[1, 2, 2, 1], padding="SAME")
    assert dx._value.is_contiguous(), dx._value.stride()
    ref_dx = _conv_input_grad_ref(w.numpy().astype(np.float64), g.numpy().astype(np.float64),
                                  x_shape, (2, 2), "SAME")
    np.testing.assert_allclose(dx.numpy(), ref_dx, rtol=1e-5, atol=1e-4)
    chosen = [v for k, v in autotune.choices().items() if k[0] == "backprop_input"]
    assert chosen == [algorithm]
