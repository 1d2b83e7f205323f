"""The FFT convolution algorithm (ndflow/kernels/conv_fft.py) against NumPy's float64
convolution and its gradients, and its gradients against finite differences of its own
forward pass."""

import numpy as np
import pytest
import torch

from ndflow.kernels import conv_fft
from ndflow.ops.nn_common import window_geometry
from tests.ops import nn_reference as ref
from tests.ops.test_nn_conv_ops import _conv_filter_grad_ref, _conv_input_grad_ref

rng = np.random.default_rng(5)

CASES = [  # x shape, filter shape, padding
    ((2, 14, 14, 3), (5, 5, 3, 4), "SAME"),     # MNIST's second layer, fewer channels
    ((1, 9, 11, 2), (3, 3, 2, 5), "SAME"),      # rectangular image
    ((2, 10, 7, 3), (4, 3, 3, 2), "SAME"),      # even filter: one row more below than above
    ((1, 12, 12, 2), (5, 3, 2, 3), "VALID"),
    ((1, 6, 6, 1), (6, 6, 1, 1), "VALID"),      # the filter covers the image
    ((2, 9, 8, 2), (3, 3, 2, 3), [2, 0, 1, 2]),  # explicit: as wide as the filter allows
]


def _pads(xs, ws, padding):
    if not isinstance(padding, str):
        return tuple(padding)
    _, pads = window_geometry(xs[1], xs[2], ws[0], ws[1], [1, 1], [1, 1], padding, [])
    return pads


def _t(a):
    return torch.from_numpy(np.asarray(a, np.float32))


def _references(x, w, padding):
    """(y, g, dx, dw) from NumPy in float64; an explicit padding as VALID on a padded x."""
    if isinstance(padding, str):
        y = ref.conv2d(x, w, (1, 1), padding)
        g = rng.uniform(-1, 1, y.shape)
        return (y, g, _conv_input_grad_ref(w, g, x.shape, (1, 1), padding),
                _conv_filter_grad_ref(x, g, w.shape, (1, 1), padding))
    pt, pb, pl, pr = padding
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    y = ref.conv2d(xp, w, (1, 1), "VALID")
    g = rng.uniform(-1, 1, y.shape)
    dx = _conv_input_grad_ref(w, g, xp.shape, (1, 1), "VALID")
    return (y, g, dx[:, pt:pt + x.shape[1], pl:pl + x.shape[2]],
            _conv_filter_grad_ref(xp, g, w.shape, (1, 1), "VALID"))


@pytest.mark.parametrize("xs,ws,padding", CASES)
def test_forward_and_gradients_match_numpy(xs, ws, padding):
    x, w = rng.uniform(-1, 1, xs), rng.uniform(-1, 1, ws)
    b = rng.uniform(-1, 1, ws[3])
    pads = _pads(xs, ws, padding)
    expected, g, dx_ref, dw_ref = _references(x, w, padding)
    scale = np.abs(expected).max()
    y = conv_fft.forward(_t(x), _t(w), pads)
    assert y.shape == expected.shape and y.is_contiguous()
    np.testing.assert_allclose(y.numpy(), expected, rtol=0, atol=1e-6 * scale)
    yb = conv_fft.forward(_t(x), _t(w), pads, _t(b), relu=True)
    np.testing.assert_allclose(yb.numpy(), np.maximum(expected + b, 0), rtol=0,
                               atol=1e-6 * scale)
    dx = conv_fft.backprop_input(_t(g), _t(w), pads, xs[1], xs[2])
    assert dx.shape == xs and dx.is_contiguous()
    np.testing.assert_allclose(dx.numpy(), dx_ref, rtol=0, atol=1e-6 * np.abs(dx_ref).max())
    dw = conv_fft.backprop_filter(_t(x), _t(g), pads, ws[0], ws[1])
    assert dw.shape == ws and dw.is_contiguous()
    np.testing.assert_allclose(dw.numpy(), dw_ref, rtol=0, atol=1e-6 * np.abs(dw_ref).max())


@pytest.mark.parametrize("xs,ws,padding", CASES[:3])
def test_gradients_match_finite_differences_of_the_forward_pass(xs, ws, padding):
    """L = sum(conv(x, w) * g) is linear in x and in w, so a central difference with a step
    of 1 is exact up to float32 rounding: each probed coordinate of both gradients."""
    x, w = _t(rng.uniform(-1, 1, xs)), _t(rng.uniform(-1, 1, ws))
    pads = _pads(xs, ws, padding)
    g = _t(rng.uniform(-1, 1, conv_fft.forward(x, w, pads).shape))

    def loss(x, w):
        return float((conv_fft.forward(x, w, pads).double() * g.double()).sum())

    dx = conv_fft.backprop_input(g, w, pads, xs[1], xs[2])
    dw = conv_fft.backprop_filter(x, g, pads, ws[0], ws[1])
    for grad, wrt in ((dx, "x"), (dw, "w")):
        base = x if wrt == "x" else w
        for flat in rng.choice(base.numel(), 6, replace=False):
            e = torch.zeros(base.numel())
            e[flat] = 1.0
            e = e.view(base.shape)
            plus, minus = (loss(base + e, w), loss(base - e, w)) if wrt == "x" else \
                (loss(x, base + e), loss(x, base - e))
            assert (plus - minus) / 2 == pytest.approx(float(grad.view(-1)[flat]), abs=2e-4)


