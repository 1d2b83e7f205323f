"""`x.permute(perm).contiguous()`, through a blocked transpose where the permutation moves
the innermost dimension.

Dimensions that stay next to each other in the same order merge, so a permutation of a
contiguous tensor reduces to a smaller one: NHWC -> NCHW ((0, 3, 1, 2) on [N, H, W, C]) is
(0, 2, 1) on [N, H*W, C], a batch of matrix transposes; HWIO -> OHWI, the channels-last
OIHW filter oneDNN convolves with, is (1, 0) on [H*W*I, O]. Those two forms run in
kernels/transpose_numba.py's 16 x 16 blocks (float32, at least `MIN_ELEMENTS`, both matrix
sides at least 16); every other permutation, one that keeps the innermost dimension (whole
rows move: ATen copies those at its copy rate), and every other tensor, run ATen's copy.
"""

from __future__ import annotations

import torch

from ndflow.kernels import transpose_numba

MIN_ELEMENTS = 1 << 16   # below this ATen's copy costs less than a launch of the team (~20 us)
MIN_SIDE = transpose_numba.LANES


def reduced(shape, perm) -> tuple:
    """(shape, perm) with size-1 dimensions dropped and dimensions that stay adjacent in the
    same order merged: the same permutation of the same memory."""
    position = {d: i for i, d in enumerate(d for d in range(len(shape)) if shape[d] != 1)}
    groups = []   # runs of input dimensions that stay adjacent, in output order
    for d in (d for d in perm if d in position):
        if groups and position[d] == position[groups[-1][-1]] + 1:
            groups[-1].append(d)
        else:
            groups.append([d])
    by_input = sorted(groups, key=lambda g: g[0])
    sizes = []
    for g in by_input:
        n = 1
        for d in g:
            n *= shape[d]
        sizes.append(n)
    return tuple(sizes), tuple(by_input.index(g) for g in groups)


def permute_copy(x: torch.Tensor, perm) -> torch.Tensor:
    """A fresh contiguous tensor equal to `x.permute(perm)`."""
    perm = tuple(perm)
    view = x.permute(perm)
    if x.numel() < MIN_ELEMENTS or not x.is_contiguous() or not transpose_numba.applies(x):
        return view.contiguous()
    sizes, order = reduced(tuple(x.shape), perm)
    if order == (1, 0):
        batch, (rows, cols) = 1, sizes
    elif order == (0, 2, 1):
        batch, rows, cols = sizes
    else:
        return view.contiguous()
    if rows < MIN_SIDE or cols < MIN_SIDE:
        return view.contiguous()
    return transpose_numba.transpose(x, batch, rows, cols).view(view.shape)
