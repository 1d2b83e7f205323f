"""tf.data sources and structure: element_spec, values vs NumPy, cardinality, errors — the
expected specs, orders and messages are TensorFlow 2.21's (checked with the TF oracle)."""

import numpy as np
import pytest

import ndflow as tf

D = tf.data.Dataset


def spec(shape, dtype):
    return tf.TensorSpec(shape, dtype)


def test_from_tensor_slices_spec_values_and_len():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    ds = D.from_tensor_slices(([1, 2, 3], x))
    assert ds.element_spec == (spec([], tf.int32), spec([2], tf.float32))
    assert int(ds.cardinality()) == 3 and len(ds) == 3
    got = list(ds.as_numpy_iterator())
    assert [a for a, _ in got] == [1, 2, 3]
    np.testing.assert_array_equal(np.stack([b for _, b in got]), x)
    first = next(iter(ds))
    assert isinstance(first, tuple) and first[1].dtype == tf.float32


def test_dicts_nests_and_strings():
    ds = D.from_tensor_slices({"a": [1, 2, 3], "b": [[1.0], [2.0], [3.0]]})
    assert ds.element_spec == {"a": spec([], tf.int32), "b": spec([1], tf.float32)}
    out = list(D.from_tensor_slices(["x", "yz"]).as_numpy_iterator())
    assert out == [b"x", b"yz"]
    assert D.from_tensors(([1, 2], "a")).element_spec == (spec([2], tf.int32),
                                                          spec([], tf.string))


def test_from_tensor_slices_errors():
    with pytest.raises(ValueError, match="Unbatching a tensor is only supported for rank >= 1"):
        D.from_tensor_slices(1)
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        D.from_tensor_slices(([1, 2], [1, 2, 3]))


def test_range_like_python():
    assert list(D.range(5).as_numpy_iterator()) == list(range(5))
    assert list(D.range(10, 2, -3).as_numpy_iterator()) == [10, 7, 4]
    assert int(D.range(2, 10, 3).cardinality()) == 3
    assert D.range(3, output_type=tf.int32).element_spec == spec([], tf.int32)
    assert D.range(5).element_spec == spec([], tf.int64)


def test_from_generator_signature_and_old_arguments():
    ds = D.from_generator(lambda: iter([(1, [2]), (3, [4, 5])]),
                          output_types=(tf.int64, tf.int32), output_shapes=((), (None,)))
    assert ds.element_spec == (spec([], tf.int64), spec([None], tf.int32))
    got = list(ds.as_numpy_iterator())
    assert got[1][0] == 3 and got[1][1].tolist() == [4, 5]
    assert D.from_generator(lambda: iter([1]), output_types=tf.int64).element_spec == \
        spec(None, tf.int64)
    gen = D.from_generator(lambda n: range(int(n)), args=(3,),
                           output_signature=spec([], tf.int32))
    assert list(gen.as_numpy_iterator()) == [0, 1, 2]
    assert list(gen.as_numpy_iterator()) == [0, 1, 2]  # a fresh generator per iteration