def test_transform_size_leaves_room_for_the_larger_padding():
    assert conv_fft.transform_size(14, 2, 2) == 16    # MNIST: 16 x 9 frequencies
    assert conv_fft.transform_size(10, 1, 2) == 12
    assert conv_fft.transform_size(7, 0, 0) == 8      # even sizes only


def test_which_convolutions_have_an_fft_algorithm():
    same5, x, w = (2, 2, 2, 2), (64, 14, 14, 32), (5, 5, 32, 64)
    assert conv_fft.eligible([1, 1], [1, 1], x, w, same5)
    assert not conv_fft.eligible([2, 2], [1, 1], x, w, same5)                 # strided
    assert not conv_fft.eligible([1, 1], [2, 2], x, w, same5)                 # dilated
    assert not conv_fft.eligible([1, 1], [1, 1], x, (1, 1, 32, 64), (0, 0, 0, 0))  # 1x1
    assert not conv_fft.eligible([1, 1], [1, 1], (8, 224, 224, 3), (3, 3, 3, 8),
                                 (1, 1, 1, 1))                                # large images
    small = (2, 9, 9, 2), (3, 3, 2, 2)
    assert conv_fft.eligible([1, 1], [1, 1], *small, (2, 0, 1, 2))            # explicit
    assert not conv_fft.eligible([1, 1], [1, 1], *small, (3, 0, 0, 0))       # too wide
    assert conv_fft.workspace_bytes(x, w, same5) < 30e6                      # MNIST: 24 MB
    assert not conv_fft.eligible([1, 1], [1, 1], (4096, 14, 14, 256), (5, 5, 256, 256),
                                 same5)                                      # > 1 GiB


@pytest.fixture
def counted_spectra(monkeypatch):
    conv_fft.clear_shared_spectra()
    computed = []
    original = conv_fft._spectrum

    def spectrum(t, ph, pw):
        computed.append(t)
        return original(t, ph, pw)
    monkeypatch.setattr(conv_fft, "_spectrum", spectrum)
    yield computed
    conv_fft.clear_shared_spectra()


def test_a_training_step_transforms_each_tensor_once(counted_spectra):
    """The filter gradient takes the forward pass's input spectrum and the output gradient's
    from the input gradient, whichever of the two gradients runs first; results unchanged."""
    xs, ws = (2, 14, 14, 3), (5, 5, 3, 4)
    x, w = _t(rng.uniform(-1, 1, xs)), _t(rng.uniform(-1, 1, ws))
    g = _t(rng.uniform(-1, 1, (2, 14, 14, 4)))
    pads = _pads(xs, ws, "SAME")
    dw_ref = _conv_filter_grad_ref(x.double().numpy(), g.double().numpy(), ws, (1, 1), "SAME")
    dx_ref = _conv_input_grad_ref(w.double().numpy(), g.double().numpy(), xs, (1, 1), "SAME")
    for input_gradient_first in (True, False):
        counted_spectra.clear()
        conv_fft.forward(x, w, pads)
        if input_gradient_first:
            dx = conv_fft.backprop_input(g, w, pads, 14, 14)
        dw = conv_fft.backprop_filter(x, g, pads, 5, 5)
        if not input_gradient_first:
            dx = conv_fft.backprop_input(g, w, pads, 14, 14)
        assert [t is x for t in counted_spectra] == [True, False]   # x once, g once
        np.testing.assert_allclose(dw.numpy(), dw_ref, atol=1e-5 * np.abs(dw_ref).max())
        np.testing.assert_allclose(dx.numpy(), dx_ref, atol=1e-5 * np.abs(dx_ref).max())
    # each spectrum is taken once: a second filter gradient transforms both tensors again
    counted_spectra.clear()
    conv_fft.backprop_filter(x, g, pads, 5, 5)
    assert len(counted_spectra) == 2


