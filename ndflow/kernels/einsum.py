"""ATen kernel for Einsum: torch.einsum, plus TF's repeated output labels ("i->ii" writes a
diagonal, as the gradient of a trace needs), which torch.einsum does not accept."""

from __future__ import annotations

import torch

from ndflow.kernels.registry import kernel
from ndflow.ops import einsum as ein


def _diagonal_writer(equation: str, out_subs: str):
    """fn(*inputs) for outputs with repeated labels: einsum to the unique labels, then copy
    into a zero tensor through a strided view whose axes walk the repeated diagonals."""
    head, tail, ell = ein._split(out_subs)
    unique = "".join(dict.fromkeys(head + tail))
    uhead = "".join(c for c in unique if c in head)
    utail = "".join(c for c in unique if c not in head)
    inner = equation.split("->")[0] + "->" + uhead + (ein.ELLIPSIS if ell else "") + utail

    def run(*inputs):
        r = torch.einsum(inner, *inputs)
        nb = r.dim() - len(uhead) - len(utail)
        size = dict(zip(uhead, r.shape[:len(uhead)]))
        size.update(zip(utail, r.shape[r.dim() - len(utail):]))
        batch = list(r.shape[len(uhead):len(uhead) + nb])
        labels = list(head) + ["."] * nb + list(tail)
        out_shape = [size[c] if c != "." else 0 for c in labels]
        bi = 0
        for i, c in enumerate(labels):
            if c == ".":
                out_shape[i] = batch[bi]
                bi += 1
        out = r.new_zeros(out_shape)
        strides = out.stride()
        label_stride = {c: 0 for c in unique}
        for c, s in zip(labels, strides):
            if c != ".":
                label_stride[c] += s
        bstrides = [s for c, s in zip(labels, strides) if c == "."]
        view = out.as_strided(list(r.shape), [label_stride[c] for c in uhead] + bstrides
                              + [label_stride[c] for c in utail])
        view.copy_(r)
        return out

    return run


@kernel(ein.Einsum)
def _einsum(node):
    equation = node.attrs["equation"]
    out_subs = equation.split("->")[1]
    plain = out_subs.replace(ein.ELLIPSIS, "")
    if len(set(plain)) != len(plain):
        return _diagonal_writer(equation, out_subs)
    return lambda *inputs: torch.einsum(equation, *inputs)
