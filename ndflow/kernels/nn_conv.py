"""ATen kernels for convolutions and BiasAdd, taking TF's NHWC layout directly.

An NHWC tensor viewed through `permute(0, 3, 1, 2)` is an NCHW tensor with channels_last
strides (no copy); ATen's oneDNN convolution consumes it as is and returns a channels_last
result, whose inverse permute is again a contiguous NHWC tensor. HWIO filters become OIHW
through `permute(3, 2, 0, 1)`. TF's asymmetric SAME padding (the extra row/column at the
bottom/right) is applied with one padded copy (padding.py) only when the two sides differ.
Padding arithmetic runs in the factory when static shapes are known, else once per new
input shape.

So NHWC graphs stay NHWC end to end: conv, BiasAdd, activations and pooling (which views
its input the same way) pass channels_last data along with no transposes or copies. With
TF_ENABLE_NHWC=1 (NVIDIA's switch for computing convolutions in NHWC) NCHW convolutions do
too: their input is made channels_last once (a no-op when it already is), and since ATen's
elementwise ops, NCHW BiasAdd and pooling keep the memory format of their input, the data
stays channels-last from one convolution to the next.
"""

from __future__ import annotations

import torch

from ndflow.core import config
from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import autotune, conv_fft, conv_narrow_numba, depthwise_numba, gemm
from ndflow.kernels.autotune import COL2IM, FFT, FLIPPED, NCHW, VECTOR
from ndflow.kernels.padding import constant_pad
from ndflow.kernels.permute import permute_copy
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_conv
from ndflow.ops.nn_common import explicit_hw, hw, window_geometry

aten = torch.ops.aten
_CL = torch.channels_last


def _nhwc_for_nchw() -> bool:
    """TF_ENABLE_NHWC, read when a kernel is built; a malformed value counts as off."""
    try:
        return config.get(config.TF_ENABLE_NHWC)
    except ValueError:
        return False


# The passes of one convolution, and the pass that takes the spectrum each one's FFT leaves
# (conv_fft.py): the input's and the output gradient's for the filter gradient, the output
# gradient's for the input gradient.
_PASSES = ("forward", "backprop_input", "backprop_filter")
_LEFT_BY = {"forward": conv_fft.FORWARD, "backprop_input": conv_fft.INPUT_GRADIENT,
            "backprop_filter": conv_fft.FILTER_GRADIENT}
_TAKER = {"forward": "backprop_filter", "backprop_input": "backprop_filter",
          "backprop_filter": "backprop_input"}


def _fft_credit(key):
    """`credit(algorithm)` for the tuner (autotune.py): the seconds the pass `key`'s FFT spent
    on spectra it left for another pass, work that pass will not redo, unless that pass is
    already tuned to another algorithm (it never takes them)."""
    taker = (_TAKER[key[0]],) + key[1:]

    def credit(algorithm: str) -> float:
        if algorithm != FFT:
            return 0.0
        left = conv_fft.take_left_seconds()
        return left if autotune.decided(taker) in (None, FFT) else 0.0
    return credit


def _forget_fft_partners(key, t: torch.Tensor) -> None:
    """After the pass `key` (of tensor `t`) was tuned to an algorithm other than the FFT, the
    spectra its timed FFT runs left are dropped, and the same convolution's passes tuned to
    the FFT are timed again: that choice counted on sharing spectra with this pass (a credit,
    or a spectrum taken while timed), which it will not. A U-Net's 3x3 96->32 filter
    gradient, timed at ~2.0 ms on the spectra the other two passes' timed runs had left, ran
    4.7-4.9 ms a step beside their oneDNN kernels, where oneDNN's own took 2.2."""
    conv_fft.drop_left(t, _LEFT_BY[key[0]])
    for kind in _PASSES:
        other = (kind,) + key[1:]
        if kind != key[0] and autotune.decided(other) == FFT:
            autotune.forget(other)


