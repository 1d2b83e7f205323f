"""Seeded `Dataset.shuffle` gives TensorFlow 2.21's exact orders: the cases of
tests/fixtures/tf_dataset_shuffle/cases.py (seeds, buffer sizes, repeats fused and unfused,
maps and batches around the shuffle, tf.functions, TF1 Sessions, errors) against what TF
recorded in expected.json; plus what TF cannot record: unseeded shuffles, and the bulk
(tensor slices) and element-by-element paths drawing the same order."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.data import shuffle_buffer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_dataset_shuffle"
_spec = importlib.util.spec_from_file_location("tf_dataset_shuffle", FIXTURES / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["cases"]


@pytest.fixture(autouse=True)
def _no_global_seed():
    yield
    tf.random.set_seed(None)


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_case_matches_tensorflow(name):
    assert cases.CASES[name](tf) == EXPECTED[name]


def test_unseeded_shuffles_are_random_permutations():
    tf.random.set_seed(None)
    orders = [list(tf.data.Dataset.range(50).shuffle(50).as_numpy_iterator())
              for _ in range(3)]
    assert all(sorted(o) == list(range(50)) for o in orders)
    assert len({tuple(o) for o in orders}) == 3
    ds = tf.data.Dataset.range(50).shuffle(50, reshuffle_each_iteration=False)
    assert list(ds.as_numpy_iterator()) == list(ds.as_numpy_iterator())


def test_the_bulk_and_the_element_paths_draw_the_same_order():
    x = np.arange(300).reshape(100, 3)
    for buffer_size in (1, 7, 64, 100, 1000):
        bulk = tf.data.Dataset.from_tensor_slices(x).shuffle(buffer_size, seed=3).batch(10)
        one_by_one = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v).shuffle(
            buffer_size, seed=3).batch(10)
        a = np.concatenate(list(bulk.as_numpy_iterator()))
        b = np.concatenate(list(one_by_one.as_numpy_iterator()))
        np.testing.assert_array_equal(a, b)
        assert sorted(a[:, 0].tolist()) == list(range(0, 300, 3))


def test_the_order_kernel_equals_its_python_loop():
    kernel = shuffle_buffer._kernel()
    if kernel is None:
        pytest.skip("numba is not installed")
    for n, b in ((1, 1), (9, 4), (500, 37), (64, 1000), (300, 300)):
        words = shuffle_buffer.WordStream(n, b).take(n)
        a, c = np.empty(n, np.int64), np.empty(n, np.int64)
        kernel(a, words, b)
        shuffle_buffer.fill_order_loop(c, words, b)
        np.testing.assert_array_equal(a, c)
        assert sorted(a.tolist()) == list(range(n))


def _chunks(values, sizes):
    out, i, k = [], 0, 0
    while i < len(values):
        n = sizes[k % len(sizes)]
        out.append(values[i:i + n])
        i, k = i + n, k + 1
    return out


@pytest.mark.parametrize("n", [0, 1, 5, 37, 1500])
@pytest.mark.parametrize("buffer_size", [1, 2, 7, 100, 1000, 2 ** 62])
def test_the_chunked_shuffle_draws_the_element_order(n, buffer_size):
    """`shuffled_chunks` (lists in, lists out: TFRecord records on their way to `batch`)
    gives `shuffled`'s order for any cut of the input into lists."""
    values = list(range(n))
    want = list(shuffle_buffer.shuffled(lambda: iter(values), buffer_size,
                                        shuffle_buffer.WordStream(5, 9)))
    for sizes in ([1], [3], [312], [1, 50, 7, 500]):
        got = list(shuffle_buffer.shuffled_chunks(lambda s=sizes: iter(_chunks(values, s)),
                                                  buffer_size,
                                                  shuffle_buffer.WordStream(5, 9)))
        assert all(got) and [v for c in got for v in c] == want


@pytest.mark.parametrize("buffer_size", [1, 5, 50])
def test_the_chunked_shuffle_gives_the_outputs_before_an_input_error(buffer_size):
    chunks = _chunks(list(range(200)), [7, 13])

    def failing(flat: bool):
        for c in chunks:
            if c[-1] >= 120:
                raise tf.errors.DataLossError(None, None, "corrupted record at 7")
            yield from (c if flat else [c])

    def collect(gen, flat):
        got = []
        with pytest.raises(tf.errors.DataLossError):
            for v in gen:
                got.extend([v] if flat else v)
        return got

    want = collect(shuffle_buffer.shuffled(lambda: failing(True), buffer_size,
                                           shuffle_buffer.WordStream(1, 1)), True)
    got = collect(shuffle_buffer.shuffled_chunks(lambda: failing(False), buffer_size,
                                                 shuffle_buffer.WordStream(1, 1)), False)
    assert got == want and len(want) >= 110 - buffer_size
