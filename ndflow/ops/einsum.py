"""Einsum: TF's op (1 or 2 operands, `equation` attr) and its shape rule (its gradient,
TF's `_EinsumGrad`, is in linalg_grad.py).

`einsum(equation, *inputs)` is `tf.einsum`: it resolves implicit-output equations
("ij,jk" -> "ij,jk->ik") as TF does and splits more than two operands into a chain of
pairwise Einsum ops (TF asks opt_einsum for the order; we contract left to right, keeping
the labels later operands or the output still need).
"""

from __future__ import annotations

import collections
import re

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import einsum_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.comparison import broadcast_pair
from ndflow.ops.op_def import op_def

ELLIPSIS = "..."


def parse_equation(equation: str, n: int) -> tuple:
    """(input subscripts list, output subscripts) with TF's shape-function errors."""
    if equation.count("->") != 1:
        raise ValueError(f"Expecting exactly one '->' in einsum equation: {equation}")
    lhs, out = equation.split("->")
    ins = lhs.split(",")
    if len(ins) not in (1, 2):
        raise ValueError(f"Expecting 1 or 2 input subscripts in equation '{equation}' but "
                         f"got: {len(ins)}")
    if len(ins) != n:
        raise ValueError(f"Expected {len(ins)} inputs for equation {equation} but got: {n}")
    present = set("".join(ins))
    for label in out.replace(ELLIPSIS, ""):
        if label not in present:
            raise ValueError(f"Einsum output subscripts for equation '{equation}' has label "
                             f"'{label}' which is not present in the input subscripts")
    return ins, out


def _split(subs: str) -> tuple:
    """(labels before the ellipsis, labels after it, has ellipsis)."""
    if ELLIPSIS in subs:
        head, tail = subs.split(ELLIPSIS)
        return head, tail, True
    return subs, "", False


def _einsum_shape(ctx):
    equation = ctx.attrs["equation"]
    ins, out = parse_equation(equation, len(ctx.shapes))
    dims: dict = {}
    batch = TensorShape([])
    batch_unknown = False
    for i, (subs, shape) in enumerate(zip(ins, ctx.shapes)):
        head, tail, ell = _split(subs)
        named = len(head) + len(tail)
        if shape.rank is None:
            if ell:
                batch_unknown = True
            continue
        if not ell and shape.rank != named:
            raise ValueError(f"Shape must be rank {named} but is rank {shape.rank}\n\t for "
                             f"{i}th input and equation: {equation}")
        if ell and shape.rank < named:
            raise ValueError(f"Shape must be at least rank {named} but is rank {shape.rank}"
                             f"\n\t for {i}th input and equation: {equation}")
        d = shape.as_list()
        labelled = list(zip(head, d[:len(head)])) + list(zip(tail, d[len(d) - len(tail):]))
        for label, size in labelled:
            known = dims.get(label)
            if known is not None and size is not None and known != size:
                raise ValueError(f"Dimensions must be equal, but are {known} and {size}")
            if known is None:
                dims[label] = size
        if ell:
            batch = broadcast_pair(batch, TensorShape(d[len(head):len(d) - len(tail)]))
    head, tail, ell = _split(out)
    if not ell and not batch_unknown and batch.rank:
        raise ValueError(f"Output contains {batch.rank} broadcasting dimension(s) but no "
                         "ellipsis (...) was found in the output subscripts.")
    if ell and batch_unknown:
        return [TensorShape(None)]
    return [TensorShape([dims.get(c) for c in head] + (batch.as_list() if ell else [])
                        + [dims.get(c) for c in tail])]


Einsum = op_def("Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
                attrs=["equation: string", "N: int >= 1", "T: type"], shape=_einsum_shape)


def einsum_op(inputs: list, equation: str, name: str | None = None) -> Tensor:
    return apply_op(Einsum, [list(inputs)], {"equation": equation}, name=name).outputs[0]


# -- tf.einsum ----------------------------------------------------------------------------

def _resolve(equation: str, n: int) -> tuple:
    """TF's _einsum_v2_parse_and_resolve_equation: (equation with '0' for '...', has '...')."""
    resolved = equation.replace(" ", "")
    ell = ELLIPSIS in equation
    if ell:
        if "0" in resolved:
            raise ValueError(f'Invalid character "0" in equation: {equation}.')
        resolved = resolved.replace(ELLIPSIS, "0")
    allowed = "a-zA-Z" + ("0" if ell else "")
    match = re.match(f"^([{allowed},]*)(->[{allowed}]*)?$", resolved)
    if not match:
        raise ValueError(f"Subscripts have incorrect format: {resolved}")
    input_labels = match.group(1).split(",")
    output = match.group(2)[2:] if match.group(2) else None
    if n != len(input_labels):
        raise ValueError(f'Got {n} inputs for equation "{equation}", expecting '
                         f"{len(input_labels)}")
    if "->" not in resolved:
        counts = collections.Counter(match.group(1))
        output = "".join(c for c in sorted(counts) if c != "," and counts[c] == 1)
        resolved += "->" + output
    if output and len(set(output)) != len(output):
        raise ValueError(f"Output subscripts contain a label appearing more than once: "
                         f"{equation}")
    for label in output:
        if label != "0" and label not in set(match.group(1)):
            raise ValueError(f"Output subscripts contain the label {label} not present in "
                             "the input subscripts.")
    if ell and output.count("0") > 1:
        raise ValueError(f"Output subscripts contain multiple ellipsis: {equation}")
    return resolved, input_labels, output


def _pairwise(input_labels: list, output: str) -> list:
    """Left-to-right pairwise equations for more than two operands ('0' = ellipsis)."""
    steps, current = [], input_labels[0]
    for i in range(1, len(input_labels)):
        nxt = input_labels[i]
        if i == len(input_labels) - 1:
            keep = output
        else:
            needed = set("".join(input_labels[i + 1:]) + output)
            keep = "".join(dict.fromkeys(c for c in current + nxt if c in needed or c == "0"))
        steps.append(f"{current},{nxt}->{keep}")
        current = keep
    return steps


@tf_export("einsum", "linalg.einsum")
def einsum(equation: str, *inputs, **kwargs) -> Tensor:
    """`tf.einsum(equation, *inputs, name=None, optimize='greedy')`."""
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f'Invalid keyword arguments for einsum: {", ".join(kwargs)}. Valid '
                        "arguments: name, optimize, greedy.")
    with name_scope(name, "einsum"):
        operands = [convert_to_tensor(t) for t in inputs]
        resolved, input_labels, output = _resolve(equation, len(operands))
        if len(operands) <= 2:
            return einsum_op(operands, resolved.replace("0", ELLIPSIS), name="Einsum")
        result = operands[0]
        for i, step in enumerate(_pairwise(input_labels, output)):
            result = einsum_op([result, operands[i + 1]], step.replace("0", ELLIPSIS),
                                name="Einsum")
        return result


attach(globals(), einsum_docs.DOCS)
