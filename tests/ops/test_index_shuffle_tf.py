"""tf.random.experimental.index_shuffle (RandomIndexShuffle) against TensorFlow 2.21
(tests/fixtures/tf_index_shuffle, generate.py beside it): TF's permutations for block sizes
16 to 64 (its quirks at block edges included), batched indices, maxima and seed rows, int32
and int64; TF's kernel errors and graph-build shapes and errors; tf.random.Algorithm and the
random.experimental aliases."""

import json
import os
import re

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import random_index_shuffle as kernel
from tests.fixtures.tf_index_shuffle.cases import BAD, PUBLIC, RAW, SPECS

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_index_shuffle")
EXPECTED = json.load(open(os.path.join(HERE, "expected.json")))
DTYPES = {"int32": tf.int32, "int64": tf.int64}


@pytest.mark.parametrize("case", sorted(PUBLIC))
@pytest.mark.parametrize("traced", [False, True])
def test_public_function_equals_tensorflow(case, traced):
    index, seed, max_index, dtype = PUBLIC[case]
    fn = tf.random.experimental.index_shuffle
    out = (tf.function(fn) if traced else fn)(tf.constant(index, DTYPES[dtype]), seed,
                                              tf.constant(max_index, DTYPES[dtype]))
    assert out.dtype == DTYPES[dtype]
    assert out.numpy().tolist() == EXPECTED["public"][case]


@pytest.mark.parametrize("case", sorted(RAW))
def test_raw_op_equals_tensorflow(case):
    index, seed, max_index, dtype, seed_dtype = RAW[case]
    out = tf.raw_ops.RandomIndexShuffle(index=tf.constant(index, DTYPES[dtype]),
                                        seed=tf.constant(seed, DTYPES[seed_dtype]),
                                        max_index=tf.constant(max_index, DTYPES[dtype]))
    assert out.numpy().tolist() == EXPECTED["raw"][case]


def test_python_fallback_gives_the_same_permutation():
    """The kernel's element function run as plain Python (as without numba): a whole
    permutation of [0, 40], the doc example and the wide-seed case."""
    u = np.uint64

    def one(i, words, max_index):
        return int(kernel._shuffle_one(u(i), *(u(w & 0xFFFFFFFF) for w in words),
                                       u(max_index), 4))

    for i, expected in enumerate(EXPECTED["public"]["doc_10"]):
        assert one(i, [kernel.ris.SEED_PAD, 5, 8], 9) == expected
    assert sorted(one(i, [1, 2, 3], 40) for i in range(41)) == list(range(41))
    index, seed, max_index, _ = PUBLIC["int64_wide_seed"]
    assert [one(i, [kernel.ris.SEED_PAD, *seed], max_index) for i in index] == \
        EXPECTED["public"]["int64_wide_seed"]


def _core(msg: str) -> str:
    msg = re.sub(r"^\{\{function_node [^}]*\}\} ", "", msg.split("ValueError: ")[-1])
    return msg.split(" [Op:", 1)[0].split(" for '{{node", 1)[0]


@pytest.mark.parametrize("case", sorted(BAD))
def test_kernel_errors_are_tensorflows(case):
    index, seed, max_index = BAD[case]
    kind, msg = EXPECTED["errors"][case]
    with pytest.raises(getattr(tf.errors, kind)) as info:
        tf.raw_ops.RandomIndexShuffle(index=tf.constant(index, tf.int32),
                                      seed=tf.constant(seed, tf.int32),
                                      max_index=tf.constant(max_index, tf.int32))
    assert _core(str(info.value)) == _core(msg)


@pytest.mark.parametrize("case", sorted(SPECS))
def test_graph_shapes_and_errors_are_tensorflows(case):
    expected = EXPECTED["shapes"][case]
    fn = tf.function(tf.random.experimental.index_shuffle)
    specs = [tf.TensorSpec(s, tf.int32) for s in SPECS[case]]
    if isinstance(expected, list) and expected and expected[0] == "ValueError":
        with pytest.raises(ValueError) as info:
            fn.get_concrete_function(*specs)
        assert _core(str(info.value)) == _core(expected[1])
        return
    shape = fn.get_concrete_function(*specs).structured_outputs.shape
    assert (shape.as_list() if shape.rank is not None else "unknown") == expected


def test_index_shuffle_is_not_differentiable_and_permutes():
    x = tf.constant(3)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.random.experimental.index_shuffle(x, [1, 2], 10)
    assert tape.gradient(y, x) is None
    perm = tf.random.experimental.index_shuffle(tf.range(1000), [7, 7], 999).numpy()
    np.testing.assert_array_equal(np.sort(perm), np.arange(1000))


def test_algorithm_enum_and_experimental_aliases():
    assert [a.value for a in tf.random.Algorithm] == [1, 2, 3]
    assert tf.random.experimental.Algorithm is tf.random.Algorithm
    assert tf.random.experimental.Generator is tf.random.Generator
    assert tf.random.experimental.create_rng_state is tf.random.create_rng_state
    assert tf.random.experimental.get_global_generator is tf.random.get_global_generator
    assert tf.random.experimental.set_global_generator is tf.random.set_global_generator
    a = tf.random.Generator.from_seed(5, alg=tf.random.Algorithm.PHILOX)
    b = tf.random.Generator.from_seed(5, alg="philox")
    np.testing.assert_array_equal(a.normal([4]).numpy(), b.normal([4]).numpy())
    threefry = tf.random.Generator.from_seed(5, alg=tf.random.Algorithm.THREEFRY)
    with pytest.raises(tf.errors.UnimplementedError, match="ThreeFry"):   # TF: XLA only
        threefry.normal([4])
