"""A TF1 queue-runner input pipeline (the CIFAR-10 tutorial's cifar10_input.py shape):
ndflow vs TensorFlow on the same files.

    python benchmarks/queue_pipeline.py [--records 20000] [--batches 100] [--rounds 2]
                                        [--tf PYTHON]

string_input_producer -> FixedLengthRecordReader (1 label byte + a 32x32x3 image) ->
decode_raw -> label/image slices, transpose to HWC, cast to float32 -> shuffle_batch (batch
128, capacity 2000, min_after_dequeue 1000, `--threads` reader threads), all under
start_queue_runners in a Session; the figure is images per second over `batches` batches
after 10 warm-up batches (the best of `rounds` runs). The same source runs in both
interpreters (`--worker MODULE`: `import MODULE as tf`), one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

RECORD = 1 + 32 * 32 * 3


def make_files(tmp: str, records: int) -> list:
    rng = np.random.default_rng(0)
    files = []
    per_file = records // 4
    for k in range(4):
        labels = rng.integers(0, 10, per_file, dtype=np.uint8)[:, None]
        pixels = rng.integers(0, 256, (per_file, RECORD - 1), dtype=np.uint8)
        path = os.path.join(tmp, f"data_batch_{k}.bin")
        with open(path, "wb") as f:
            f.write(np.concatenate([labels, pixels], axis=1).tobytes())
        files.append(path)
    return files


def worker(module: str, files: list, batches: int, threads: int) -> dict:
    tf = __import__(module)
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    fq = tf1.train.string_input_producer(files)
    _, value = tf1.FixedLengthRecordReader(record_bytes=RECORD).read(fq)
    record = tf1.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record, [0], [1]), tf.int32)
    label.set_shape([1])
    image = tf.reshape(tf.strided_slice(record, [1], [RECORD]), [3, 32, 32])
    image = tf.cast(tf.transpose(image, [1, 2, 0]), tf.float32)
    images, labels = tf1.train.shuffle_batch([image, label], batch_size=128, capacity=2000,
                                             min_after_dequeue=1000, num_threads=threads)
    with tf1.Session() as sess:
        coord = tf1.train.Coordinator()
        runners = tf1.train.start_queue_runners(sess, coord)
        for _ in range(10):
            sess.run([images, labels])
        start = time.perf_counter()
        for _ in range(batches):
            sess.run([images, labels])
        seconds = time.perf_counter() - start
        coord.request_stop()
        coord.join(runners, stop_grace_period_secs=10)
    return {"images_per_s": batches * 128 / seconds}


def run_worker(python: str, module: str, files: list, args) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, *files,
                          "--batches", str(args.batches), "--threads", str(args.threads)],
                         capture_output=True, text=True, env=env, timeout=1800,
                         cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1:], args.batches, args.threads)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(tmp, args.records)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_worker(sys.executable, "ndflow", files, args))
            if os.path.exists(args.tf):
                theirs.append(run_worker(args.tf, "tensorflow", files, args))
    ours = [r["images_per_s"] for r in ours if r]
    theirs = [r["images_per_s"] for r in theirs if r]
    if not ours:
        sys.exit("the ndflow run failed")
    line = f"queue pipeline (shuffle_batch 128, {args.threads} reader threads): ndflow " \
           f"{max(ours):,.0f} images/s"
    if theirs:
        line += f", TensorFlow {max(theirs):,.0f} images/s, ratio {max(ours) / max(theirs):.2f}x"
    print(line)


if __name__ == "__main__":
    main()
