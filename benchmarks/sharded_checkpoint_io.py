"""Sharded `tf.train.Checkpoint` writes (`CheckpointOptions(experimental_sharding_callback=
MaxShardSizePolicy(...))`) of ~100 MiB of variables: ndflow vs TensorFlow in the same run.

    python benchmarks/sharded_checkpoint_io.py [--mib 100] [--variables 8] [--shard-mib 16]
                                               [--repeats 3] [--rounds 2] [--tf PYTHON]

The parent writes one sharded checkpoint with ndflow; each worker (ndflow, then TensorFlow,
alternating `rounds` times; the machine may be shared) builds the same variables, restores
that checkpoint (TensorFlow reads ndflow's shards: the values are checked), then writes its
own sharded checkpoint `repeats` times and restores it. Figures: best and median ms of the
sharded write and of the restore, and the ratios ndflow / TensorFlow.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_io import _shapes, _timed, _values  # noqa: E402


def _options(tf, shard_mib: int):
    return tf.train.CheckpointOptions(experimental_sharding_callback=(
        tf.train.experimental.MaxShardSizePolicy(max_shard_size=shard_mib * 2**20)))


def worker(module: str, prefix: str, args) -> dict:
    tf = __import__(module)
    shapes = _shapes(args.mib, args.variables)
    variables = [tf.Variable(tf.zeros(s), name=f"v{i}") for i, s in enumerate(shapes)]
    ckpt = tf.train.Checkpoint(**{f"v{i}": v for i, v in enumerate(variables)})
    ckpt.read(prefix).assert_consumed()
    for v, e in zip(variables, _values(shapes)):
        if not np.array_equal(v.numpy(), e):
            raise SystemExit(f"{module}: values read from ndflow's shards differ")
    options = _options(tf, args.shard_mib)
    with tempfile.TemporaryDirectory() as tmp:
        own = os.path.join(tmp, "own")
        save = _timed(lambda: ckpt.write(own, options=options), args.repeats)
        shards = len([n for n in os.listdir(tmp) if ".data-" in n])
        restore = _timed(lambda: ckpt.read(own).assert_consumed(), args.repeats)
    return {"version": tf.__version__, "save_s": save, "restore_s": restore, "shards": shards,
            "bytes": sum(int(np.prod(s)) * 4 for s in shapes)}


def run_worker(python: str, module: str, prefix: str, argv: list) -> dict | None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", module, prefix, *argv],
                         capture_output=True, text=True, env=env, timeout=900,
                         cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(f"{module} run failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _row(name: str, runs: list) -> dict:
    save = [t for r in runs for t in r["save_s"]]
    restore = [t for r in runs for t in r["restore_s"]]
    mb = runs[0]["bytes"] / 1e6
    print(f"  {name:18s} {runs[0]['shards']} shards; write ms: min {1000 * min(save):7.1f}, "
          f"median {1000 * statistics.median(save):7.1f} ({mb / min(save):5.0f} MB/s);  "
          f"restore ms: min {1000 * min(restore):7.1f}, median "
          f"{1000 * statistics.median(restore):7.1f}")
    return {"save": min(save), "save_median": statistics.median(save),
            "restore": min(restore)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--variables", type=int, default=8)
    ap.add_argument("--shard-mib", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs=2, metavar=("MODULE", "PREFIX"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args)))
        return
    from machine import cpu_line

    print(cpu_line())
    passed = ["--mib", str(args.mib), "--variables", str(args.variables), "--shard-mib",
              str(args.shard_mib), "--repeats", str(args.repeats)]
    import ndflow as tf  # only the parent and the ndflow worker import ndflow

    with tempfile.TemporaryDirectory() as tmp:
        variables = {f"v{i}": tf.Variable(v)
                     for i, v in enumerate(_values(_shapes(args.mib, args.variables)))}
        prefix = tf.train.Checkpoint(**variables).write(
            os.path.join(tmp, "ckpt"), options=_options(tf, args.shard_mib))
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_worker(sys.executable, "ndflow", prefix, passed))
            if os.path.exists(args.tf):
                theirs.append(run_worker(args.tf, "tensorflow", prefix, passed))
    ours, theirs = [r for r in ours if r], [r for r in theirs if r]
    if not ours:
        sys.exit("the ndflow run failed")
    print(f"sharded tf.train.Checkpoint.write of {args.variables} float32 variables, "
          f"{ours[0]['bytes'] / 2**20:.0f} MiB, MaxShardSizePolicy({args.shard_mib} MiB), "
          f"{args.rounds} rounds x {args.repeats} repeats")
    o = _row("ndflow", ours)
    if theirs:
        t = _row(f"TensorFlow {theirs[0]['version']}", theirs)
        print(f"  ndflow / TF write time: min {o['save'] / t['save']:.2f}x, median "
              f"{o['save_median'] / t['save_median']:.2f}x;  restore: "
              f"{o['restore'] / t['restore']:.2f}x  (TensorFlow read ndflow's shards and got "
              "the saved values)")
    else:
        print("  TensorFlow: not available")


if __name__ == "__main__":
    main()
