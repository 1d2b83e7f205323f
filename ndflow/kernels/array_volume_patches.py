"""ATen kernel of ExtractVolumePatches (ops/array_volume_patches.py).

The patches are one strided view of the input, zero padded first where a window reaches past
it (SAME padding), from the first window's start (inside the input where TF's Eigen kernel
pads by a negative amount): [batch, out_planes,
out_rows, out_cols, kp, kr, kc, depth] with the strides of the padded tensor, reshaped
(copied) to [batch, out_planes, out_rows, out_cols, kp * kr * kc * depth].
"""

from __future__ import annotations

import math

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels import unsigned
from ndflow.kernels.registry import kernel
from ndflow.ops import array_volume_patches as ops

# The op only moves values: uint16/32/64 inputs run on their same-width signed types
# (kernels/unsigned.py).
unsigned.POLICY.setdefault(ops.ExtractVolumePatches.name, unsigned.BITS)


def _bad(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


@kernel(ops.ExtractVolumePatches)
def _extract_volume_patches(node):
    attrs = node.attrs
    ops.check_kernel_attrs(attrs)
    k = [int(v) for v in attrs["ksizes"][1:4]]
    s = [int(v) for v in attrs["strides"][1:4]]
    padding = attrs["padding"]

    def extract_volume_patches(x):
        if x.dim() != 5:
            raise _bad(f"input must be 5-dimensional{fmt(x.shape)}")
        b, depth = x.shape[0], x.shape[4]
        out, before = [], []
        for n, kk, ss in zip(x.shape[1:4], k, s):
            try:
                o, p = ops.patch_size(n, kk, ss, padding)
            except ValueError as e:
                raise _bad(str(e)) from None
            out.append(o)
            before.append(p)
        shape = [b] + out + [k[0] * k[1] * k[2] * depth]
        if math.prod(shape) == 0:
            return x.new_zeros(shape)
        # Padded coordinates: the input starts at max(before, 0); window o at o * s + offset,
        # where offset = max(-before, 0) (Eigen's negative padding skips that much input).
        pad = [max(p, 0) for p in before]
        offset = [max(-p, 0) for p in before]
        full = [max(n + p, f + (o - 1) * ss + kk) for n, p, f, o, ss, kk in
                zip(x.shape[1:4], pad, offset, out, s, k)]
        if full != list(x.shape[1:4]) or any(pad):
            xp = x.new_zeros([b] + full + [depth])
            xp[:, pad[0]:pad[0] + x.shape[1], pad[1]:pad[1] + x.shape[2],
               pad[2]:pad[2] + x.shape[3]] = x
        else:
            xp = x.contiguous()
        xp = xp[:, offset[0]:, offset[1]:, offset[2]:]
        sb, sp, sr, sc, sd = xp.stride()
        view = xp.as_strided([b] + out + k + [depth],
                             [sb, s[0] * sp, s[1] * sr, s[2] * sc, sp, sr, sc, sd])
        return view.reshape(shape)
    return extract_volume_patches
