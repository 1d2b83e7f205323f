"""`python -m ndflow.precompile`: compile ndflow's numba kernels into numba's disk cache
now, as an install step, instead of on a program's first use (and ndflow's modules into
Python's bytecode cache first).

ndflow's hand-written CPU kernels (the conv + relu + pool of CNNs' first block, max pooling,
the grouped optimizer updates, Philox draws, selects, shuffles) are numba code cached on disk
(`cache=True`): the first process on a machine compiles them, later ones load the machine code
in milliseconds. Compiling takes long (the fused conv-pool kernels alone 12-14 s on a 2-core
EPYC), so a fresh install pays it in its first training step, and a test run with several
workers pays it in each worker that reaches a kernel first. This runs every kernel's build
once, in parallel processes (longest first), and says what each took:

    python -m ndflow.precompile [--jobs N]

Each job reaches its kernels through the code that uses them (the OpenMP callbacks' builders,
the public ops for the kernels that compile on their first call, in every dtype those take),
so the cache holds what programs load. Without numba there is nothing to compile (the ATen
paths run) and it says so.

Before the kernels it byte-compiles ndflow's modules into their `__pycache__`, as installing a
wheel does: an editable install leaves that to each first import, and where
PYTHONDONTWRITEBYTECODE=1 is set (as on CI machines) no import writes it, so every process
(each test worker, each fresh interpreter a test starts) compiled every module it imported
from source again: `import ndflow` 1.9 -> 1.7 s here.
"""

from __future__ import annotations

import argparse
import compileall
import concurrent.futures
import importlib
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import torch

import ndflow as tf
from ndflow.kernels import (
    adam_numba,
    adaptive_numba,
    dropout_select,
    gemm_epilogue,
    mkl_sgemm,
    omp_pool,
    philox_numba,
    png16,
    pool_gemm,
    rnn_numba,
    small_gemm_numba,
    tanh_numba,
    work_pool,
    xent_numba,
)

_N = 1 << 13   # elements: above every kernel's size threshold


class Job(NamedTuple):
    modules: tuple          # the modules holding the job's kernels
    build: Callable[[], None]
    openmp: bool = False    # OpenMP callbacks: built only where ATen's launcher was found


def _callbacks(module: str, builder: str, also: tuple = ()) -> Job:
    """The job building the OpenMP callbacks of `ndflow.kernels.<module>` with its builder
    (`also`: modules whose helpers those callbacks compile)."""
    def build() -> None:
        if omp_pool.launcher() is None:     # the ATen path runs instead
            return
        if getattr(importlib.import_module(f"ndflow.kernels.{module}"), builder)() is None:
            raise RuntimeError(f"{module}: the kernels did not build")
    return Job((module, *also), build, openmp=True)


def _small_gemm() -> None:
    a, w = torch.ones(4, 3), torch.ones(16, 3)
    if not small_gemm_numba.applies(a, w):
        raise RuntimeError("small_gemm_numba: the kernel did not build")
    small_gemm_numba.linear(a, w, torch.ones(16), relu=True)
    if small_gemm_numba.product_functions() is None:
        raise RuntimeError("small_gemm_numba: the product's C functions did not build")


def _work_pool() -> None:
    if not work_pool.available() or mkl_sgemm.address() is None:   # nothing shares work
        return
    a, w = torch.ones(256, 64), torch.ones(48, 64)
    y = pool_gemm.linear(a, w, 2)
    if y is None or not bool((y == 64).all()):
        raise RuntimeError("pool_gemm: the kernel did not build")
    work_pool.shutdown()


def _adam() -> None:
    if omp_pool.launcher() is None:     # the ATen path runs instead
        return
    w = torch.zeros(3, 2)
    if not adam_numba.applies(w):
        raise RuntimeError("adam_numba: the kernels did not build")
    adam_numba.update(w, w.clone(), w.clone(), [w, w.clone(), w.clone()], torch.ones(2, 2),
                      torch.tensor([0, 2]), 0.1, 0.001, 0.1, 1e-7)
    adam_numba.update_dense(w, w.clone(), w.clone(), [w, w.clone(), w.clone()],
                            torch.ones(3, 2), 0.1, 0.001, 0.1, 1e-7)


def _adaptive() -> None:
    if omp_pool.launcher() is None:     # the ATen path runs instead
        return
    w = torch.ones(4)
    if not adaptive_numba.applies([w]):
        raise RuntimeError("adaptive_numba: the kernels did not build")
    adaptive_numba.ftrl(w, w.clone(), w.clone(), [w, w.clone(), w.clone()], torch.ones(4), 0.1,
                        0.0, 0.0, -0.5, None)
    adaptive_numba.adadelta(w, w.clone(), w.clone(), [w, w.clone(), w.clone()], torch.ones(4),
                            0.1, 0.95, 1e-7)


