"""CSV reading: ndflow's `tf.data.experimental.CsvDataset` and `make_csv_dataset` vs
TensorFlow's on the same file, in the same run.

    python benchmarks/csv_dataset.py [--rows 50000] [--rounds 3] [--tf PYTHON]

Data: a CSV file of `rows` rows and 5 columns (int, float, int, string, float) with a header,
written once. Figures (best of `rounds` passes after a warm-up pass, in seconds):

- CsvDataset(...).batch(256): the batched path (ndflow slices batches from whole columns);
- make_csv_dataset(batch_size=256, num_epochs=1, shuffle=False): header names, type
  inference, batching and the OrderedDict map;
- make_csv_dataset(..., shuffle=True): the per-row path through shuffle.

The same source runs in both interpreters (`--worker MODULE`: `import MODULE as tf`), one
after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def _worker(module: str, path: str, rounds: int) -> dict:
    tf = __import__(module)
    E = tf.data.experimental

    def timed(make):
        for _ in make():  # warm-up
            pass
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in make():
                pass
            best = min(best, time.perf_counter() - start)
        return best

    return {
        "CsvDataset.batch(256)": timed(lambda: E.CsvDataset(
            path, [0, 0.0, 0, "", 0.0], header=True).batch(256)),
        "make_csv_dataset": timed(lambda: E.make_csv_dataset(
            path, 256, num_epochs=1, shuffle=False)),
        "make_csv_dataset(shuffle)": timed(lambda: E.make_csv_dataset(
            path, 256, num_epochs=1, shuffle=True, shuffle_seed=1)),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        module, path, rounds = args.worker
        print(json.dumps(_worker(module, path, int(rounds))))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line
    print(cpu_line())
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.csv")
        with open(path, "w") as f:
            f.write("a,b,c,d,e\n")
            for i in range(args.rows):
                f.write(f"{i},{rng.random():.5f},{rng.randint(0, 9)},w{i % 7},"
                        f"{rng.random() * 100:.2f}\n")
        results = {}
        for name, python, module in (("ndflow", sys.executable, "ndflow"),
                                     ("tensorflow", args.tf, "tensorflow")):
            out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, path,
                                  str(args.rounds)], capture_output=True, text=True,
                                 cwd=tmp, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
            if out.returncode != 0:
                raise SystemExit(f"{name} worker failed:\n{out.stderr[-2000:]}")
            results[name] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{args.rows} rows x 5 columns; seconds per pass (best of {args.rounds})")
    for key in results["ndflow"]:
        nd, ref = results["ndflow"][key], results["tensorflow"][key]
        print(f"  {key:28s} ndflow {nd:7.3f}  TF {ref:7.3f}  ndflow/TF time {nd / ref:5.2f}x")


if __name__ == "__main__":
    main()
