"""TensorFlow's CTC beam search (tensorflow/core/util/ctc/ctc_beam_search.h with the default
scorer) step for step, so that its paths, their order and their log probabilities are TF's,
ties included.

TF keeps a prefix tree of beam entries (parent, label, the previous and the new probability
of the prefix ending in a blank / in its label / in total, log space) and the current beam
in a `gtl::TopN` keyed on the new total. Which entries survive and in which order the next
step visits them depends on that container's exact moves: an unordered vector, then a bottom
found by a linear scan and kept at the front, then libstdc++'s binary heap (`make_heap`,
`pop_heap`, `push_heap`), drained by `std::sort` (introsort) or `sort_heap`. Those algorithms
are written out here as libstdc++ has them, on int64 arrays of entry ids whose keys are read
live (TF resets an evicted entry's probabilities while it sits in the heap).

Arithmetic is in the input's type, as TF's template; `LogSumExp` adds `log1pf(expf(d))` in
float even for double inputs, as TF's does. The functions are plain Python that numba
compiles on first use (`decode`); without numba they run as Python, slower.

Entries: `links[e] = (parent, label)` (root: -1, -1); `probs[e] = (old total, old blank,
old label, new total, new blank, new label)`; children found through an open-addressing
table keyed on parent * num_classes + label. A TopN is (elements array, [size, state,
limit])."""

from __future__ import annotations

import math

import numpy as np

from ndflow.kernels.build_once import built_once

_OT, _OB, _OL, _NT, _NB, _NL = 0, 1, 2, 3, 4, 5
_UNORDERED, _BOTTOM_KNOWN, _HEAP_SORTED = 0, 1, 2
_THRESHOLD = 16                      # libstdc++'s _S_threshold


# -- libstdc++'s heap and sort with TF's BeamComparer (a "greater" on the new total) --------

def _gt(p, a, b):
    return p[a, 3] > p[b, 3]


