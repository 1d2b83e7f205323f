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

The many-variable launches take a layout (`sparse_layout`, `dense_layout`: the variables'
addresses and sizes) apart from the gradients, so that a kernel whose variables update in
place step after step lays them out once (kernels/identity_cache.py): a wide-and-deep
model's eight embedding tables and six dense variables spent ~100 us of a ~1 ms step on
per-variable checks and addresses. An embedding gradient's rows are read where they lie,
also as a column slice of a wider gradient (a concatenation's), not copied first.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import omp_pool, raw_memory
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 15   # elements per claimed chunk
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = _row = _compact = _step = _decay = None
_view = _update = _stored_square = _own_square = _header = _at = _table_rows = _owner = None
_accumulate = None


def applies(var: torch.Tensor) -> bool:
    """Whether a variable's update runs here (float32 on a CPU, numba and ATen's OpenMP)."""
    return (var.dtype == torch.float32 and var.device.type == "cpu" and var.dim() >= 1
            and _built() is not None)


_built = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def update(var, m, v, outs, values, indices, c1: float, c2: float, alpha: float,
           eps: float) -> None:
    """Writes the new var, m, v (contiguous float32 CPU tensors of one shape) into `outs`
    (which may be var, m, v themselves): `values` holds one row per entry of `indices`
    (int32 or int64; an id outside var's rows is TF's InvalidArgumentError, raised before anything
    is written)."""
    update_many([(var, m, v, outs, values, indices, c1, c2, alpha, eps)])


TABLE = 18   # int64s per variable in update_many's table (see sparse_adam's data)


class SparseLayout(NamedTuple):
    """What update_many's launch knows of its variables before it sees their gradients:
    `table` holds each variable's fixed fields (the addresses of var, m, v and the outputs,
    its offset into the slot buffer, rows, columns, rows per unit, first unit); `columns`
    per variable; `rows`: all their rows (the slot buffer's length); `units`: the launch's.
    A kernel updating the same variables in place step after step keeps it
    (kernels/identity_cache.py)."""
    table: np.ndarray
    columns: tuple
    rows: int
    units: int


def sparse_layout(states: list) -> SparseLayout:
    """The layout of update_many's variables, `states` holding (var, m, v, outs) of each:
    contiguous float32 CPU tensors of one shape per variable, outs may be var, m, v."""
    table, columns, rows_at, units = [], [], 0, 0
    for var, m, v, outs in states:
        rows, cols = var.shape[0], var.numel() // var.shape[0]
        chunk_rows = max(1, CHUNK // max(cols, 1))
        state = [raw_memory.address(t, torch.float32, var.numel()) for t in (var, m, v)]
        in_place = outs[0] is var and outs[1] is m and outs[2] is v
        table += state + (state if in_place else
                          [raw_memory.address(t, torch.float32, var.numel()) for t in outs])
        table += [rows_at, 0, 0, rows, cols, chunk_rows, units, 0, 0, 0, 0, 0]
        columns.append(cols)
        rows_at += rows
        units += -(-rows // chunk_rows)
    return SparseLayout(np.array(table, dtype=np.int64), tuple(columns), rows_at, units)


def update_many(updates: list) -> SparseLayout | None:
    """`update` of many variables in one launch (`_GroupedSparseApplyKerasAdam`: a model's
    embeddings): `updates` holds update's arguments per variable (int32 or int64 indices).
    Each variable's rows are cut into chunks of about CHUNK elements, and the team claims
    the chunks of all of them. Returns the launch's layout (None: nothing to update)."""
    updates = [u for u in updates if u[0].numel()]
    if not updates:
        return None
    layout = sparse_layout([u[:4] for u in updates])
    update_laid_out(layout, [u[5] for u in updates], [u[4] for u in updates],
                    [x for u in updates for x in u[6:]])
    return layout


def update_laid_out(layout: SparseLayout, indices: list, values: list, params: list) -> None:
    """update_many's launch on variables laid out before: per variable its ids (a 1-D int32
    or int64 CPU tensor) and their rows' gradient (float32, a row of the variable's columns
    per id; read in place where its rows are contiguous, as a slice of a wider gradient's
    columns is); params: c1, c2, alpha, eps per variable."""
    ids_and_rows, held, work = [], [], 0
    for ids, rows, cols in zip(indices, values, layout.columns):
        n = ids.shape[0]
        if ids.dim() != 1 or rows.dtype != torch.float32 or rows.numel() != n * cols \
                or ids.dtype not in _INDEX_BYTES:
            raise raw_memory.RawMemoryError(
                f"Adam's sparse update takes 1-D int32/int64 ids and float32 rows of {cols} "
                f"columns per id, got ids of shape {tuple(ids.shape)} ({ids.dtype}) and rows "
                f"of shape {tuple(rows.shape)} ({rows.dtype})")
        if rows.is_contiguous():
            stride = cols
        elif rows.dim() == 2 and rows.shape[0] == n and rows.stride(1) == 1:
            stride = rows.stride(0)
        else:
            rows, stride = rows.contiguous(), cols
        ids = ids.contiguous()
        held += (ids, rows)
        ids_and_rows += [raw_memory.span(ids)[0], raw_memory.strided_span(rows)[0], n,
                         _INDEX_BYTES[ids.dtype], stride]
        work += 2 * n * cols
    compact_many, callback = _built()[:2]
    # each row's slot (-1: untouched), then the touched rows' sums and their squares, for all
    # the variables (compact_many fills both): a small table's update is not mostly setup
    slot, sums = np.empty(layout.rows, dtype=np.int64), np.empty(work, dtype=np.float32)
    table = layout.table.copy()
    bad = compact_many(table, np.array(ids_and_rows, dtype=np.int64), slot, sums)
    if bad >= 0:   # TF's error for the first variable with an id outside its rows
        i = bad & 0xFFFFFFFF
        raise InvalidArgumentError(None, None, f"Index {int(indices[bad >> 32][i])} at "
                                   f"offset {i} in indices is out of range")
    arrays = [table, np.array(params, dtype=np.float32), slot, sums]
    omp_pool.run_chunks(callback, layout.units, 1, arrays, torch.get_num_threads())


_INDEX_BYTES = {torch.int32: 4, torch.int64: 8}


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


class DenseLayout(NamedTuple):
    """What update_dense_many's launch knows of its variables before it sees their
    gradients: `table` with each variable's addresses of var, m, v and the outputs, its size
    and first unit (the gradient's address comes with it); `sizes`; `units`."""
    table: np.ndarray
    sizes: tuple
    units: int


def dense_layout(states: list) -> DenseLayout:
    """The layout of update_dense_many's variables, `states` holding (var, m, v, outs) of
    each: contiguous float32 CPU tensors of one shape per variable."""
    table, sizes, units = [], [], 0
    for var, m, v, outs in states:
        n = var.numel()
        table += [raw_memory.address(t, torch.float32, n) for t in (var, m, v, *outs)]
        table += [0, n, units, 0]
        sizes.append(n)
        units += -(-n // CHUNK)
    return DenseLayout(np.array(table, dtype=np.int64), tuple(sizes), units)


def update_dense_many(updates: list) -> DenseLayout | None:
    """`update_dense` of many variables in one launch (`_GroupedApplyAdam`: a model's small
    variables, each a few microseconds of work that seven ATen calls a variable made ~85):
    `updates` holds update_dense's arguments per variable; the team claims chunks of CHUNK
    elements of all of them. Returns the launch's layout (None: nothing to update)."""
    updates = [u for u in updates if u[0].numel()]
    if not updates:
        return None
    layout = dense_layout([u[:4] for u in updates])
    update_dense_laid_out(layout, [u[4] for u in updates], [x for u in updates for x in u[5:]])
    return layout


def update_dense_laid_out(layout: DenseLayout, grads: list, params: list) -> None:
    """update_dense_many's launch on variables laid out before, with their gradients
    (float32 CPU tensors of the variables' sizes) and params c1, c2, alpha, eps per
    variable."""
    held = [g.contiguous() for g in grads]
    table = layout.table.copy()
    table[6::DENSE_TABLE] = raw_memory.sized_addresses(held, layout.sizes, torch.float32)
    omp_pool.run_chunks(_built()[3], layout.units, 1,
                        [table, np.array(params, dtype=np.float32)],
                        min(torch.get_num_threads(), layout.units))


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such update, not with ndflow
    except ImportError:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, _row, _compact, _step, _decay
    global _view, _update, _stored_square, _own_square, _header, _at, _table_rows, _owner
    global _accumulate
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray

    @numba.njit(inline="always")
    def _accumulate(indices, values, stride, slot, sums, squares, rows, k):
        """Each touched row's sum of slices and of their squares into `sums` and `squares`
        at its slot (the next free one, in first-seen order); -1, or the position of the
        first id outside the rows."""
        count = 0
        for i in range(indices.shape[0]):
            r = indices[i]
            if r < 0 or r >= rows:
                return i
            s = slot[r]
            if s < 0:
                s = slot[r] = count
                count += 1
            for j in range(k):
                x = values[i * stride + j]
                sums[s * k + j] += x
                squares[s * k + j] += x * x
        return -1

    @numba.njit(cache=True)
    def _compact(table, ids_and_rows, slot, work):
        """Completes update_many's table with each variable's ids and rows (ids_and_rows:
        their addresses, their count, an id's bytes, the elements from a row to the next,
        per variable) and its offsets into
        `work`, and sums its touched rows there (`slot`: -1 for an untouched row); -1, or for
        the first id outside its variable's rows `variable << 32 | position`."""
        at = 0
        for t in range(table.shape[0] // 18):
            rec = table[t * 18:(t + 1) * 18]
            rec[13:18] = ids_and_rows[t * 5:(t + 1) * 5]
            k, rows, n, stride = rec[10], rec[9], rec[15], rec[17]
            rec[7], rec[8] = at, at + n * k
            at += 2 * n * k
            own = slot[rec[6]:rec[6] + rows]
            own[:] = -1
            sums, squares = work[rec[7]:rec[8]], work[rec[8]:at]
            sums[:] = 0
            squares[:] = 0
            values = carray(address_as_pointer(rec[14], np.float32),
                            (n - 1) * stride + k if n else 0)
            if rec[16] == 4:
                bad = _accumulate(carray(address_as_pointer(rec[13], np.int32), n), values,
                                  stride, own, sums, squares, rows, k)
            else:
                bad = _accumulate(carray(address_as_pointer(rec[13], np.int64), n), values,
                                  stride, own, sums, squares, rows, k)
            if bad >= 0:
                return (t << 32) | bad
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
    def _table_rows(rec, slots, sums, r, end, c1, c2, alpha, eps):
        """Rows r..end of the variable `rec` of the table (update_many): a touched row by its
        sums (at `sums` + its offsets; its slots at `slots` + its offset), a run of untouched
        rows as one `_decay` loop."""
        k = rec[10]
        slot = carray(address_as_pointer(slots + 8 * rec[6], np.int64), rec[9])
        d = rec[:6]
        in_place = d[3] == d[0] and d[4] == d[1] and d[5] == d[2]
        while r < end:
            s = slot[r]
            if s >= 0:
                g, g2 = _at(sums + (rec[7] + s * k) * 4, k), _at(sums + (rec[8] + s * k) * 4, k)
                _update(d, (0, 1), r * k * 4, k, g, g2, _stored_square, in_place, c1, c2,
                        alpha, eps)
                r += 1
                continue
            e = r + 1
            while e < end and slot[e] < 0:
                e += 1
            _decay(d, r * k * 4, (e - r) * k, in_place, c1, c2, alpha, eps)
            r = e

    # data = [counter, units, 1, (address, length) of the table (18 int64s per variable:
    #         addresses of var, m, v, var_out, m_out, v_out; the offsets of its slots in the
    #         slot buffer and of its sums and squares in the work buffer; rows, columns, rows
    #         per unit, its first unit; addresses of its indices and values, their count, an
    #         index's bytes, the elements from a row of values to the next), of the params
    #         (c1, c2, alpha, eps per variable), of the slot and work buffers]; a unit is a
    #         chunk of rows
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def sparse_adam(data):
        d = carray(data, 12, dtype=np.int64)
        units, count = d[1], d[4] // 18
        table = carray(address_as_pointer(d[3], np.int64), d[4])
        params = carray(address_as_pointer(d[5], np.float32), d[6])
        q = claim_chunk(data)
        while q < units:
            t = _owner(table, count, 18, 12, q)
            rec = table[t * 18:(t + 1) * 18]
            r = (q - rec[12]) * rec[11]
            _table_rows(rec, d[7], d[9], r, min(r + rec[11], rec[9]), params[4 * t],
                        params[4 * t + 1], params[4 * t + 2], params[4 * t + 3])
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
