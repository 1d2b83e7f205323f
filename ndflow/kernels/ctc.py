"""Kernels for CTCLoss (ATen's CTC forward-backward; TF's blank is the last class),
CTCGreedyDecoder (argmax per frame, repeats merged, blanks dropped) and CTCBeamSearchDecoder
(TF's checks and output layout around kernels/ctc_beam_search.py)."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError
from ndflow.kernels import ctc_beam_search
from ndflow.kernels.registry import kernel
from ndflow.ops import ctc_ops


def _labels_per_example(indices, values, batch: int) -> list[list[int]]:
    rows: list = [[] for _ in range(batch)]
    idx, vals = indices.tolist(), values.tolist()
    for (b, _), v in sorted(zip(idx, vals)):
        if not 0 <= b < batch:
            raise InvalidArgumentError(None, None, f"labels batch index must be between 0 and "
                                       f"{batch - 1}, got {b}")
        rows[b].append(v)
    return rows


def _collapse(seq: list[int]) -> list[int]:
    return [v for i, v in enumerate(seq) if i == 0 or v != seq[i - 1]]


@kernel(ctc_ops.CTCLoss)
def _ctc_loss(node):
    collapse = node.attrs["preprocess_collapse_repeated"]
    merge = node.attrs["ctc_merge_repeated"]
    ignore_longer = node.attrs["ignore_longer_outputs_than_inputs"]

    def ctc_loss(inputs, indices, values, seq_len):
        if inputs.dim() != 3:
            raise InvalidArgumentError(None, None, f"inputs is not a 3-Tensor: "
                                       f"{list(inputs.shape)}")
        frames, batch, classes = inputs.shape
        if seq_len.shape != (batch,):
            raise InvalidArgumentError(None, None, "len(sequence_length) != batch_size.  "
                                       f"len(sequence_length):  {seq_len.numel()} "
                                       f"batch_size: {batch}")
        if not merge:
            raise UnimplementedError(None, None, "CTCLoss with ctc_merge_repeated=False is "
                                     "not supported by ndflow")
        labels = _labels_per_example(indices, values, batch)
        if collapse:
            labels = [_collapse(seq) for seq in labels]
        lengths = seq_len.tolist()
        blank = classes - 1
        valid = []
        for b, (seq, t) in enumerate(zip(labels, lengths)):
            if t > frames:
                raise InvalidArgumentError(None, None, f"sequence_length({b}) <= {frames}")
            if any(not 0 <= v < blank for v in seq):
                raise InvalidArgumentError(None, None, f"Labels must be in [0, {blank}) "
                                           f"(the last class, {blank}, is the blank)")
            needed = len(seq) + sum(1 for i in range(1, len(seq)) if seq[i] == seq[i - 1])
            if needed > t:
                if not ignore_longer:
                    raise InvalidArgumentError(
                        None, None, "Not enough time for target transition sequence "
                        f"(required: {needed}, available: {t})0You can turn this error into a "
                        "warning by using the flag ignore_longer_outputs_than_inputs")
                valid.append(False)
            else:
                valid.append(True)
        # ATen wants the blank at index 0: rotate the classes by one
        work = inputs.double() if inputs.dtype == torch.float64 else inputs.float()
        with torch.enable_grad():
            logits = work.detach().requires_grad_(True)
            log_probs = torch.log_softmax(torch.roll(logits, 1, dims=2), dim=2)
            flat = torch.tensor([v + 1 for seq in labels for v in seq] or [1],
                                dtype=torch.long)
            target_lengths = torch.tensor([len(seq) for seq in labels], dtype=torch.long)
            loss = torch.nn.functional.ctc_loss(
                log_probs, flat, torch.tensor(lengths, dtype=torch.long), target_lengths,
                blank=0, reduction="none", zero_infinity=False)
            keep = torch.tensor(valid, dtype=torch.bool)
            loss = torch.where(keep, loss, torch.zeros_like(loss))
            grad, = torch.autograd.grad(loss.sum(), logits) if batch else (
                torch.zeros_like(logits),)
        return loss.detach().to(inputs.dtype), grad.to(inputs.dtype)
    return ctc_loss


@kernel(ctc_ops.CTCGreedyDecoder)
def _ctc_greedy_decoder(node):
    merge = node.attrs["merge_repeated"]
    blank_attr = node.attrs["blank_index"]

    def greedy(inputs, seq_len):
        frames, batch, classes = inputs.shape
        blank = classes - 1 if blank_attr < 0 else blank_attr
        best = inputs.argmax(dim=2).T.tolist()              # [batch][frame]
        top = inputs.max(dim=2).values                      # [frame, batch]
        lengths = seq_len.tolist()
        mask = torch.arange(frames).unsqueeze(1) < torch.tensor(lengths).unsqueeze(0)
        log_prob = -(top * mask.to(top.dtype)).sum(0, keepdim=True).T
        indices, decoded_values, longest = [], [], 0
        for b in range(batch):
            out, previous = [], None
            for c in best[b][:lengths[b]]:
                if c != blank and not (merge and c == previous):
                    out.append(c)
                previous = c
            indices.extend([b, i] for i in range(len(out)))
            decoded_values.extend(out)
            longest = max(longest, len(out))
        return (torch.from_numpy(np.asarray(indices, np.int64).reshape(-1, 2)),
                torch.tensor(decoded_values, dtype=torch.int64),
                torch.tensor([batch, longest], dtype=torch.int64), log_prob.contiguous())
    return greedy


def _check_decoder_inputs(inputs, seq_len):
    """TF's CTCDecodeHelper checks, in its order and with its errors."""
    if inputs.dim() != 3:
        raise InvalidArgumentError(None, None, "inputs is not a 3-Tensor")
    if inputs.numel() == 0:
        raise InvalidArgumentError(None, None, "inputs must not be empty")
    if seq_len.dim() != 1:
        raise InvalidArgumentError(None, None, "sequence_length is not a vector")
    frames, batch = inputs.shape[0], inputs.shape[1]
    if seq_len.shape[0] != batch:
        raise FailedPreconditionError(None, None, "len(sequence_length) != batch_size.  "
                                      f"len(sequence_length):  {seq_len.shape[0]} "
                                      f"batch_size: {batch}")
    lengths = seq_len.cpu().numpy()
    for b, n in enumerate(lengths.tolist()):
        if not n <= frames:
            raise FailedPreconditionError(None, None, f"sequence_length({b}) <= {frames}")
    return lengths


