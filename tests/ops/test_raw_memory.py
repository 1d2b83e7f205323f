"""ndflow/kernels/raw_memory.py: the addresses handed to numba kernels are checked (CPU,
contiguous, dtype, the elements asked for inside the tensor and its storage)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ndflow.kernels import omp_pool
from ndflow.kernels.raw_memory import RawMemoryError, address, sized_addresses, span, split_rows


def test_span_and_address_of_a_contiguous_tensor_and_array():
    t = torch.arange(10, dtype=torch.float32)
    assert span(t) == (t.data_ptr(), 10)
    assert address(t, torch.float32, 10) == t.data_ptr()
    assert address(t, torch.float32, 3, 7) == t.data_ptr() + 7 * 4
    assert address(t, torch.float32, 0, 10) == t.data_ptr() + 40   # an empty tail
    view = t[4:]                      # a view from a storage offset
    assert address(view, torch.float32, 6) == t.data_ptr() + 16
    a = np.arange(6, dtype=np.int64)
    assert span(a) == (a.ctypes.data, 6)
    assert address(a, np.int64, 2, 4) == a.ctypes.data + 32


@pytest.mark.parametrize("count, offset", [(11, 0), (10, 1), (1, 10), (-1, 0), (2, -1)])
def test_elements_past_the_end_are_refused(count, offset):
    t = torch.zeros(10)
    with pytest.raises(RawMemoryError, match="outside"):
        address(t, torch.float32, count, offset)
    with pytest.raises(RawMemoryError, match="outside"):
        address(t.numpy(), np.float32, count, offset)


def test_a_view_cannot_reach_past_its_end_into_its_storage():
    t = torch.zeros(10)
    with pytest.raises(RawMemoryError, match="outside"):
        address(t[2:6], torch.float32, 5)


def test_a_storage_shorter_than_the_tensor_is_refused():
    t = torch.zeros(10)
    t.untyped_storage().resize_(16)    # four floats left under a tensor of ten
    with pytest.raises(RawMemoryError, match="storage of 16"):
        address(t, torch.float32, 10)
    assert address(t, torch.float32, 4) == t.data_ptr()


def test_another_dtype_is_refused():
    with pytest.raises(RawMemoryError, match="float32"):
        address(torch.zeros(4, dtype=torch.float64), torch.float32)
    with pytest.raises(RawMemoryError, match="int64"):
        address(np.zeros(4, np.int32), np.int64)


def test_non_contiguous_memory_is_refused():
    t = torch.zeros(4, 4)
    with pytest.raises(RawMemoryError, match="non-contiguous"):
        span(t.t())
    with pytest.raises(RawMemoryError, match="non-contiguous"):
        address(t[:, 1], torch.float32)
    with pytest.raises(RawMemoryError, match="non-contiguous"):
        span(np.zeros((4, 4))[:, 1])


def test_only_cpu_tensors_and_arrays():
    with pytest.raises(RawMemoryError, match="meta"):
        span(torch.zeros(4, device="meta"))
    with pytest.raises(RawMemoryError, match="list"):
        span([1.0, 2.0])


def test_run_chunks_refuses_a_non_contiguous_array_before_launching():
    if omp_pool.launcher() is None:
        pytest.skip("no OpenMP launcher")
    with pytest.raises(RawMemoryError, match="non-contiguous"):
        omp_pool.run_chunks(0, 4, 1, [torch.zeros(4, 4).t()], 1)   # never called: address 0


def test_split_rows_cuts_large_rows_along_their_arrays():
    """Rows of (2 addresses, a count): one of 10 elements cut into 4 + 4 + 2, the addresses
    moved 4 float32s at a time; a row within the chunk kept; nothing to cut: the table."""
    table = np.array([1000, 2000, 10, 5000, 6000, 3], dtype=np.int64)
    out, origin = split_rows(table, 3, 2, 4)
    assert out.reshape(-1, 3).tolist() == [[1000, 2000, 4], [1016, 2016, 4], [1032, 2032, 2],
                                           [5000, 6000, 3]]
    assert origin.tolist() == [0, 0, 0, 1]
    same, none = split_rows(table, 3, 2, 16)
    assert same is table and none is None


def test_sized_addresses_check_each_count_and_dtype():
    a, b = torch.zeros(6), torch.zeros(2, 3)
    assert sized_addresses([a, b], [6, 6], torch.float32) == [a.data_ptr(), b.data_ptr()]
    with pytest.raises(RawMemoryError, match="6 elements of torch.float32"):
        sized_addresses([a, torch.zeros(5)], [6, 6], torch.float32)
    with pytest.raises(RawMemoryError):
        sized_addresses([a.double()], [6], torch.float32)