def _tanh() -> None:
    if tanh_numba._callback() is None or tanh_numba._serial() is None:
        raise RuntimeError("tanh_numba: the kernels did not build")


def _rnn() -> None:
    if not rnn_numba.applies(torch.zeros(1)):
        raise RuntimeError("rnn_numba: the kernels did not build")
    t, b, h = 2, 3, 4
    zeros = torch.zeros
    for lengths in (None, torch.tensor([2, 1, 0])):
        hs, saved = rnn_numba.gru_forward(zeros(t, b, 3 * h), zeros(3 * h), zeros(3 * h, h),
                                          zeros(b, h), lengths)
        rnn_numba.gru_backward(saved, hs, zeros(b, h), zeros(t, b, h), zeros(b, h),
                               zeros(3 * h, h), lengths)
        hs, reserve = rnn_numba.lstm_forward(zeros(t, b, 4 * h), zeros(4 * h, h), zeros(b, h),
                                             zeros(b, h), lengths)
        n = t * b * 4 * h
        rnn_numba.lstm_backward(reserve[:n].view(t, b, 4 * h), reserve[n:].view(t, b, h),
                                zeros(b, h), zeros(t, b, h), zeros(b, h), zeros(b, h),
                                zeros(4 * h, h), lengths)


def _philox() -> None:
    for dtype in (tf.float32, tf.float64, tf.float16, tf.bfloat16):
        tf.random.uniform([_N], dtype=dtype)
        tf.random.normal([_N], dtype=dtype)
    if omp_pool.launcher() is not None and philox_numba._parallel() is None:
        raise RuntimeError("philox_numba: the parallel draw's callback did not build")
    for dtype in (tf.int32, tf.int64):
        tf.random.uniform([_N], maxval=10, dtype=dtype)


