"""TF's text of a tensor's first values (Tensor::SummarizeValue's nesting), shared by Print's
and Assert's summaries (kernels/logging_ops.py) and the DebugString in FractionalPool's
messages (kernels/nn_fractional_pool.py)."""

from __future__ import annotations


def print_one_dim(shape, text: list, limit: int) -> str:
    """TF's PrintOneDim: `text`, the first elements as strings in row-major order, in a
    bracket per sub-array of `shape` and space separated along the last dimension, stopping
    after `limit` elements ('...' where a row is cut short; the caller adds the one after
    the last element). A scalar is its text alone ('' without one)."""
    if not shape:
        return text[0] if text else ""
    out, index = [], [0]

    def dim(d: int) -> None:
        if index[0] >= limit:
            return
        if d == len(shape) - 1:
            for i in range(shape[d]):
                if index[0] >= limit:
                    if d:
                        out.append("...")
                    return
                if i:
                    out.append(" ")
                out.append(text[index[0]])
                index[0] += 1
            return
        for _ in range(shape[d]):
            opened = index[0] < limit
            if opened:
                out.append("[")
            dim(d + 1)
            if index[0] < limit or opened:
                out.append("]")

    dim(0)
    return "".join(out)