class ConvGeometry:
    """Attribute parsing and padding for one conv node; the callables below use it."""

    def __init__(self, node, depthwise: bool = False):
        a = node.attrs
        self.op = node.type
        self.fmt = a["data_format"]
        self.nhwc = self.fmt == "NHWC"
        self.stride = list(hw(a["strides"], self.fmt))
        self.dilation = list(hw(a["dilations"], self.fmt))
        self.padding = a["padding"]
        self.explicit = explicit_hw(a.get("explicit_paddings") or [], self.fmt)
        self.depthwise = depthwise
        # TF_ENABLE_NHWC: NCHW convolutions compute on channels-last memory too (module doc).
        self.channels_last = self.nhwc or (not depthwise and _nhwc_for_nchw())
        self._pads: dict = {}
        self._fft: dict = {}   # tuning key -> whether the FFT algorithm is a candidate

    def pads(self, h: int, w: int, kh: int, kw: int):
        key = (h, w, kh, kw)
        p = self._pads.get(key)
        if p is None:
            try:
                _, p = window_geometry(h, w, kh, kw, self.stride, self.dilation, self.padding,
                                       self.explicit)
            except ValueError as e:
                raise InvalidArgumentError(None, None, str(e)) from None
            self._pads[key] = p
        return p

    def narrow(self, x: torch.Tensor, w_shape, channels_of_x: int = 2) -> tuple:
        """(VECTOR,) where conv_narrow_numba's kernels can run this convolution of the NHWC
        `x` (or with its output gradient `x`, `channels_of_x` 3: 1-4 output channels, one
        group), else ()."""
        ok = (self.nhwc and not self.depthwise and len(w_shape) == 4
              and conv_narrow_numba.applies(x, w_shape, channels_of_x))
        return (VECTOR,) if ok else ()

    def narrow_forward(self, x, w, bias=None) -> torch.Tensor:
        """The convolution (+ bias) by conv_narrow_numba's kernel (`narrow` said so)."""
        kh, kw = w.shape[0], w.shape[1]
        (oh, ow), pads = window_geometry(x.shape[1], x.shape[2], kh, kw, self.stride,
                                         self.dilation, self.padding, self.explicit)
        return conv_narrow_numba.forward(x, w, self.stride, self.dilation, pads, oh, ow, bias)

    def to_nchw(self, x: torch.Tensor, plain: bool = False) -> torch.Tensor:
        """The NCHW view ATen convolves; `plain`: copied to NCHW memory (autotune.py)."""
        if self.nhwc:
            v = x.permute(0, 3, 1, 2)
            return v.contiguous() if plain else v
        if self.channels_last and x.dim() == 4:
            return x.contiguous(memory_format=_CL)  # a no-op once the graph's data is NHWC
        return x

    def from_nchw(self, y: torch.Tensor, plain: bool = False) -> torch.Tensor:
        if not self.nhwc:
            return y
        y = y.permute(0, 2, 3, 1)
        return y.contiguous() if plain else y

    def tuned(self, kind: str, x_shape, w_shape, t: torch.Tensor, run, extra=()):
        """`run(algorithm)` with the algorithm autotune.py picks for this shape (NHWC
        float32 CPU convolutions; everything else runs the default, ATen on the graph's
        layout); `t`: the tensor whose spectrum the pass's FFT leaves for another (x for the
        forward pass, the output gradient for the gradients); `extra`: more candidates."""
        if not self.nhwc or self.depthwise or t.dtype != torch.float32 or \
                t.device.type != "cpu" or len(x_shape) != 4:
            return run(autotune.CHANNELS_LAST)
        n, h, wd, _ = x_shape
        kh, kw, cin, cout = w_shape
        flops = 2.0 * n * h * wd * kh * kw * cin * cout / (self.stride[0] * self.stride[1])
        key = (kind, tuple(x_shape), tuple(w_shape), tuple(self.stride),
               tuple(self.dilation), self.padding, tuple(self.explicit))
        fft = self._fft.get(key)
        if fft is None:
            fft = self._fft[key] = x_shape[3] == cin and conv_fft.eligible(
                self.stride, self.dilation, x_shape, w_shape, self.pads(h, wd, kh, kw))
        if not fft:
            return autotune.run_tuned(key, flops, run, autotune.LAYOUTS + tuple(extra))
        undecided = autotune.decided(key) is None
        result = autotune.run_tuned(key, flops, run, autotune.LAYOUTS + (FFT,) + tuple(extra),
                                    _fft_credit(key))
        if undecided and autotune.decided(key) not in (None, FFT):
            _forget_fft_partners(key, t)
        return result

    def weight(self, w: torch.Tensor, channels_last: bool = False) -> torch.Tensor:
        """HWIO (or depthwise HW,C,M) filter -> OIHW for ATen: a view, or with
        `channels_last` (the data is) a channels-last copy (OHWI memory)."""
        if self.depthwise:
            kh, kw, c, m = w.shape
            w = w.reshape(kh, kw, 1, c * m)
        wv = w.permute(3, 2, 0, 1)
        # oneDNN reorders plain weights itself; a tiny contiguous copy is faster for few
        # input channels (measured 0.6 vs 1.7 ms for MNIST's 5x5x1x32).
        if wv.shape[1] < 4:
            return wv.contiguous()
        if channels_last and not self.depthwise:
            # ATen would make it so itself, copying element by element (a DCGAN's 5x5x64x128
            # filter: 97 us, 49 by the blocked transpose; 5x5x256x128: 1.7 ms, 0.22)
            return permute_copy(w, (3, 0, 1, 2)).permute(0, 3, 1, 2)
        return wv

    def pad_input(self, xv: torch.Tensor, p, plain: bool = False):
        """(input, symmetric [pad_h, pad_w]): extra bottom/right rows padded explicitly."""
        pt, pb, pl, pr = p
        if pt == pb and pl == pr:
            return xv, [pt, pl]
        mh, mw = min(pt, pb), min(pl, pr)
        extra = [pl - mw, pr - mw, pt - mh, pb - mh]
        if self.nhwc and not plain:
            x = constant_pad(xv.permute(0, 2, 3, 1), [0, 0] + extra)
            return x.permute(0, 3, 1, 2), [mh, mw]
        return constant_pad(xv, extra), [mh, mw]

    def check_out(self, h: int, w: int, kh: int, kw: int, g) -> None:
        """TF's check that out_backprop has the forward output's spatial size."""
        (oh, ow), _ = window_geometry(h, w, kh, kw, self.stride, self.dilation, self.padding,
                                      self.explicit)
        hi, wi = (1, 2) if self.nhwc else (2, 3)
        prefix = {"Conv2DBackpropInput": "Conv2DCustomBackpropInput",
                  "Conv2DBackpropFilter": "Conv2DCustomBackpropFilter"}.get(self.op, self.op)
        for dim, size, k, out, s, d in ((hi, h, kh, oh, self.stride[0], self.dilation[0]),
                                        (wi, w, kw, ow, self.stride[1], self.dilation[1])):
            if g.shape[dim] != out:
                raise InvalidArgumentError(
                    None, None, f"{prefix}: Size of out_backprop doesn't match computed: "
                    f"actual = {g.shape[dim]}, computed = {out} spatial_dim: {dim} input: "
                    f"{size} filter: {k} output: {g.shape[dim]} stride: {s} dilation: {d}")

    def groups(self, in_depth: int, w_in: int) -> int:
        if self.depthwise:
            if in_depth != w_in:
                raise InvalidArgumentError(
                    None, None, f"input and filter must have the same depth: {in_depth} vs "
                    f"{w_in}")
            return in_depth
        if w_in == 0 or in_depth % w_in:
            raise InvalidArgumentError(None, None, f"input depth must be evenly divisible by "
                                       f"filter depth: {in_depth} vs {w_in}")
        return in_depth // w_in

    def forward_operands(self, x: torch.Tensor, w: torch.Tensor, plain: bool):
        """(NCHW input padded for TF's windows, OIHW filter, [pad_h, pad_w], groups): a
        forward convolution's ATen arguments, `plain` as in to_nchw."""
        xv = self.to_nchw(x, plain)
        wv = self.weight(w, self.channels_last and not plain)
        groups = self.groups(xv.shape[1], w.shape[2])
        xv, pad = self.pad_input(xv, self.pads(xv.shape[2], xv.shape[3], w.shape[0],
                                               w.shape[1]), plain)
        return xv, wv, pad, groups