def _select() -> None:
    flags = tf.random.uniform([_N]) < 0.5
    rows = tf.random.uniform([_N // 64, 1]) < 0.5
    for dtype in (tf.float32, tf.float64, tf.int32, tf.int64):
        x, y = tf.ones([_N], dtype), tf.zeros([_N], dtype)
        tf.where(flags, x, y)
        tf.where(flags, x, tf.zeros([], dtype))
        tf.where(flags, tf.ones([], dtype), y)
        tf.where(rows, tf.ones([_N // 64, 64], dtype), tf.zeros([_N // 64, 64], dtype))


def _shuffle() -> None:
    tf.random.shuffle(tf.range(1 << 16))
    rows = tf.data.Dataset.from_tensor_slices(tf.range(300_000))  # a bulk shuffle's order
    list(rows.shuffle(1000, seed=1).batch(100_000))


def _gemm_epilogue() -> None:
    if omp_pool.launcher() is None or gemm_epilogue._sgemm() is None:   # ATen's path runs
        return
    if gemm_epilogue._callbacks() is None:
        raise RuntimeError("gemm_epilogue: the kernel did not build")


def _dropout() -> None:
    for dtype in (torch.float32, torch.float64):
        x = torch.ones(8, dtype=dtype)
        dropout_select.dropout_select(x, x, 0.5, 2.0)
        dropout_select.dropout_select(x, x.bfloat16(), 0.5, 2.0)


def _image_color() -> None:
    image = tf.ones([2, 2, 3])
    tf.image.adjust_hue(image, 0.1)
    tf.image.adjust_saturation(image, 1.5)


def _png16() -> None:
    png16.decode(png16.encode(np.zeros((2, 2, 1), np.uint16), -1))


def _ctc_beam_search() -> None:
    for dtype in (tf.float32, tf.float64):
        tf.nn.ctc_beam_search_decoder(tf.zeros([2, 1, 3], dtype), [2], beam_width=2)


def _index_shuffle() -> None:
    for dtype in (tf.int32, tf.int64):
        tf.random.experimental.index_shuffle(tf.range(4, dtype=dtype), [1, 2],
                                             tf.constant(3, dtype))


def _xent() -> None:
    for dtype in (tf.float32, tf.float64):
        for labels in (tf.constant([0, 1], tf.int32), tf.constant([0, 1], tf.int64)):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                           logits=tf.zeros([2, 3], dtype))
    xent_numba._parallel()   # large float32 batches: ATen's OpenMP team (None without it)


def _proto() -> None:
    message = tf.train.Int64List(value=[1, 2]).SerializeToString()
    sizes, values = tf.io.decode_proto([message], "tensorflow.Int64List", ["value"], [tf.int64])
    tf.io.encode_proto(sizes, values, ["value"], "tensorflow.Int64List")


def _sdca() -> None:
    for adaptive in (False, True):
        tf.compat.v1.train.sdca_optimizer(
            [tf.constant([0], tf.int64)], [tf.constant([1], tf.int64)], [tf.constant([0.5])],
            [tf.ones([1, 2])], tf.ones([1]), tf.ones([1]), [tf.constant([1], tf.int64)],
            [tf.zeros([1])], [tf.zeros([2])], tf.zeros([1, 4]), "logistic_loss", 0.1, 1.0,
            1, 1, adaptative=adaptive)


def _math_special_cephes() -> None:
    for dtype in (tf.float32, tf.float64):
        x = tf.constant([0.5, 2.0], dtype)
        for fn in (tf.math.special.dawsn, tf.math.special.expint, tf.math.special.fresnel_cos,
                   tf.math.special.fresnel_sin, tf.math.special.spence):
            fn(x)


def _stateless_random_extra() -> None:
    tf.random.stateless_binomial([4], [1, 2], 10.0, 0.5)
    for dtype in (tf.float16, tf.float32, tf.float64):
        tf.random.stateless_parameterized_truncated_normal(
            [4], [1, 2], tf.constant(0.0, dtype), tf.constant(1.0, dtype),
            tf.constant(-1.0, dtype), tf.constant(1.0, dtype))


def _fractional_pool() -> None:
    for dtype in (tf.float32, tf.float64, tf.int32, tf.int64):
        x = tf.ones([1, 4, 4, 1], dtype)
        for pool in (tf.nn.fractional_max_pool, tf.nn.fractional_avg_pool):
            if dtype.is_floating:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    out = pool(x, [1, 1.5, 1.5, 1], seed=1).output
                tape.gradient(out, x)
            else:
                pool(x, [1, 1.5, 1.5, 1], seed=1)


def _eigh_tridiagonal() -> None:
    for dtype in (tf.float16, tf.float32, tf.float64, tf.complex64, tf.complex128):
        alpha = tf.cast(tf.constant([2.0, 3.0, 4.0]), dtype.real_dtype)
        beta = tf.cast(tf.constant([1.0, 1.0]), dtype)
        if dtype.is_complex:
            alpha = tf.cast(alpha, dtype)
        tf.linalg.eigh_tridiagonal(alpha, beta)
        if dtype is not tf.float16:     # eigenvectors need single precision or more
            tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)


def _isotonic_regression() -> None:
    for dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32):
        tf.nn.isotonic_regression(tf.constant([[3, 1, 2]], dtype))


def _tridiagonal_solve() -> None:
    for dtype in (tf.float32, tf.float64):
        tf.linalg.tridiagonal_solve(tf.ones([3, 4], dtype), tf.ones([4, 1], dtype))


def _matrix_logarithm() -> None:
    for dtype in (tf.complex64, tf.complex128):
        tf.linalg.logm(tf.constant([[2.0, 1.0], [0.0, 3.0]], dtype))


def _image_proposals_jpeg() -> None:
    tf.image.generate_bounding_box_proposals(    # scores [1, 2, 2, 1]: 4 anchors
        tf.ones([1, 2, 2, 1]), tf.zeros([1, 2, 2, 4]), tf.constant([[8.0, 8.0, 1.0, 1.0, 1.0]]),
        tf.constant([[[0.0, 0.0, 4.0, 4.0]] * 4]))
    jpeg = tf.io.encode_jpeg(tf.zeros([32, 32, 3], tf.uint8))   # 4:2:0
    tf.io.decode_and_crop_jpeg(jpeg, [0, 0, 16, 16])


def _string_hash() -> None:
    words = tf.constant(["", "a", "farmhash", "x" * 100])
    tf.strings.to_hash_bucket_fast(words, 10)
    tf.strings.to_hash_bucket_strong(words, 10, [1, 2])
    tf.strings.to_hash_bucket(words, 10)
    tf.fingerprint(tf.ones([2, 3]))
    tf.compat.v1.train.sdca_fprint(words)


# longest first (tests/ops/test_numba_disk_cache.py checks that every module with a
# disk-cached kernel is in a job)
JOBS = {
    "batch_norm": _callbacks("batch_norm_numba", "_callbacks"),
    "conv_pool": _callbacks("conv_pool_numba", "_callbacks"),
    "conv_narrow": _callbacks("conv_narrow_numba", "_callbacks"),
    "max_pool": _callbacks("max_pool_numba", "_callbacks"),
    "max_pool3d_grad": _callbacks("max_pool3d_grad_numba", "_callbacks"),
    "attention": _callbacks("attention_numba", "_kernels"),
    "conv_fft": _callbacks("conv_fft_numba", "_kernel"),
    "transpose": _callbacks("transpose_numba", "_kernel"),
    "bmm": _callbacks("bmm_numba", "_kernel"),
    "philox": Job(("philox_numba",), _philox),
    "math_special_cephes": Job(("math_special_cephes",), _math_special_cephes, openmp=True),
    "stateless_random_extra": Job(("stateless_random_extra_numba",), _stateless_random_extra),
    "fractional_pool": Job(("fractional_pool_numba",), _fractional_pool),
    "eigh_tridiagonal": Job(("eigh_tridiagonal",), _eigh_tridiagonal),
    "isotonic_regression": Job(("isotonic_regression",), _isotonic_regression),
    "matrix_logarithm": Job(("matrix_logarithm",), _matrix_logarithm),
    "tridiagonal_solve": Job(("tridiagonal_solve_numba",), _tridiagonal_solve),
    "image_proposals_jpeg": Job(("image_proposals", "image_jpeg"), _image_proposals_jpeg),
    "ctc_beam_search": Job(("ctc_beam_search",), _ctc_beam_search),
    "momentum": _callbacks("momentum_numba", "_callback", also=("bfloat16_numba",)),
    "select": Job(("select",), _select),
    "shuffle": Job(("philox_shuffle", "shuffle_buffer"), _shuffle),
    "rmsprop": _callbacks("rmsprop_numba", "_callback"),
    "tanh": Job(("tanh_numba",), _tanh, openmp=True),
    "rnn": Job(("rnn_numba_rows", "exp_numba"), _rnn),
    "adam": Job(("adam_numba",), _adam, openmp=True),
    "adaptive": Job(("adaptive_numba",), _adaptive, openmp=True),
    "small_gemm": Job(("small_gemm_numba",), _small_gemm),
    "sum_squares": _callbacks("sum_squares_numba", "_callback"),
    "resize_bilinear": _callbacks("resize_bilinear_numba", "_callback"),
    "xent": Job(("xent_numba", "exp_numba"), _xent),
    "string_hash": Job(("string_hash_numba", "fingerprint128_numba"), _string_hash),
    "gemm_epilogue": Job(("gemm_epilogue",), _gemm_epilogue, openmp=True),
    "dropout": Job(("dropout_select",), _dropout),
    "index_shuffle": Job(("random_index_shuffle",), _index_shuffle),
    "png16": Job(("png16",), _png16),
    "image_color": Job(("image_color_numba",), _image_color),
    "image_transform": _callbacks("image_transform_numba", "_callback"),
    "depthwise": _callbacks("depthwise_numba", "_callback"),
    "proto_wire": Job(("proto_wire_numba",), _proto),
    "sdca": Job(("sdca_numba",), _sdca),
    "work_pool": Job(("work_pool_numba", "pool_gemm"), _work_pool),
}


def run_job(job: str) -> float:
    """Builds `job`'s kernels in this process; returns the seconds it took."""
    start = time.perf_counter()
    JOBS[job].build()
    return time.perf_counter() - start


def compile_bytecode(workers: int) -> float:
    """Byte-compiles every module of the ndflow package (py_compile writes the cache whatever
    PYTHONDONTWRITEBYTECODE says); the seconds it took."""
    start = time.perf_counter()
    if not compileall.compile_dir(os.path.dirname(os.path.abspath(tf.__file__)), quiet=1,
                                  workers=workers):
        raise RuntimeError("a module of ndflow did not compile")
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ndflow.precompile",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes compiling at once (default: the CPU count)")
    args = ap.parse_args(argv)
    print(f"ndflow.precompile: ndflow's modules byte-compiled in "
          f"{compile_bytecode(max(1, args.jobs)):.1f} s", flush=True)
    try:
        import numba  # noqa: PLC0415
    except ImportError:
        print("ndflow.precompile: numba is not installed; nothing to compile (the "
              "ATen kernels run)")
        return 0
    start = time.perf_counter()
    workers = max(1, min(args.jobs, len(JOBS)))
    failed = 0
    # spawn: each worker a fresh interpreter, as the programs that will load the cache
    with concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(run_job, job): job for job in JOBS}   # longest first
        for future in concurrent.futures.as_completed(futures):
            job = futures[future]
            try:
                print(f"ndflow.precompile: {job} ({', '.join(JOBS[job].modules)}) ready in "
                      f"{future.result():.1f} s", flush=True)
            except Exception as e:  # noqa: BLE001 - report every job, then fail
                failed += 1
                print(f"ndflow.precompile: {job} failed: {type(e).__name__}: {e}",
                      file=sys.stderr, flush=True)
    print(f"ndflow.precompile: {len(JOBS) - failed} of {len(JOBS)} kernel groups in "
          f"numba's disk cache (numba {numba.__version__}, {workers} processes, "
          f"{time.perf_counter() - start:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
