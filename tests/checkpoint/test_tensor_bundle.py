"""The TensorBundle format (`.index` table + `.data-00000-of-00001`) against files written by
TensorFlow 2.21 (tests/fixtures/checkpoints, generate.py beside them)."""

import os
import pathlib
import shutil

import ml_dtypes
import numpy as np
import pytest

from ndflow.checkpoint import sstable
from ndflow.checkpoint.object_graph import escape_local_name, variable_key
from ndflow.checkpoint.tensor_bundle import BundleReader, BundleWriter
from ndflow.core import errors

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "checkpoints")
TF_BUNDLE = os.path.join(FIXTURES, "bundle", "all_dtypes")

EXPECTED = {  # what generate.py saved
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
    "f64": np.array([1.5, -2.25]),
    "f16": np.array([0.5, 1.0], np.float16),
    "bf16": np.array([1.5, -3.0], ml_dtypes.bfloat16),
    "i8": np.array([-3, 4], np.int8),
    "u8": np.array([250, 1], np.uint8),
    "i32": np.array(7, np.int32),
    "i64": np.array([[1 << 40]], np.int64),
    "bool": np.array([True, False, True]),
    "empty": np.zeros((0, 3), np.float32),
    "str": np.array([b"hello", b"", b"x" * 200], dtype=object),
    "a/nested/key": np.array([1.0], np.float32),
}


def test_reads_tensorflows_bundle():
    reader = BundleReader(TF_BUNDLE)
    assert reader.keys() == sorted(EXPECTED)
    for key, want in EXPECTED.items():
        got = reader.read(key)
        assert got.dtype == want.dtype, key
        assert got.shape == want.shape, key
        np.testing.assert_array_equal(got, want)
        assert reader.dtype_and_shape(key) == (want.dtype, want.shape)


def test_writes_byte_identical_bundle(tmp_path):
    # TensorFlow's SaveV2 of the same tensors (added in key order) gives the same two files
    writer = BundleWriter(tmp_path / "ours")
    for key in sorted(EXPECTED):
        writer.add(key, EXPECTED[key])
    writer.finish()
    for suffix in (".index", ".data-00000-of-00001"):
        with open(str(tmp_path / "ours") + suffix, "rb") as a, open(TF_BUNDLE + suffix,
                                                                     "rb") as b:
            assert a.read() == b.read(), suffix
    assert sorted(os.listdir(tmp_path)) == ["ours.data-00000-of-00001", "ours.index"]


def test_many_keys_span_several_table_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(sstable, "BLOCK_SIZE", 256)
    writer = BundleWriter(tmp_path / "big")
    for i in range(300):
        writer.add(f"var_{i:04d}/with/a/long/shared/prefix", np.full((2,), i, np.int32))
    writer.finish()
    items = sstable.read_table(pathlib.Path(str(tmp_path / "big") + ".index").read_bytes(), "x")
    assert len(items) == 301
    reader = BundleReader(tmp_path / "big")
    assert len(reader.keys()) == 300
    np.testing.assert_array_equal(reader.read("var_0123/with/a/long/shared/prefix"), [123, 123])


def test_keys_are_sorted_whatever_the_add_order(tmp_path):
    writer = BundleWriter(tmp_path / "s")
    for key in ["b", "a/z", "c", "a"]:
        writer.add(key, np.array([len(key)], np.int64))
    writer.finish()
    reader = BundleReader(tmp_path / "s")
    assert reader.keys() == ["a", "a/z", "b", "c"]
    assert [int(reader.read(k)[0]) for k in reader.keys()] == [1, 3, 1, 1]


def test_duplicate_key_and_unknown_key(tmp_path):
    writer = BundleWriter(tmp_path / "d")
    writer.add("a", np.zeros(1))
    with pytest.raises(errors.InvalidArgumentError, match="duplicate key: a"):
        writer.add("a", np.zeros(1))
    writer.finish()
    with pytest.raises(errors.NotFoundError, match="Key b not found in checkpoint"):
        BundleReader(tmp_path / "d").read("b")
    with pytest.raises(errors.NotFoundError, match="Failed to find any matching files"):
        BundleReader(tmp_path / "missing")


def _copy_fixture(tmp_path):
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(TF_BUNDLE + suffix, str(tmp_path / "b") + suffix)
    return str(tmp_path / "b")


def _flip(path, offset):
    data = bytearray(pathlib.Path(path).read_bytes())
    data[offset] ^= 0x40
    pathlib.Path(path).write_bytes(bytes(data))


@pytest.mark.parametrize("offset", [0, 100, -5, -49])
def test_corrupted_index_is_data_loss_naming_the_file(tmp_path, offset):
    prefix = _copy_fixture(tmp_path)
    _flip(prefix + ".index", offset)
    with pytest.raises(errors.DataLossError, match=r"b\.index"):
        BundleReader(prefix)


def test_truncated_index_is_data_loss(tmp_path):
    prefix = _copy_fixture(tmp_path)
    data = pathlib.Path(prefix + ".index").read_bytes()
    for size in (0, 10, len(data) - 1):
        pathlib.Path(prefix + ".index").write_bytes(data[:size])
        with pytest.raises(errors.DataLossError, match=r"b\.index"):
            BundleReader(prefix)


def test_corrupted_or_truncated_data_is_data_loss_naming_the_file(tmp_path):
    prefix = _copy_fixture(tmp_path)
    data_file = prefix + ".data-00000-of-00001"
    _flip(data_file, 3)  # inside the first tensor ("a/nested/key")
    reader = BundleReader(prefix)
    with pytest.raises(errors.DataLossError, match=r"Checksum does not match.*b\.data-00000"):
        reader.read("a/nested/key")
    np.testing.assert_array_equal(reader.read("f64"), EXPECTED["f64"])  # others intact
    _flip(data_file, 3)
    data = pathlib.Path(data_file).read_bytes()
    pathlib.Path(data_file).write_bytes(data[:-20])
    with pytest.raises(errors.DataLossError, match=r"truncated"):
        BundleReader(prefix).read("u8")


def test_corrupted_string_tensor_is_data_loss(tmp_path):
    prefix = _copy_fixture(tmp_path)
    reader = BundleReader(prefix)
    entry = reader._entries["str"]
    _flip(prefix + ".data-00000-of-00001", entry.offset + 10)
    with pytest.raises(errors.DataLossError, match="'str'"):
        BundleReader(prefix).read("str")


def test_os_error_at_rename_is_typed_and_leaves_no_temp_file(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(os, "replace", refuse)
    writer = BundleWriter(tmp_path / "x")
    writer.add("a", np.zeros(1))
    with pytest.raises(errors.PermissionDeniedError, match="Permission denied"):
        writer.finish()
    assert os.listdir(tmp_path) == []


def test_unwritable_directory_is_permission_denied_and_leaves_nothing(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    os.chmod(tmp_path, 0o500)
    try:
        writer = BundleWriter(tmp_path / "x")
        writer.add("a", np.zeros(1))
        with pytest.raises(errors.PermissionDeniedError):
            writer.finish()
    finally:
        os.chmod(tmp_path, 0o700)
    assert os.listdir(tmp_path) == []


def test_local_names_are_escaped_as_tensorflow():
    # TF 2.21 keys a dict {"x/y": ..., "a.b": ...} as d/x.Sy/... and d/a..b/...
    assert escape_local_name("a/b.c") == "a.Sb..c"
    assert variable_key(("model", "x/y")) == "model/x.Sy/.ATTRIBUTES/VARIABLE_VALUE"
