"""Restore reads each tensor once, straight into the ATen tensor the variable then owns
(bundle_reading.py): same values as `read`, CRC still checked, no clone on assignment."""

import os

import google_crc32c
import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.checkpoint.bundle_reading import crc32c_at
from ndflow.checkpoint.tensor_bundle import BundleReader
from ndflow.core import errors

from .test_tensor_bundle import EXPECTED, TF_BUNDLE, _copy_fixture, _flip


def test_crc32c_at_matches_google_crc32c():
    data = np.random.default_rng(0).integers(0, 256, 100_003, dtype=np.uint8)
    assert crc32c_at(data.ctypes.data, data.nbytes) == google_crc32c.value(data.tobytes())
    assert crc32c_at(0, 0) == 0


def test_read_tensor_gives_tensorflows_values_in_memory_it_owns():
    reader = BundleReader(TF_BUNDLE)
    for key, want in EXPECTED.items():
        got = reader.read_tensor(key)
        if want.dtype == object:
            assert got is None  # strings: `read`
            continue
        assert isinstance(got, torch.Tensor) and tuple(got.shape) == want.shape, key
        assert got.untyped_storage().resizable(), key  # not pinned by a NumPy view
        as_numpy = got.float().numpy() if got.dtype is torch.bfloat16 else got.numpy()
        np.testing.assert_array_equal(as_numpy, want.astype(as_numpy.dtype), err_msg=key)


def test_read_tensor_checks_the_crc(tmp_path):
    prefix = _copy_fixture(tmp_path)
    _flip(prefix + ".data-00000-of-00001", 3)  # inside "a/nested/key"
    with pytest.raises(errors.DataLossError, match=r"Checksum does not match"):
        BundleReader(prefix).read_tensor("a/nested/key")


def test_restore_assigns_without_touching_earlier_reads(tmp_path):
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    path = tf.train.Checkpoint(v=v).write(os.path.join(tmp_path, "ck"))
    before = v.read_value()
    v.assign(tf.zeros([2, 3]))
    held = v.read_value()
    tf.train.Checkpoint(v=v).read(path).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), before.numpy())
    np.testing.assert_array_equal(held.numpy(), np.zeros((2, 3)))  # a new buffer, not in place
    v.assign_add(tf.ones([2, 3]))  # the restored buffer is the variable's own
    np.testing.assert_array_equal(v.numpy(), before.numpy() + 1)