def test_from_generator_errors_are_tensorflows():
    with pytest.raises(TypeError, match="can not be used together with the `output_signature`"):
        D.from_generator(lambda: iter([1]), output_types=tf.int64,
                         output_signature=spec([], tf.int64))
    with pytest.raises(TypeError, match="either the `output_signature` argument or the "
                                        "`output_types` argument"):
        D.from_generator(lambda: iter([1]))
    bad_type = D.from_generator(lambda: iter([1, 2, "a"]), output_signature=spec([], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected type was int64, but "
                                                              "the yielded element was a"):
        list(bad_type)
    bad_shape = D.from_generator(lambda: iter([[1, 2]]), output_signature=spec([], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"element of shape \(2,\) where "
                                                              r"an element of shape \(\) was"):
        list(bad_shape)

    def raising():
        yield 1
        raise KeyError("k")
    with pytest.raises(tf.errors.UnknownError, match="KeyError"):
        list(D.from_generator(raising, output_signature=spec([], tf.int64)))


def test_zip_and_concatenate():
    z = D.zip(D.range(3), D.from_tensor_slices(["a", "b", "c", "d"]))
    assert int(z.cardinality()) == 3
    assert list(z.as_numpy_iterator()) == [(0, b"a"), (1, b"b"), (2, b"c")]
    zd = D.zip({"a": D.range(2), "b": D.range(3)})
    assert list(zd.as_numpy_iterator()) == [{"a": 0, "b": 0}, {"a": 1, "b": 1}]
    with pytest.raises(TypeError, match="Invalid input to `zip`"):
        D.zip(1)
    c = D.range(3).concatenate(D.range(2))
    assert list(c.as_numpy_iterator()) == [0, 1, 2, 0, 1] and int(c.cardinality()) == 5
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        D.range(3).concatenate(D.from_tensors(1.0))
    relaxed = D.from_tensors([1, 2]).concatenate(D.from_tensors([1, 2, 3]))
    assert relaxed.element_spec == spec([None], tf.int32)


def test_len_and_cardinality_constants():
    assert (tf.data.AUTOTUNE, tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == \
        (-1, -1, -2)
    assert tf.data.experimental.AUTOTUNE == -1
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(D.range(3).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(D.range(3).filter(lambda x: True))
    assert repr(D.range(3)) == \
        "<_RangeDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"


class LinesDataset(tf.data.Dataset):
    """A source through the documented subclass hook (as TFRecordDataset uses it)."""

    def __init__(self, lines):
        super().__init__(tf.TensorSpec([], tf.string))
        self._lines = lines

    def _elements(self):
        yield from self._lines


def test_subclass_hook_for_sources():
    ds = LinesDataset([b"a", b"bc", "d"])
    assert list(ds.as_numpy_iterator()) == [b"a", b"bc", b"d"]
    assert [b.tolist() for b in ds.batch(2).as_numpy_iterator()] == [[b"a", b"bc"], [b"d"]]
    assert list(ds.map(lambda s: tf.strings.length(s)).as_numpy_iterator()) == [1, 2, 1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="LinesDataset produced an "
                                                              "element of shape"):
        list(LinesDataset([[b"a", b"b"]]))


def test_text_line_dataset(tmp_path):
    import gzip
    import zlib
    plain = tmp_path / "l.txt"
    plain.write_bytes(b"a\nbb\r\n\nc")
    packed = tmp_path / "l.gz"
    packed.write_bytes(gzip.compress(b"x\ny\n"))
    z = tmp_path / "l.z"
    z.write_bytes(zlib.compress(b"p\nq"))
    ds = tf.data.TextLineDataset(str(plain))
    assert ds.element_spec == spec([], tf.string)
    assert list(ds.as_numpy_iterator()) == [b"a", b"bb", b"", b"c"]  # TensorFlow's lines
    assert list(tf.data.TextLineDataset([str(packed)], compression_type="GZIP")
                .as_numpy_iterator()) == [b"x", b"y"]
    both = tf.data.TextLineDataset([str(z), str(plain)], compression_type="ZLIB")
    with pytest.raises(tf.errors.DataLossError, match="l.txt"):
        list(both)
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt; No such file"):
        list(tf.data.TextLineDataset(str(tmp_path / "nope.txt")))


def test_options_iterator_type_and_v1_helpers():
    options = tf.data.Options()
    assert options.deterministic is None and options.threading.private_threadpool_size is None
    options.deterministic = False
    ds = D.range(3).with_options(options)
    assert ds.options() == options and ds.options().deterministic is False
    assert list(ds.as_numpy_iterator()) == [0, 1, 2]
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options."):
        options.foo = 1
    assert isinstance(iter(ds), tf.data.Iterator)
    assert isinstance(ds.as_numpy_iterator(), tf.data.NumpyIterator)
    assert int(tf.data.experimental.cardinality(D.range(3))) == 3
    assert tf.compat.v1.data.get_output_types(D.range(2)) == tf.int64
    assert tf.compat.v1.data.get_output_shapes(D.range(2).batch(2)) == tf.TensorShape([None])


def test_fixed_length_record_dataset(tmp_path):
    import gzip
    plain, packed, ragged = tmp_path / "a.bin", tmp_path / "a.gz", tmp_path / "b.bin"
    plain.write_bytes(b"HHabcdefghiFF")
    packed.write_bytes(gzip.compress(b"HHabcdefghiFF"))
    ragged.write_bytes(b"HHabcdefgFF")
    ds = tf.data.FixedLengthRecordDataset([str(plain)], 3, header_bytes=2, footer_bytes=2)
    assert ds.element_spec == spec([], tf.string) and int(ds.cardinality()) == -2
    assert list(ds.as_numpy_iterator()) == [b"abc", b"def", b"ghi"]  # TensorFlow's records
    gz = tf.data.FixedLengthRecordDataset(str(packed), 3, 2, 2, compression_type="GZIP")
    assert list(gz.as_numpy_iterator()) == [b"abc", b"def", b"ghi"]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"has body length 7 bytes, which is not an exact multiple of the "
                             r"record length \(4 bytes\)"):
        list(tf.data.FixedLengthRecordDataset(str(ragged), 4, header_bytes=2, footer_bytes=2))
    assert repr(tf.data.DatasetSpec.from_value(D.range(3))) == \
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))"
