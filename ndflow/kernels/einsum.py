"""ATen kernel for Einsum: torch.einsum, plus TF's repeated output labels ("i->ii" writes a
diagonal, as the gradient of a trace needs), which torch.einsum does not accept. An equation
that is one matrix product (two operands, no batch label: Keras' EinsumDense and its
gradients) runs as one through kernels/gemm.py's per-shape library choice."""

from __future__ import annotations

import torch

from ndflow.kernels import batched_gemm, gemm
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
    product = _matrix_product(equation)
    if product is not None:
        return product
    return lambda *inputs: torch.einsum(equation, *inputs)


def _matrix_product(equation: str):
    """fn(lhs, rhs) computing `equation` as (rows x contracted) @ (contracted x columns),
    batched over the labels in both operands and the output, when each other label is a row
    (lhs and output), a column (rhs and output) or contracted (lhs and rhs); None for anything
    else (ellipses, sums within one operand, an operand without rows or columns)."""
    ins, out = equation.split("->")
    if ein.ELLIPSIS in equation or ins.count(",") != 1:
        return None
    lhs, rhs = ins.split(",")
    if any(len(set(t)) != len(t) for t in (lhs, rhs, out)):
        return None
    batch = [c for c in lhs if c in rhs and c in out]
    rows = [c for c in lhs if c in out and c not in rhs]
    cols = [c for c in rhs if c in out and c not in lhs]
    inner = [c for c in lhs if c in rhs and c not in out]
    if len(batch) + len(rows) + len(inner) != len(lhs) or \
            len(batch) + len(cols) + len(inner) != len(rhs):
        return None
    if not rows or not cols or not inner or len(batch) + len(rows) + len(cols) != len(out):
        return None
    a_perm = [lhs.index(c) for c in batch + rows + inner]
    w_perm = [rhs.index(c) for c in batch + cols + inner]
    b_perm = [rhs.index(c) for c in batch + inner + cols]
    natural = batch + rows + cols
    out_perm = [natural.index(c) for c in out]
    nb, nr, nc = len(batch), len(rows), len(cols)

    def run(a, b):
        lead = [a.shape[i] for i in a_perm[:nb]]
        m = [a.shape[i] for i in a_perm[nb:nb + nr]]
        n = [b.shape[i] for i in w_perm[nb:nb + nc]]
        k = [a.shape[i] for i in a_perm[nb + nr:]]
        if [b.shape[i] for i in w_perm[:nb]] != lead or \
                [b.shape[i] for i in w_perm[nb + nc:]] != k or a.dtype != b.dtype:
            return torch.einsum(equation, a, b)   # ATen's own error for mismatched operands
        if not batch:
            a2 = a.permute(a_perm).reshape(_prod(m), _prod(k))
            w2 = b.permute(w_perm).reshape(_prod(n), _prod(k))
            return gemm.linear(a2, w2).view(m + n).permute(out_perm)
        a3 = a.permute(a_perm).reshape(*lead, _prod(m), _prod(k))
        b3 = b.permute(b_perm).reshape(*lead, _prod(k), _prod(n))
        return batched_gemm.matmul(a3, b3).view(lead + m + n).permute(out_perm)
    return run


def _prod(dims) -> int:
    p = 1
    for d in dims:
        p *= d
    return p