def _int_safe(node, fn):
    """Integer convolutions (TF allows int32 Conv2D) computed in float64, rounded back and
    wrapped to the integer type as TF's integer arithmetic wraps (exact while the sums stay
    below 2**53: through int64, whose narrowing keeps the low bits)."""
    if node.attrs["T"].is_floating:
        return fn
    dt = node.attrs["T"].torch_dtype
    data = [i for i, d in enumerate(node.input_dtypes) if d is node.attrs["T"]]

    def int_conv(*args):
        args = [a.double() if i in data else a for i, a in enumerate(args)]
        return torch.round(fn(*args)).to(torch.int64).to(dt)
    return int_conv


def _no_rows(c, x, w):
    """The empty output of an input without rows or columns (ATen refuses to convolve it; TF
    computes nothing), None for other inputs."""
    hi, wi = (1, 2) if c.nhwc else (2, 3)
    if x.shape[hi] and x.shape[wi] or not x.shape[3 if c.nhwc else 1] or not w.numel():
        return None
    (oh, ow), _ = window_geometry(x.shape[hi], x.shape[wi], w.shape[0], w.shape[1], c.stride,
                                  c.dilation, c.padding, c.explicit)
    cout = w.shape[2] * w.shape[3] if c.depthwise else w.shape[3]
    shape = (x.shape[0], oh, ow, cout) if c.nhwc else (x.shape[0], cout, oh, ow)
    return x.new_zeros(shape)