def _push_up(h, first, hole, top, value, p):
    parent = (hole - 1) // 2
    while hole > top and _gt(p, h[first + parent], value):
        h[first + hole] = h[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    h[first + hole] = value


def _adjust_heap(h, first, hole, length, value, p):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if _gt(p, h[first + child], h[first + child - 1]):
            child -= 1
        h[first + hole] = h[first + child]
        hole = child
    if (length & 1) == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        h[first + hole] = h[first + child - 1]
        hole = child - 1
    _push_up(h, first, hole, top, value, p)


def _make_heap(h, first, n, p):
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        _adjust_heap(h, first, parent, n, h[first + parent], p)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(h, first, n, p):
    if n > 1:
        value = h[first + n - 1]
        h[first + n - 1] = h[first]
        _adjust_heap(h, first, 0, n - 1, value, p)


def _push_heap(h, first, n, p):
    _push_up(h, first, n - 1, 0, h[first + n - 1], p)


def _sort_heap(h, first, n, p):
    while n > 1:
        _pop_heap(h, first, n, p)
        n -= 1


def _linear_insert(h, i, p):
    value = h[i]
    j = i - 1
    while _gt(p, value, h[j]):
        h[i] = h[j]
        i = j
        j -= 1
    h[i] = value


def _insertion_sort(h, lo, hi, p):
    for i in range(lo + 1, hi):
        if _gt(p, h[i], h[lo]):
            value = h[i]
            for j in range(i, lo, -1):
                h[j] = h[j - 1]
            h[lo] = value
        else:
            _linear_insert(h, i, p)


def _median_to_first(h, result, a, b, c, p):
    if _gt(p, h[a], h[b]):
        if _gt(p, h[b], h[c]):
            m = b
        elif _gt(p, h[a], h[c]):
            m = c
        else:
            m = a
    elif _gt(p, h[a], h[c]):
        m = a
    elif _gt(p, h[b], h[c]):
        m = c
    else:
        m = b
    h[result], h[m] = h[m], h[result]


def _partition(h, lo, hi, p):
    """`__unguarded_partition_pivot`: the median of three moved to `lo` is the pivot."""
    _median_to_first(h, lo, lo + 1, lo + (hi - lo) // 2, hi - 1, p)
    first, last = lo + 1, hi
    while True:
        while _gt(p, h[first], h[lo]):
            first += 1
        last -= 1
        while _gt(p, h[lo], h[last]):
            last -= 1
        if not first < last:
            return first
        h[first], h[last] = h[last], h[first]
        first += 1


def _sort(h, n, p):
    """`std::sort(h, h + n)`: introsort (the recursion on the right part as a stack of
    ranges, disjoint so the order they are done in does not matter), then the final
    insertion sort."""
    if n < 2:
        return
    depth, k = 0, n
    while k > 1:
        k >>= 1
        depth += 1
    stack = np.empty((2 * depth + 2, 3), np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 2 * depth
    top = 1
    while top > 0:
        top -= 1
        lo, hi, limit = stack[top, 0], stack[top, 1], stack[top, 2]
        while hi - lo > _THRESHOLD:
            if limit == 0:
                _make_heap(h, lo, hi - lo, p)
                _sort_heap(h, lo, hi - lo, p)
                break
            limit -= 1
            cut = _partition(h, lo, hi, p)
            stack[top, 0], stack[top, 1], stack[top, 2] = cut, hi, limit
            top += 1
            hi = cut
    if n > _THRESHOLD:
        _insertion_sort(h, 0, _THRESHOLD, p)
        for i in range(_THRESHOLD, n):
            _linear_insert(h, i, p)
    else:
        _insertion_sort(h, 0, n, p)


# -- gtl::TopN ---------------------------------------------------------------------------------

def _topn_push(h, st, v, p):
    limit = st[2]
    if st[1] != _HEAP_SORTED:
        n = st[0]
        h[n] = v
        n += 1
        st[0] = n
        if n == limit + 1:
            _make_heap(h, 0, n, p)
            _pop_heap(h, 0, n, p)
            st[0] = limit
            st[1] = _HEAP_SORTED
        elif st[1] != _UNORDERED and not _gt(p, h[n - 1], h[0]):
            h[0], h[n - 1] = h[n - 1], h[0]
    elif _gt(p, v, h[0]):
        _pop_heap(h, 0, limit, p)
        h[limit - 1] = v
        _push_heap(h, 0, limit, p)


def _topn_bottom(h, st, p):
    if st[1] == _UNORDERED:
        m = 0
        for i in range(1, st[0]):
            if _gt(p, h[m], h[i]):
                m = i
        if m != 0:
            h[0], h[m] = h[m], h[0]
        st[1] = _BOTTOM_KNOWN
    return h[0]


def _topn_extract(h, st, out, p):
    """Extract() then Reset(): the elements in descending order into `out`; their count."""
    n = st[0]
    for i in range(n):
        out[i] = h[i]
    if st[1] != _HEAP_SORTED:
        _sort(out, n, p)
    else:
        _sort_heap(out, 0, n, p)
    st[0] = 0
    st[1] = _UNORDERED
    return n


# -- the decoder -------------------------------------------------------------------------------

def _log_sum_exp(a, b, neg_inf):
    if a == neg_inf:
        return b
    if b == neg_inf:
        return a
    if a > b:
        return a + np.float32(math.log1p(np.float32(math.exp(np.float32(b - a)))))
    return b + np.float32(math.log1p(np.float32(math.exp(np.float32(a - b)))))


def _is_candidate(total, leaves, st, p, width, neg_inf):
    return total > neg_inf and (st[0] < width or total > p[_topn_bottom(leaves, st, p), 3])


def _find(keys, values, key):
    mask = keys.shape[0] - 1
    i = (key * 2654435761) & mask
    while keys[i] != -1:
        if keys[i] == key:
            return values[i]
        i = (i + 1) & mask
    return -1


def _insert(keys, values, key, value):
    mask = keys.shape[0] - 1
    i = (key * 2654435761) & mask
    while keys[i] != -1:
        i = (i + 1) & mask
    keys[i] = key
    values[i] = value


def _decode_batch(x, seq_len, width, top_paths, merge, consts, out_labels, out_lengths,
                  out_logp):
    """Decodes every example of x [time, batch, classes]; fills out_labels [batch, paths,
    time], out_lengths, out_logp [batch, paths]. Returns 0, or (1 + batch index) * 2 +
    0 / 1 at the first example whose TopPaths fails (more paths than the beam width /
    than the beam holds)."""
    neg_inf, zero = consts[0], consts[1]
    classes = x.shape[2]
    blank = classes - 1
    leaves = np.empty(width + 1, np.int64)
    st = np.zeros(3, np.int64)
    branches = np.empty(width + 1, np.int64)
    best = np.empty(top_paths + 1, np.int64)
    best_st = np.zeros(3, np.int64)
    for b in range(x.shape[1]):
        cap = 1024
        links = np.empty((cap, 2), np.int64)
        probs = np.empty((cap, 6), x.dtype)
        hcap = 2048
        keys = np.full(hcap, -1, np.int64)
        values = np.empty(hcap, np.int64)
        links[0, 0], links[0, 1] = -1, -1
        for k in range(6):
            probs[0, k] = neg_inf
        probs[0, _NT], probs[0, _NB] = zero, zero
        count = 1
        st[0], st[1], st[2] = 0, _UNORDERED, width
        _topn_push(leaves, st, 0, probs)
        for t in range(seq_len[b]):
            row = x[t, b]
            top = row[0]
            for j in range(1, classes):
                if row[j] > top:
                    top = row[j]
            total = zero
            for j in range(classes):
                total += math.exp(row[j] - top)
            norm = top + math.log(total)
            nb = _topn_extract(leaves, st, branches, probs)
            for i in range(nb):
                e = branches[i]
                probs[e, _OT], probs[e, _OB], probs[e, _OL] = (
                    probs[e, _NT], probs[e, _NB], probs[e, _NL])
            for i in range(nb):
                e = branches[i]
                parent = links[e, 0]
                if parent != -1:
                    if probs[parent, _NT] != neg_inf:
                        if links[e, 1] == links[parent, 1]:
                            previous = probs[parent, _OB]
                        else:
                            previous = probs[parent, _OT]
                        probs[e, _NL] = _log_sum_exp(probs[e, _NL], previous, neg_inf)
                    probs[e, _NL] += row[links[e, 1]] - norm
                probs[e, _NB] = probs[e, _OT] + row[blank] - norm
                probs[e, _NT] = _log_sum_exp(probs[e, _NB], probs[e, _NL], neg_inf)
                _topn_push(leaves, st, e, probs)
            for i in range(nb):
                e = branches[i]
                if not _is_candidate(probs[e, _OT], leaves, st, probs, width, neg_inf):
                    continue
                for label in range(blank):
                    child = _find(keys, values, e * classes + label)
                    if child != -1 and probs[child, _NT] != neg_inf:
                        continue                                 # active: already in the beam
                    if label == links[e, 1]:
                        previous = probs[e, _OB]
                    else:
                        previous = probs[e, _OT]
                    score = row[label] - norm + previous
                    if _is_candidate(score, leaves, st, probs, width, neg_inf):
                        if child == -1:
                            if count == cap:
                                cap *= 2
                                grown_links = np.empty((cap, 2), np.int64)
                                grown_links[:count] = links[:count]
                                grown_probs = np.empty((cap, 6), x.dtype)
                                grown_probs[:count] = probs[:count]
                                links, probs = grown_links, grown_probs
                            child = count
                            count += 1
                            links[child, 0], links[child, 1] = e, label
                            probs[child, _OT] = neg_inf
                            probs[child, _OB] = neg_inf
                            probs[child, _OL] = neg_inf
                            if 2 * count > hcap:
                                hcap *= 2
                                grown_keys = np.full(hcap, -1, np.int64)
                                grown_values = np.empty(hcap, np.int64)
                                for s in range(keys.shape[0]):
                                    if keys[s] != -1:
                                        _insert(grown_keys, grown_values, keys[s], values[s])
                                keys, values = grown_keys, grown_values
                            _insert(keys, values, e * classes + label, child)
                        probs[child, _NB] = neg_inf
                        probs[child, _NL] = score
                        probs[child, _NT] = score
                        if st[0] == width:
                            bottom = _topn_bottom(leaves, st, probs)
                            for k in range(3, 6):
                                probs[bottom, k] = neg_inf
                        _topn_push(leaves, st, child, probs)
                    elif child != -1:
                        for k in range(6):
                            probs[child, k] = neg_inf
        if top_paths > width:
            return (1 + b) * 2
        if top_paths > st[0]:
            return (1 + b) * 2 + 1
        best_st[0], best_st[1], best_st[2] = 0, _UNORDERED, top_paths
        for i in range(st[0]):
            _topn_push(best, best_st, leaves[i], probs)
        _topn_extract(best, best_st, best, probs)
        for path in range(top_paths):
            e = best[path]
            out_logp[b, path] = probs[e, _NT]
            n, previous = 0, -1
            while links[e, 0] != -1:
                if not merge or links[e, 1] != previous:
                    out_labels[b, path, n] = links[e, 1]
                    n += 1
                previous = links[e, 1]
                e = links[e, 0]
            for i in range(n // 2):
                out_labels[b, path, i], out_labels[b, path, n - 1 - i] = (
                    out_labels[b, path, n - 1 - i], out_labels[b, path, i])
            out_lengths[b, path] = n
    return 0


_HELPERS = ("_gt", "_push_up", "_adjust_heap", "_make_heap", "_pop_heap", "_push_heap",
            "_sort_heap", "_linear_insert", "_insertion_sort", "_median_to_first",
            "_partition", "_sort", "_topn_push", "_topn_bottom", "_topn_extract",
            "_log_sum_exp", "_is_candidate", "_find", "_insert", "_decode_batch")


def _build():
    """`_decode_batch` compiled by numba (its helpers too, as module globals: numba's disk
    cache refuses closures), or the Python function without numba."""
    try:
        import numba  # noqa: PLC0415 - loads on the first decode, not with `import ndflow`
    except ImportError:
        return _decode_batch
    module = globals()
    for name in _HELPERS:
        module[name] = numba.njit(cache=True, nogil=True)(module[name])
    return module["_decode_batch"]


_compiled = built_once(_build)


def decode(x: np.ndarray, seq_len: np.ndarray, width: int, top_paths: int, merge: bool):
    """(labels [batch, paths, time] int64, lengths [batch, paths], log probabilities
    [batch, paths]) of x [time, batch, classes] (float32 or float64, the blank last), or the
    failing example and the reason: (None, batch index, "width" | "leaves")."""
    x = np.ascontiguousarray(x)
    batch = x.shape[1]
    labels = np.zeros((batch, top_paths, max(x.shape[0], 1)), np.int64)
    lengths = np.zeros((batch, top_paths), np.int64)
    logp = np.zeros((batch, top_paths), x.dtype)
    consts = np.array([-np.inf, 0.0], x.dtype)
    status = _compiled()(x, np.ascontiguousarray(seq_len, np.int64), int(width),
                         int(top_paths), bool(merge), consts, labels, lengths, logp)
    if status:
        return None, status // 2 - 1, ("width", "leaves")[status % 2]
    return labels, lengths, logp
