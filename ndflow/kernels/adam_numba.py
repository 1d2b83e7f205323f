"""Adam updates in one pass over memory: Keras' Adam of an IndexedSlices gradient
(`_ResourceSparseApplyKerasAdam`, a float32 CPU variable: an Embedding's) and TF's
ResourceApplyAdam of a float32 CPU variable (`update_dense`: ATen's six calls, one
allocating sqrt(v), read and wrote weight-sized buffers 16 times; here 7), also of many
variables in one launch (`update_dense_many`, `_GroupedApplyAdam`'s).

Keras 3 on TF densifies such a gradient (`m += (g - m) * (1 - beta1)` reads it as a dense
tensor), so every row's moments decay and its weight moves, touched or not; `v` takes the
slices' squares summed per row. Unfused that is two dense scatters, then a dozen ops each
reading and writing a variable-sized buffer; here the touched rows' sums go into a compact
table (`slot[row]` its entry, -1 for untouched rows), and one pass over the rows reads var,
m and v once and writes them once. Measured on a 2-core Zen 4, Keras' Adam step of a
20,000 x 32 embedding with 6,400 looked-up rows: see kernels/training_sparse.py.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import omp_pool, raw_memory
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 15   # elements per claimed chunk
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = _row = _compact = _step = _decay = None
_view = _update = _stored_square = _own_square = _header = _at = _table_rows = _owner = None


def applies(var: torch.Tensor) -> bool:
    """Whether a variable's update runs here (float32 on a CPU, numba and ATen's OpenMP)."""
    return (var.dtype == torch.float32 and var.device.type == "cpu" and var.dim() >= 1
            and _built() is not None)


_built = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def update(var, m, v, outs, values, indices, c1: float, c2: float, alpha: float,
           eps: float) -> None:
    """Writes the new var, m, v (contiguous float32 CPU tensors of one shape) into `outs`
    (which may be var, m, v themselves): `values` holds one row per entry of `indices`
    (int64; an id outside var's rows is TF's InvalidArgumentError, raised before anything
    is written)."""
    update_many([(var, m, v, outs, values, indices, c1, c2, alpha, eps)])


TABLE = 16   # int64s per variable in update_many's table (see sparse_adam's data)


def update_many(updates: list) -> None:
    """`update` of many variables in one launch (`_GroupedSparseApplyKerasAdam`: a model's
    embeddings): `updates` holds update's arguments per variable. Each variable's rows are
    cut into chunks of about CHUNK elements, and the team claims the chunks of all of them."""
    updates = [u for u in updates if u[0].numel()]
    if not updates:
        return
    compact_many, callback = _built()[:2]
    shapes = [(u[0].shape[0], u[0].numel() // u[0].shape[0], len(u[5])) for u in updates]
    # two buffers for all of them, so that a small table's update is not mostly setup: each
    # row's slot (-1: untouched), then the touched rows' sums and their squares
    slot = torch.full((sum(rows for rows, _, _ in shapes),), -1, dtype=torch.int64)
    work = torch.zeros(sum(2 * n * cols for _, cols, n in shapes), dtype=torch.float32)
    table, params, held = [], [], []
    slot_at = work_at = units = 0
    # each variable's slots and sums lie at the offsets summed here, inside the two buffers
    slots, sums_at = raw_memory.span(slot)[0], raw_memory.span(work)[0]
    for (var, m, v, outs, values, indices, c1, c2, alpha, eps), (rows, cols, n) in zip(
            updates, shapes):
        indices, values = indices.contiguous(), values.detach().reshape(n, cols).contiguous()
        held += (indices, values)
        chunk_rows = max(1, CHUNK // max(cols, 1))
        state = [raw_memory.span(t)[0] for t in (var, m, v)]   # float32: applies()
        in_place = outs[0] is var and outs[1] is m and outs[2] is v
        table += state + (state if in_place else [raw_memory.span(t)[0] for t in outs])
        table += [slots + 8 * slot_at, sums_at + 4 * work_at, sums_at + 4 * (work_at + n * cols),
                  rows, cols, chunk_rows, units, raw_memory.span(indices)[0],
                  raw_memory.span(values)[0], n]
        params += [c1, c2, alpha, eps]
        slot_at, work_at = slot_at + rows, work_at + 2 * n * cols
        units += -(-rows // chunk_rows)
    table_np = np.array(table, dtype=np.int64)
    bad = compact_many(table_np)
    if bad >= 0:   # TF's error for the first variable with an id outside its rows
        i = bad & 0xFFFFFFFF
        raise InvalidArgumentError(None, None, f"Index {int(held[2 * (bad >> 32)][i])} at "
                                   f"offset {i} in indices is out of range")
    arrays = [table_np, np.array(params, dtype=np.float32), slot, work]
    omp_pool.run_chunks(callback, units, 1, arrays, torch.get_num_threads())


def update_dense(var, m, v, outs, grad, c1: float, c2: float, alpha: float,
                 eps: float) -> None:
    """TF's ResourceApplyAdam (not Nesterov) of contiguous float32 CPU tensors of one shape
    in one pass: m += (g - m) c1; v += (g^2 - v) c2; var -= alpha m / (sqrt(v) + eps), the
    new values written into `outs` (which may be var, m, v themselves)."""
    n = var.numel()
    if n == 0:
        return
    arrays = [var, m, v, *outs, grad.contiguous(),
              np.array([c1, c2, alpha, eps], dtype=np.float32)]
    omp_pool.run_chunks(_built()[2], n, CHUNK, arrays, torch.get_num_threads())


DENSE_TABLE = 10   # int64s per variable in update_dense_many's table


def update_dense_many(updates: list) -> None:
    """`update_dense` of many variables in one launch (`_GroupedApplyAdam`: a model's small
    variables, each a few microseconds of work that seven ATen calls a variable made ~85):
    `updates` holds update_dense's arguments per variable; the team claims chunks of CHUNK
    elements of all of them."""
    table, params, held, units = [], [], [], 0
    for var, m, v, outs, grad, c1, c2, alpha, eps in updates:
        n = var.numel()
        if n == 0:
            continue
        g = grad.contiguous()
        held.append(g)
        table += [raw_memory.span(t)[0] for t in (var, m, v, *outs, g)] + [n, units, 0]
        params += [c1, c2, alpha, eps]
        units += -(-n // CHUNK)
    if units:
        omp_pool.run_chunks(_built()[3], units, 1, [np.array(table, dtype=np.int64),
                                                    np.array(params, dtype=np.float32)],
                            min(torch.get_num_threads(), units))


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such update, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, _row, _compact, _step, _decay
    global _view, _update, _stored_square, _own_square, _header, _at, _table_rows, _owner
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray

    @numba.njit(cache=True)
    def _compact(table):
        """Each touched row's sum of slices and of their squares, in first-seen order, for
        every variable of update_many's table (its slots -1 and its sums 0 before); -1, or
        for the first id outside its variable's rows `variable << 32 | position`."""
        for t in range(table.shape[0] // 16):
            rec = table[t * 16:(t + 1) * 16]
            k, n = rec[10], rec[15]
            slot = carray(address_as_pointer(rec[6], np.int64), rec[9])
            sums = carray(address_as_pointer(rec[7], np.float32), n * k)
            squares = carray(address_as_pointer(rec[8], np.float32), n * k)
            indices = carray(address_as_pointer(rec[13], np.int64), n)
            values = carray(address_as_pointer(rec[14], np.float32), n * k)
            count = 0
            for i in range(n):
                r = indices[i]
                if r < 0 or r >= rec[9]:
                    return (t << 32) | i
                s = slot[r]
                if s < 0:
                    s = slot[r] = count
                    count += 1
                for j in range(k):
                    x = values[i * k + j]
                    sums[s * k + j] += x
                    squares[s * k + j] += x * x
        return -1

    @numba.njit(inline="always", error_model="numpy")   # a division that vectorizes
    def _step(w, m, v, g, g2, c1, c2, alpha, eps):
        """One element's (var, m, v), Adam's update of the gradient g with square g2."""
        m = m + (g - m) * c1
        v = v + (g2 - v) * c2
        return w - m * alpha / (np.sqrt(v) + eps), m, v

    @numba.njit(inline="always")
    def _stored_square(g, g2, j):
        return g2[j]

    @numba.njit(inline="always")
    def _own_square(g, g2, j):
        return g[j] * g[j]

    @numba.njit(inline="always", error_model="numpy")
    def _row(w, m, v, g, g2, w_out, m_out, v_out, k, c1, c2, alpha, eps, square):
        """Adam's update of k elements; square(g, g2, j): element j's squared gradient."""
        for j in range(k):
            w_out[j], m_out[j], v_out[j] = _step(w[j], m[j], v[j], g[j], square(g, g2, j),
                                                 c1, c2, alpha, eps)

    @numba.njit(inline="always")
    def _view(d, i, offset, k):
        """k float32s at byte `offset` into the array at d[i]."""
        return carray(address_as_pointer(d[i] + offset, np.float32), k)

    @numba.njit(inline="always", error_model="numpy")
    def _update(d, at, offset, k, g, g2, square, in_place, c1, c2, alpha, eps):
        """_row on the var, m, v elements at byte `offset` into the outputs; the six arrays'
        addresses are d[at], d[at + 1], ... (a table's) or d[at], d[at + 2], ... (spans')."""
        a, b = at[0], at[1]
        w, m, v = _view(d, a, offset, k), _view(d, a + b, offset, k), _view(d, a + 2 * b,
                                                                           offset, k)
        if in_place:   # the same arrays: LLVM then sees no aliasing and vectorizes
            _row(w, m, v, g, g2, w, m, v, k, c1, c2, alpha, eps, square)
        else:
            _row(w, m, v, g, g2, _view(d, a + 3 * b, offset, k), _view(d, a + 4 * b, offset, k),
                 _view(d, a + 5 * b, offset, k), k, c1, c2, alpha, eps, square)

    @numba.njit(inline="always", error_model="numpy")
    def _decay(d, offset, n, in_place, c1, c2, alpha, eps):
        """_update of n elements at byte `offset` whose gradient is 0 (a run of rows no id
        touched: one loop over the run, where a row at a time left short loops); d: a
        table's six addresses."""
        zero = np.float32(0.0)
        w, m, v = _view(d, 0, offset, n), _view(d, 1, offset, n), _view(d, 2, offset, n)
        if in_place:
            for j in range(n):
                w[j], m[j], v[j] = _step(w[j], m[j], v[j], zero, zero, c1, c2, alpha, eps)
        else:
            w_out, m_out = _view(d, 3, offset, n), _view(d, 4, offset, n)
            v_out = _view(d, 5, offset, n)
            for j in range(n):
                w_out[j], m_out[j], v_out[j] = _step(w[j], m[j], v[j], zero, zero, c1, c2,
                                                     alpha, eps)

    @numba.njit(inline="always")
    def _header(data, words, params):
        """(data's `words` int64s, the count, the chunk, the params c1, c2, alpha, eps at
        d[params], whether the outputs are var, m, v themselves)."""
        d = carray(data, words, dtype=np.int64)
        p = carray(address_as_pointer(d[params], np.float32), 4)
        return (d, d[1], d[2], p[0], p[1], p[2], p[3],
                d[9] == d[3] and d[11] == d[5] and d[13] == d[7])

    @numba.njit(inline="always")
    def _at(address, k):
        return carray(address_as_pointer(address, np.float32), k)

    @numba.njit(inline="always")
    def _owner(table, count, width, first_at, q):
        """The variable whose units hold unit q: the last of the table's `count` records
        (`width` int64s each) whose first unit, at `first_at`, is not past q."""
        t = 0
        while t + 1 < count and table[(t + 1) * width + first_at] <= q:
            t += 1
        return t

    @numba.njit(inline="always", error_model="numpy")
    def _table_rows(rec, r, end, c1, c2, alpha, eps):
        """Rows r..end of the variable `rec` of the table (update_many): a touched row by its
        sums, a run of untouched rows as one `_decay` loop."""
        k = rec[10]
        slot = carray(address_as_pointer(rec[6], np.int64), rec[9])
        d = rec[:6]
        in_place = d[3] == d[0] and d[4] == d[1] and d[5] == d[2]
        while r < end:
            s = slot[r]
            if s >= 0:
                g, g2 = _at(rec[7] + s * k * 4, k), _at(rec[8] + s * k * 4, k)
                _update(d, (0, 1), r * k * 4, k, g, g2, _stored_square, in_place, c1, c2,
                        alpha, eps)
                r += 1
                continue
            e = r + 1
            while e < end and slot[e] < 0:
                e += 1
            _decay(d, r * k * 4, (e - r) * k, in_place, c1, c2, alpha, eps)
            r = e

    # data = [counter, units, 1, (address, length) of the table (16 int64s per variable:
    #         addresses of var, m, v, var_out, m_out, v_out, its slots, sums and squares;
    #         rows, columns, rows per unit, its first unit; addresses of its indices and
    #         values, their count), of the params (c1, c2, alpha, eps per variable), of the
    #         slot and work buffers]; a unit is a chunk of rows
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def sparse_adam(data):
        d = carray(data, 12, dtype=np.int64)
        units, count = d[1], d[4] // 16
        table = carray(address_as_pointer(d[3], np.int64), d[4])
        params = carray(address_as_pointer(d[5], np.float32), d[6])
        q = claim_chunk(data)
        while q < units:
            t = _owner(table, count, 16, 12, q)
            rec = table[t * 16:(t + 1) * 16]
            r = (q - rec[12]) * rec[11]
            _table_rows(rec, r, min(r + rec[11], rec[9]), params[4 * t], params[4 * t + 1],
                        params[4 * t + 2], params[4 * t + 3])
            q = claim_chunk(data)

    # data = [counter, n, chunk, (address, length) of var, m, v, var_out, m_out, v_out, g,
    #         params (c1, c2, alpha, eps)]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def dense_adam(data):
        d, n, chunk, c1, c2, alpha, eps, in_place = _header(data, 20, 17)
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            k = min(lo + chunk, n) - lo
            g = _view(d, 15, lo * 4, k)
            _update(d, (3, 2), lo * 4, k, g, g, _own_square, in_place, c1, c2, alpha, eps)
            q = claim_chunk(data)

    # data = [counter, units, 1, (address, length) of the table (DENSE_TABLE int64s per
    #         variable: addresses of var, m, v, var_out, m_out, v_out, g; its size, its
    #         first unit, 0), of the params (c1, c2, alpha, eps per variable)]; a unit is a
    #         chunk of CHUNK elements
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def dense_adam_many(data):
        d = carray(data, 8, dtype=np.int64)
        units, count = d[1], d[4] // 10
        table = carray(address_as_pointer(d[3], np.int64), d[4])
        params = carray(address_as_pointer(d[5], np.float32), d[6])
        q = claim_chunk(data)
        while q < units:
            t = _owner(table, count, 10, 8, q)
            rec = table[t * 10:(t + 1) * 10]
            lo = (q - rec[8]) * CHUNK
            k = min(CHUNK, rec[7] - lo)
            g = _at(rec[6] + lo * 4, k)
            in_place = rec[3] == rec[0] and rec[4] == rec[1] and rec[5] == rec[2]
            _update(rec, (0, 1), lo * 4, k, g, g, _own_square, in_place, params[4 * t],
                    params[4 * t + 1], params[4 * t + 2], params[4 * t + 3])
            q = claim_chunk(data)

    return _compact, sparse_adam.address, dense_adam.address, dense_adam_many.address