def _forward(node, depthwise=False):
    c = ConvGeometry(node, depthwise)
    leave = node.read_by(0, "Conv2DBackpropFilter")   # the FFT's spectrum of x, for it

    def conv(x, w):
        empty = _no_rows(c, x, w)
        if empty is not None:
            return empty

        def run(algorithm):
            if algorithm == VECTOR:
                return c.narrow_forward(x, w)
            if algorithm == FFT:
                y = conv_fft.forward(x, w, c.pads(x.shape[1], x.shape[2], w.shape[0],
                                                  w.shape[1]), leave=leave)
                if conv_fft.all_finite(y):
                    return y
            plain = algorithm == NCHW
            xv, wv, pad, groups = c.forward_operands(x, w, plain)
            y = aten.convolution(xv, wv, None, c.stride, pad, c.dilation, False, [0, 0],
                                 groups)
            return c.from_nchw(y, plain)
        return c.tuned("forward", x.shape, w.shape, x, run, c.narrow(x, w.shape))
    return conv


# Backprop kernels read the fed sizes on every call, never node.output_shapes: an eager
# kernel is cached by input shapes only, and two calls can share them with different sizes
# (x of 7 or 8 rows with stride 2 gives the same dy).


def _flipped_output_padding(c, h, wd, kh, kw, g, pads):
    """ATen's (output_padding_h, output_padding_w) for the input gradient as a transposed
    convolution of the spatially flipped g and filter, padded by the bottom/right pads: the
    flip moves TF's larger bottom/right SAME pad to the top/left, where a symmetric pad with
    output_padding yields exactly the h x w rows and columns; None where ATen's bounds on
    output_padding (below the stride or the dilation) rule it out."""
    pt, pb, pl, pr = pads
    hi, wi = (1, 2) if c.nhwc else (2, 3)
    result = []
    for size, k, out, p, s, d in ((h, kh, g.shape[hi], pb, c.stride[0], c.dilation[0]),
                                  (wd, kw, g.shape[wi], pr, c.stride[1], c.dilation[1])):
        op = size - ((out - 1) * s + d * (k - 1) + 1) + 2 * p
        if not 0 <= op < max(s, d):
            return None
        result.append(op)
    return result


