"""The modified discrete cosine transform: `tf.signal.mdct` and `inverse_mdct`.

An MDCT frame of N = frame_length samples (a multiple of 4, frames N / 2 apart) folds its
quarters (a, b, c, d) into the N / 2 samples (-c_r - d, a - b_r) (`_r`: reversed) and takes
their type-IV DCT; the inverse unfolds a type-IV DCT (its own inverse up to 2 / N) into
(y1, -y1_r, -y0_r, -y0) and overlap-adds the windowed frames. With a power-complementary
window (the default Vorbis window, or a Kaiser-Bessel-derived one) the two reconstruct the
signal away from its ends.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import floor_div, multiply, negative
from ndflow.ops.array_reorder import reverse
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split
from ndflow.ops.cast import cast
from ndflow.ops.signal.dct_ops import dct
from ndflow.ops.signal.shape_ops import frame, overlap_and_add, scalar_int, static_int
from ndflow.ops.signal.window_ops import vorbis_window


def _windowed(frames, window_fn, length, dtype):
    if window_fn is None:
        return multiply(frames, 1.0 / np.sqrt(2))
    return multiply(frames, window_fn(length, dtype=dtype))


@tf_export("signal.mdct")
def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None,
         name=None) -> Tensor:
    """`tf.signal.mdct`: `[..., frames, frame_length // 2]` MDCT coefficients of frames
    frame_length // 2 apart (`norm="ortho"`: the orthonormal DCT-IV)."""
    with name_scope(name, "mdct"):
        signals = convert_to_tensor(signals, name="signals")
        if signals.shape.rank is not None and signals.shape.rank < 1:
            raise ValueError(f"Shape {signals.shape} must have rank at least 1")
        frame_length = scalar_int(frame_length, "frame_length")
        static = static_int(frame_length)
        if static is not None and static % 4 != 0:
            raise ValueError("The frame length must be a multiple of 4.")
        step = floor_div(frame_length, 2) if static is None else static // 2
        frames = frame(signals, frame_length, step, pad_end=pad_end)
        frames = _windowed(frames, window_fn, frame_length, frames.dtype)
        a, b, c, d = split(frames, 4, axis=-1)
        folded = concat([negative(reverse(c, [-1])) - d, a - reverse(b, [-1])], -1)
        return dct(folded, type=4, norm=norm)


@tf_export("signal.inverse_mdct")
def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None) -> Tensor:
    """`tf.signal.inverse_mdct`: the signal whose MDCT is `mdcts`
    `[..., frames, frame_length // 2]`, by overlap-adding the unfolded frames."""
    with name_scope(name, "inverse_mdct"):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        if mdcts.shape.rank is not None and mdcts.shape.rank < 2:
            raise ValueError(f"Shape {mdcts.shape} must have rank at least 2")
        half = mdcts.shape[-1]
        if half is None:
            raise NotImplementedError("inverse_mdct needs a static number of coefficients")
        if norm is None:
            y = multiply(dct(mdcts, type=4), cast(0.5 / half, mdcts.dtype))
        elif norm == "ortho":
            y = dct(mdcts, type=4, norm="ortho")
        else:
            raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
        y0, y1 = split(y, 2, axis=-1)
        frames = concat([y1, negative(reverse(y1, [-1])), negative(reverse(y0, [-1])),
                         negative(y0)], -1)
        frames = _windowed(frames, window_fn, convert_to_tensor(2 * half, dtypes.int32),
                           mdcts.dtype)
        return overlap_and_add(frames, half)
