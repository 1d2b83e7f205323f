"""`tf.train.Checkpoint` save and restore of ~100 MiB of variables: ndflow vs TensorFlow on the
same checkpoint in the same run.

    python benchmarks/checkpoint_io.py [--mib 100] [--variables 8] [--repeats 5] [--rounds 2]
                                       [--tf PYTHON]

The parent writes one checkpoint with ndflow (`tf.train.Checkpoint(...).write`); each worker
(ndflow, then TensorFlow, alternating `rounds` times; the machine may be shared) builds the
same variables, restores that checkpoint `repeats` times (so TensorFlow also reads ndflow's
files: the values are checked), then saves its own checkpoint `repeats` times. Figures: the
best and median milliseconds and MB/s of restore and save; the ratio ndflow / TensorFlow of
restore time (issue 10: restore was 2.7x TensorFlow's).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

SEED = 7


def _shapes(mib: int, count: int) -> list:
    """`count` float32 matrices of 2048 columns adding up to about `mib` MiB."""
    rows = max(1, mib * 2**20 // (4 * 2048 * count))
    return [(rows, 2048)] * count


def _values(shapes: list) -> list:
    rng = np.random.default_rng(SEED)
    return [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def _timed(fn, repeats: int) -> list:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def worker(module: str, prefix: str, mib: int, count: int, repeats: int) -> dict:
    tf = __import__(module)
    shapes = _shapes(mib, count)
    variables = [tf.Variable(tf.zeros(s), name=f"v{i}") for i, s in enumerate(shapes)]
    ckpt = tf.train.Checkpoint(**{f"v{i}": v for i, v in enumerate(variables)})
    restore = _timed(lambda: ckpt.read(prefix).assert_consumed(), repeats)
    expected = _values(shapes)
    for v, e in zip(variables, expected):
        if not np.array_equal(v.numpy(), e):
            raise SystemExit(f"{module}: restored values differ from the saved ones")
    with tempfile.TemporaryDirectory() as tmp:
        save = _timed(lambda: ckpt.write(os.path.join(tmp, "own")), repeats)
    nbytes = sum(int(np.prod(s)) * 4 for s in shapes)
    return {"version": tf.__version__, "restore_s": restore, "save_s": save, "bytes": nbytes}


def write_checkpoint(tmp: str, mib: int, count: int) -> str:
    import ndflow as tf  # only the parent imports ndflow

    variables = {f"v{i}": tf.Variable(v) for i, v in enumerate(_values(_shapes(mib, count)))}
    return tf.train.Checkpoint(**variables).write(os.path.join(tmp, "ckpt"))


def run_worker(python: str, module: str, args, prefix: str) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, prefix,
                          "--mib", str(args.mib), "--variables", str(args.variables),
                          "--repeats", str(args.repeats)], capture_output=True, text=True,
                         env=env, timeout=900, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _row(name: str, runs: list) -> dict:
    restore = [t for r in runs for t in r["restore_s"]]
    save = [t for r in runs for t in r["save_s"]]
    mb = runs[0]["bytes"] / 1e6
    print(f"  {name:18s} restore ms: min {1000 * min(restore):7.1f}, median "
          f"{1000 * statistics.median(restore):7.1f} ({mb / min(restore):6.0f} MB/s);  save ms: "
          f"min {1000 * min(save):7.1f}, median {1000 * statistics.median(save):7.1f} "
          f"({mb / min(save):6.0f} MB/s)")
    return {"restore": min(restore), "restore_median": statistics.median(restore),
            "save": min(save)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--variables", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "PREFIX"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.mib, args.variables,
                                args.repeats)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    have_tf = os.path.exists(args.tf)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = write_checkpoint(tmp, args.mib, args.variables)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_worker(sys.executable, "ndflow", args, prefix))
            if have_tf:
                theirs.append(run_worker(args.tf, "tensorflow", args, prefix))
    ours, theirs = [r for r in ours if r], [r for r in theirs if r]
    if not ours:
        sys.exit("the ndflow run failed")
    print(f"tf.train.Checkpoint of {args.variables} float32 variables, "
          f"{ours[0]['bytes'] / 2**20:.0f} MiB (written by ndflow), {args.rounds} rounds x "
          f"{args.repeats} repeats")
    o = _row("ndflow", ours)
    if theirs:
        t = _row(f"TensorFlow {theirs[0]['version']}", theirs)
        print(f"  ndflow / TF restore time: min {o['restore'] / t['restore']:.2f}x, median "
              f"{o['restore_median'] / t['restore_median']:.2f}x;  save time: min "
              f"{o['save'] / t['save']:.2f}x  (TensorFlow restored ndflow's checkpoint and "
              "got the saved values)")
    else:
        print("  TensorFlow: not available")


if __name__ == "__main__":
    main()