@kernel(ctc_ops.CTCBeamSearchDecoder)
def _ctc_beam_search_decoder(node):
    width, paths = node.attrs["beam_width"], node.attrs["top_paths"]
    merge = node.attrs["merge_repeated"]

    def beam_search(inputs, seq_len):
        lengths = _check_decoder_inputs(inputs, seq_len)
        labels, counts, log_prob = ctc_beam_search.decode(
            inputs.detach().cpu().numpy(), lengths, width, paths, merge)
        if labels is None:
            raise InvalidArgumentError(None, None, (
                "requested more paths than the beam width." if log_prob == "width" else
                "Less leaves in the beam search than requested."))
        batch = inputs.shape[1]
        indices, values, shapes = [], [], []
        for p in range(paths):
            n = counts[:, p]
            rows = np.repeat(np.arange(batch, dtype=np.int64), n)
            cols = np.arange(rows.size, dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
            indices.append(torch.from_numpy(np.stack([rows, cols], axis=1)))
            values.append(torch.from_numpy(np.ascontiguousarray(labels[:, p][
                np.arange(labels.shape[2]) < n[:, None]])))
            shapes.append(torch.tensor([batch, int(n.max()) if batch else 0],
                                       dtype=torch.int64))
        device = inputs.device
        return tuple(t.to(device) for t in (*indices, *values, *shapes,
                                            torch.from_numpy(log_prob)))
    return beam_search