def test_a_tensor_written_in_place_is_transformed_again(counted_spectra):
    xs, ws = (1, 8, 8, 2), (3, 3, 2, 2)
    x, w = _t(rng.uniform(-1, 1, xs)), _t(rng.uniform(-1, 1, ws))
    g = _t(rng.uniform(-1, 1, (1, 8, 8, 2)))
    pads = _pads(xs, ws, "SAME")
    conv_fft.forward(x, w, pads)
    x.mul_(2.0)          # bumps the version counter the shared entry recorded
    dw = conv_fft.backprop_filter(x, g, pads, 3, 3)
    assert sum(t is x for t in counted_spectra) == 2
    dw_ref = _conv_filter_grad_ref(x.double().numpy(), g.double().numpy(), ws, (1, 1), "SAME")
    np.testing.assert_allclose(dw.numpy(), dw_ref, atol=1e-5 * np.abs(dw_ref).max())


def test_spectra_nobody_takes_are_dropped(counted_spectra):
    w = _t(rng.uniform(-1, 1, (3, 3, 1, 1)))
    kept = [_t(rng.uniform(-1, 1, (1, 6, 6, 1))) for _ in range(conv_fft.SHARED_SPECTRA + 3)]
    for x in kept:
        conv_fft.forward(x, w, (1, 1, 1, 1))   # inference: no gradient takes them
    assert len(conv_fft._shared) == conv_fft.SHARED_SPECTRA
    assert all(entry[0] is not kept[0] for entry in conv_fft._shared.values())


def test_a_pass_never_takes_the_spectrum_it_left(counted_spectra):
    """A forward pass (or an input gradient) run again on the same tensor transforms it again,
    even when its memory changed without the version counter knowing (a NumPy view's write,
    as a variable's raw in-place update would): the filter gradient after it then takes the
    new spectrum."""
    xs, ws = (1, 8, 8, 2), (3, 3, 2, 2)
    x, w = _t(rng.uniform(-1, 1, xs)), _t(rng.uniform(-1, 1, ws))
    g = _t(rng.uniform(-1, 1, (1, 8, 8, 2)))
    pads = _pads(xs, ws, "SAME")
    conv_fft.forward(x, w, pads)
    conv_fft.backprop_input(g, w, pads, 8, 8)
    x.numpy()[...] *= -3.0
    g.numpy()[...] *= 0.5
    conv_fft.forward(x, w, pads)
    dx = conv_fft.backprop_input(g, w, pads, 8, 8)
    dw = conv_fft.backprop_filter(x, g, pads, 3, 3)
    assert [t is x for t in counted_spectra] == [True, False, True, False]
    x64, g64 = x.double().numpy(), g.double().numpy()
    dw_ref = _conv_filter_grad_ref(x64, g64, ws, (1, 1), "SAME")
    dx_ref = _conv_input_grad_ref(w.double().numpy(), g64, xs, (1, 1), "SAME")
    np.testing.assert_allclose(dw.numpy(), dw_ref, atol=1e-5 * np.abs(dw_ref).max())
    np.testing.assert_allclose(dx.numpy(), dx_ref, atol=1e-5 * np.abs(dx_ref).max())


def test_the_seconds_spent_on_spectra_left_for_another_pass_are_reported(counted_spectra):
    x, w = _t(rng.uniform(-1, 1, (1, 8, 8, 2))), _t(rng.uniform(-1, 1, (3, 3, 2, 2)))
    conv_fft.take_left_seconds()
    conv_fft.forward(x, w, (1, 1, 1, 1))                 # leaves x's spectrum
    assert conv_fft.take_left_seconds() > 0
    assert conv_fft.take_left_seconds() == 0.0           # taken: reset
    g = _t(rng.uniform(-1, 1, (1, 8, 8, 2)))
    conv_fft.backprop_filter(x, g, (1, 1, 1, 1), 3, 3)   # takes x's, leaves g's
    assert conv_fft.take_left_seconds() > 0
    conv_fft.backprop_input(g, w, (1, 1, 1, 1), 8, 8)    # takes g's: leaves nothing
    assert conv_fft.take_left_seconds() == 0.0


def test_transform_matrices_hold_exact_zeros_at_quarter_turns():
    # float64's cos(pi / 2) is 6e-17: such entries multiplied through the transforms' GEMMs
    # make subnormal floats, which some CPUs (AMD Zen 4) compute on a slow path (2x there)
    cpu = torch.device("cpu")
    matrices = [*conv_fft._forward_matrices(14, 14, 16, 16, cpu),
                *conv_fft._inverse_matrices(14, 14, 16, 16, cpu),
                conv_fft._tap_matrix(5, 5, 16, 16, 2, 2, cpu),
                conv_fft._filter_matrix(5, 5, 16, 16, 2, 2, True, cpu),
                conv_fft._filter_matrix(5, 5, 16, 16, 2, 2, False, cpu)]
    for m in matrices:
        magnitude = m.abs()
        assert bool(((magnitude == 0) | (magnitude > 1e-4)).all())
        assert int((magnitude == 0).sum()) > 0