def _col2im_input_grad(c, g, w, n: int, h: int, wd: int, pads) -> torch.Tensor:
    """The input gradient as TF's CPU kernel (Conv2DCustomBackpropInput) computes it: one
    GEMM of g's rows with the filter's columns gives every window's contribution, and col2im
    (ATen's `fold`) adds the overlapping windows into the input's pixels. For few input
    channels oneDNN's direct kernel runs far below the GEMM's rate (a DCGAN's 5x5 stride-2
    64->1 transposed convolution at batch 64: ~2 ms against 0.66 ms, Zen 5)."""
    kh, kw, cin, cout = w.shape
    oh, ow = g.shape[1], g.shape[2]
    cols = gemm.linear(g.reshape(-1, cout), w.reshape(-1, cout))   # [n*oh*ow, kh*kw*cin]
    cols = cols.view(n, oh * ow, kh, kw, cin).permute(0, 4, 2, 3, 1).reshape(
        n, cin * kh * kw, oh * ow)
    pt, pb, pl, pr = pads
    dx = torch.nn.functional.fold(cols, (h + pt + pb, wd + pl + pr), (kh, kw),
                                  dilation=c.dilation, stride=c.stride)
    return dx[:, :, pt:pt + h, pl:pl + wd].permute(0, 2, 3, 1).contiguous()


def _backprop_input(node, depthwise=False):
    c = ConvGeometry(node, depthwise)
    leave = node.read_by(2, "Conv2DBackpropFilter")   # the FFT's spectrum of g, for it

    def backprop_input(sizes, w, g):
        dims = tuple(int(v) for v in sizes.tolist())
        if c.nhwc:
            n, h, wd, ch = dims
        else:
            n, ch, h, wd = dims
        groups = c.groups(ch, w.shape[2])
        pt, pb, pl, pr = c.pads(h, wd, w.shape[0], w.shape[1])
        c.check_out(h, wd, w.shape[0], w.shape[1], g)
        mh, mw = min(pt, pb), min(pl, pr)
        hp, wp = h + pt + pb - 2 * mh, wd + pl + pr - 2 * mw
        flipped = None if (pt == pb and pl == pr) else _flipped_output_padding(
            c, h, wd, w.shape[0], w.shape[1], g, (pt, pb, pl, pr))

        def run(algorithm):
            if algorithm == VECTOR:
                return conv_narrow_numba.backprop_input(g, w, h, wd, c.stride, c.dilation,
                                                        (pt, pb, pl, pr))
            if algorithm == FFT:
                dx = conv_fft.backprop_input(g, w, (pt, pb, pl, pr), h, wd, leave)
                if conv_fft.all_finite(dx):
                    return dx
            if algorithm == COL2IM:
                return _col2im_input_grad(c, g, w, n, h, wd, (pt, pb, pl, pr))
            plain = algorithm == NCHW
            if algorithm == FLIPPED:
                # the HWIO filter flipped (whole rows of channels move), then reordered
                wv = c.weight(w.flip(0, 1), c.channels_last)
                dx = aten.convolution(c.to_nchw(g).flip(2, 3), wv, None, c.stride,
                                      [pb, pr], c.dilation, True, flipped, groups)
                return c.from_nchw(dx.flip(2, 3))
            wv = c.weight(w, c.channels_last and not plain)
            gv = c.to_nchw(g, plain)
            fmt = _CL if c.channels_last and not plain else torch.contiguous_format
            dummy = torch.empty((n, ch, hp, wp), dtype=g.dtype, device=g.device,
                                memory_format=fmt)
            dx = aten.convolution_backward(gv, dummy, wv, None, c.stride, [mh, mw],
                                           c.dilation, False, [0, 0], groups,
                                           [True, False, False])[0]
            if hp != h or wp != wd:
                # the rows and columns kept, copied out: the tuner then times what the
                # gradient costs (a DCGAN's BatchNorm gradient took 12.9 ms on such a view
                # where it takes 0.7 on a dense one)
                dx = dx[:, :, pt - mh:pt - mh + h, pl - mw:pl - mw + wd].contiguous(
                    memory_format=fmt)
            return c.from_nchw(dx, plain)
        extra = () if flipped is None else (FLIPPED,)
        # col2im writes and reads back a window per output pixel: a candidate where those
        # windows are no wider than the gradient's own rows (few input channels)
        if groups == 1 and w.shape[0] * w.shape[1] * w.shape[2] <= w.shape[3]:
            extra += (COL2IM,)
        if groups == 1 and ch == w.shape[2]:
            extra += c.narrow(g, w.shape, 3)
        return c.tuned("backprop_input", dims, w.shape, g, run, extra)
    return backprop_input


