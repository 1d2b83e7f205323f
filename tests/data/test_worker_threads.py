"""A consumer iterating a pipeline with its own threads leaves them a core, unless OpenMP's
idle threads sleep (OMP_WAIT_POLICY=PASSIVE), and always gets its thread count back."""

import pytest
import torch

import ndflow as tf
from ndflow.data.worker_threads import leave_a_core_to_the_pipeline


@pytest.mark.parametrize("policy, fewer", [("", 1), ("passive", 0)])
def test_a_core_is_left_unless_openmp_sleeps(monkeypatch, policy, fewer):
    monkeypatch.setenv("OMP_WAIT_POLICY", policy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        ds = tf.data.Dataset.range(4).prefetch(1)
        with leave_a_core_to_the_pipeline(ds):
            assert torch.get_num_threads() == 2 - fewer
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
