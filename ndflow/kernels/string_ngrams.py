"""StringNGrams on host object arrays: TensorFlow's kernel rules for padding (`pad_width` -1:
width - 1 per side), the n-gram count per row and `preserve_short_sequences`."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel
from ndflow.ops import string_ngrams_ops


def _text(v) -> bytes:
    return v.encode() if isinstance(v, str) else v


@host_kernel(string_ngrams_ops.StringNGrams)
def _string_ngrams(node):
    a = node.attrs
    sep, left, right = _text(a["separator"]), _text(a["left_pad"]), _text(a["right_pad"])
    widths, pad_attr, preserve = list(a["ngram_widths"]), a["pad_width"], \
        a["preserve_short_sequences"]
    splits_dt = node.attrs["Tsplits"].torch_dtype

    def pad_width(w: int) -> int:
        return min(w - 1 if pad_attr < 0 else pad_attr, w - 1)

    def make(row: list, w: int, count: int) -> list:
        pw, out = pad_width(w), []
        for k in range(count):
            lp = max(0, pw - k)
            rp = max(0, pw - (count - (k + 1)))
            start = 0 if lp > 0 else k - pw
            tokens = row[start:start + w - lp - rp]
            out.append(sep.join([left] * lp + tokens + [right] * rp))
        return out

    def string_ngrams(data, data_splits):
        values = list(np.asarray(data, dtype=object).reshape(-1))
        bounds = data_splits.cpu().tolist()
        if bounds and (bounds[0] != 0 or bounds[-1] != len(values) or
                       any(b > c for b, c in zip(bounds, bounds[1:]))):
            raise InvalidArgumentError(None, None, "Invalid split value.")
        grams, out_splits = [], [0]
        for i in range(len(bounds) - 1):
            row = values[bounds[i]:bounds[i + 1]]
            made = []
            for w in widths:
                made += make(row, w, max(0, len(row) + 2 * pad_width(w) - w + 1))
            if preserve and not made and row:
                made = make(row, len(row) + 2 * pad_attr, 1)
            grams += made
            out_splits.append(len(grams))
        out = np.empty(len(grams), dtype=object)
        out[:] = grams
        return out, torch.tensor(out_splits, dtype=splits_dt)
    return string_ngrams