def _backprop_filter(node, depthwise=False):
    c = ConvGeometry(node, depthwise)
    leave = node.read_by(2, "Conv2DBackpropInput")    # the FFT's spectrum of g, for it

    def backprop_filter(x, sizes, g):
        kh, kw, cin, cout = (int(v) for v in sizes.tolist())
        o, i = (cin * cout, 1) if depthwise else (cout, cin)

        def run(algorithm):
            plain = algorithm == NCHW
            xv = c.to_nchw(x, plain)
            gv = c.to_nchw(g, plain)
            groups = c.groups(xv.shape[1], cin)
            p = c.pads(xv.shape[2], xv.shape[3], kh, kw)
            c.check_out(xv.shape[2], xv.shape[3], kh, kw, g)
            if algorithm == VECTOR and depthwise:
                return depthwise_numba.backprop_filter(x, g, kh, kw, c.stride, c.dilation, p)
            if algorithm == VECTOR:
                return conv_narrow_numba.backprop_filter(x, g, kh, kw, c.stride, c.dilation, p)
            if algorithm == FFT:
                dw = conv_fft.backprop_filter(x, g, p, kh, kw, leave)
                if conv_fft.all_finite(dw):
                    return dw
            xv, pad = c.pad_input(xv, p, plain)
            # ATen makes the weight (here only its shape's stand-in) and so the gradient it
            # returns the input's memory format: a plain stand-in beside channels-last data
            # cost a copy of it and one of the gradient back (DCGAN's 5x5x64x128 filter
            # gradient 5.6 -> 5.1 ms)
            fmt = _CL if c.channels_last and not plain and not depthwise else \
                torch.contiguous_format
            dummy = torch.empty((o, i, kh, kw), dtype=g.dtype, device=g.device,
                                memory_format=fmt)
            dw = aten.convolution_backward(gv, xv, dummy, None, c.stride, pad, c.dilation,
                                           False, [0, 0], groups, [False, True, False])[1]
            if depthwise:
                return dw.permute(2, 3, 1, 0).reshape(kh, kw, cin, cout)
            if dw.is_contiguous(memory_format=_CL) and not dw.is_contiguous():
                return permute_copy(dw.permute(0, 2, 3, 1), (1, 2, 3, 0))   # OHWI -> HWIO
            return dw.permute(2, 3, 1, 0).contiguous()
        if depthwise and c.nhwc and depthwise_numba.applies(x, g, cout) and \
                x.shape[3] == cin == g.shape[3] and x.shape[0] == g.shape[0]:
            # ATen's grouped convolution or the vector kernel, timed per shape: the kernel
            # wins on small images (EfficientNet's 3x3 and 6x6 layers: 2.4 -> 0.23 ms),
            # ATen on large ones
            key = ("depthwise_filter", tuple(x.shape), (kh, kw, cin), tuple(c.stride),
                   tuple(c.dilation), c.padding, tuple(c.explicit))
            return autotune.run_tuned(key, 2.0 * g.numel() * kh * kw, run,
                                      (autotune.CHANNELS_LAST, VECTOR))
        narrow = c.narrow(x, (kh, kw, cin, cout)) if g.shape[0] == x.shape[0] else ()
        return c.tuned("backprop_filter", x.shape, (kh, kw, cin, cout), g, run, narrow)
    return backprop_filter


@kernel(nn_conv.Conv2D)
def _conv2d(node):
    return _int_safe(node, _forward(node))


@kernel(nn_conv.Conv2DBackpropInput)
def _conv2d_backprop_input(node):
    return _int_safe(node, _backprop_input(node))


@kernel(nn_conv.Conv2DBackpropFilter)
def _conv2d_backprop_filter(node):
    return _backprop_filter(node)


@kernel(nn_conv.DepthwiseConv2dNative)
def _depthwise(node):
    return _forward(node, depthwise=True)


@kernel(nn_conv.DepthwiseConv2dNativeBackpropInput)
def _depthwise_backprop_input(node):
    return _backprop_input(node, depthwise=True)


@kernel(nn_conv.DepthwiseConv2dNativeBackpropFilter)
def _depthwise_backprop_filter(node):
    return _backprop_filter(node, depthwise=True)


# -- BiasAdd ---------------------------------------------------------------------------------------


def _channel_dim(fmt: str, rank: int) -> int:
    return 1 if fmt == "NCHW" and rank >= 3 else rank - 1


@kernel(nn_conv.BiasAdd)
def _bias_add(node):
    fmt = node.attrs["data_format"]

    def bias_add(x, b):
        c = _channel_dim(fmt, x.dim())
        if x.shape[c] != b.shape[0]:
            where = "last dimension" if c == x.dim() - 1 else "channel dimension"
            raise InvalidArgumentError(
                None, None, f"Must provide as many biases as the {where} of the "
                f"input tensor: [{b.shape[0]}] vs. [{','.join(str(d) for d in x.shape)}]")
        if c == x.dim() - 1:
            return torch.add(x, b)
        return torch.add(x, b.view([-1] + [1] * (x.dim() - c - 1)))
    return bias_add


# ATen's parallel sum over the rows of a narrow [rows, channels] matrix (above its grain of
# 32768 values) ran at a fifth of the cache's bandwidth: [131072, 16] took 164 us. Rows folded
# side by side into at least FOLDED_WIDTH lanes first: 52 us, then a small [k, channels] sum.
FOLDED_WIDTH = 128
_ATEN_GRAIN = 32768


def _column_sums(g2: torch.Tensor) -> torch.Tensor:
    """g2.sum(0) of a contiguous [rows, channels] matrix."""
    rows, c = g2.shape
    k = 1
    while k * c < FOLDED_WIDTH and rows % (2 * k) == 0:
        k *= 2
    if k == 1 or g2.numel() <= _ATEN_GRAIN:
        return g2.sum(0)
    return g2.view(rows // k, k * c).sum(0).view(k, c).sum(0)


@kernel(nn_conv.BiasAddGrad)
def _bias_add_grad(node):
    fmt = node.attrs["data_format"]

    def bias_add_grad(g):
        c = _channel_dim(fmt, g.dim())
        if c == g.dim() - 1:
            if g.is_contiguous() and g.shape[-1]:
                return _column_sums(g.view(-1, g.shape[-1]))
            return g.sum(dim=list(range(g.dim() - 1)))
        return g.sum(dim=[d for d in range(g.dim()) if d != c])
    return bias_add_grad
