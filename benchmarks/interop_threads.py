"""TF_NUM_INTEROP_THREADS: when do a plan's independent branches gain from running at once?

    python benchmarks/interop_threads.py [--sizes 512,1024,2048] [--rounds 2] [--tf PYTHON]

The step is a `tf.function` with two independent towers, each `DEPTH` n x n float32 matmuls
(tanh between them), joined by one add: the shape of two model towers or two independent
gradient chains. Each configuration (intra-op threads, inter-op threads) runs in a fresh
interpreter, ndflow's and TensorFlow's alternating, `rounds` times; a figure is the best
round's median ms per step. Ratios: ndflow with 2 inter-op threads vs 1 (the overlap gain),
and ndflow vs TensorFlow at the same setting. With PyTorch, the same two towers by hand
(`torch.jit.fork` overlaps them as a parallel plan does) give the reference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

DEPTH = 3
CONFIGS = [(1, 1), (1, 2), (2, 1), (2, 2)]  # (intra-op threads, inter-op threads)


def worker(module: str, intra: int, inter: int, sizes: list, steps: int) -> dict:
    """Runs under ndflow or TensorFlow (or 'torch'): ms per step per size."""
    import numpy as np

    rng = np.random.default_rng(0)
    out = {}
    if module == "torch":
        import torch

        torch.set_num_threads(intra)

        def tower(x, ws: list[torch.Tensor]):
            for w in ws:
                x = torch.tanh(x @ w)
            return x
        scripted = torch.jit.script(tower)

        def step(x, w1, w2):
            if inter > 1:
                fut = torch.jit.fork(scripted, x, w1)
                b = scripted(x, w2)
                return torch.jit.wait(fut) + b
            return tower(x, w1) + tower(x, w2)
    else:
        tf = __import__(module)
        tf.config.threading.set_intra_op_parallelism_threads(intra)
        tf.config.threading.set_inter_op_parallelism_threads(inter)

        @tf.function
        def step(x, w1, w2):
            a, b = x, x
            for i in range(DEPTH):
                a = tf.tanh(tf.matmul(a, w1[i]))
                b = tf.tanh(tf.matmul(b, w2[i]))
            return a + b
    for n in sizes:
        scale = 1.0 / np.sqrt(n)
        arrays = [(rng.standard_normal((n, n)) * scale).astype(np.float32)
                  for _ in range(2 * DEPTH + 1)]
        if module == "torch":
            import torch
            x, *ws = [torch.from_numpy(a) for a in arrays]
        else:
            x, *ws = [tf.constant(a) for a in arrays]
        w1, w2 = ws[:DEPTH], ws[DEPTH:]
        for _ in range(2):
            np.asarray(step(x, w1, w2))
        times = []
        for _ in range(steps):
            t = time.perf_counter()
            np.asarray(step(x, w1, w2))
            times.append(time.perf_counter() - t)
        out[str(n)] = 1e3 * sorted(times)[len(times) // 2]
    return out


def run_worker(python: str, module: str, intra: int, inter: int, sizes: str, steps: int):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", OMP_NUM_THREADS=str(intra))
    cmd = [python, os.path.abspath(__file__), "--worker", module, str(intra), str(inter),
           "--sizes", sizes, "--steps", str(steps)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/tmp")
    if r.returncode != 0:
        print(f"  {module} ({intra}, {inter}) failed: {r.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def _best(runs: list) -> dict | None:
    runs = [r for r in runs if r]
    if not runs:
        return None
    return {n: min(r[n] for r in runs) for n in runs[0]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="512,1024,2048")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python"))
    ap.add_argument("--worker", nargs=3, metavar=("MODULE", "INTRA", "INTER"),
                    help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        module, intra, inter = args.worker[0], int(args.worker[1]), int(args.worker[2])
        print(json.dumps(worker(module, intra, inter, sizes, args.steps)))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_line

    print(cpu_line())
    print(f"two towers of {DEPTH} n x n float32 matmuls + tanh, ms per step (median; best of "
          f"{args.rounds} rounds)")
    have_tf = os.path.exists(args.tf)
    print(f"{'intra':>5} {'inter':>5} {'n':>5} {'ndflow':>9} {'TF':>9} {'torch':>9} "
          f"{'nd/TF':>6} {'overlap gain':>12}", flush=True)
    results: dict = {}
    for intra, inter in CONFIGS:
        runs: dict = {"ndflow": [], "tensorflow": [], "torch": []}
        for _ in range(args.rounds):
            runs["ndflow"].append(run_worker(sys.executable, "ndflow", intra, inter,
                                             args.sizes, args.steps))
            if have_tf:
                runs["tensorflow"].append(run_worker(args.tf, "tensorflow", intra, inter,
                                                     args.sizes, args.steps))
            runs["torch"].append(run_worker(sys.executable, "torch", intra, inter,
                                            args.sizes, args.steps))
        r = results[(intra, inter)] = {k: _best(v) for k, v in runs.items()}
        nan = float("nan")
        for n in map(str, sizes):  # a row as soon as its configuration is done
            ours = r["ndflow"][n] if r["ndflow"] else nan
            theirs = r["tensorflow"][n] if r["tensorflow"] else nan
            torch_ms = r["torch"][n] if r["torch"] else nan
            base = results.get((intra, 1), {}).get("ndflow")
            gain = base[n] / ours if base and inter > 1 else nan
            print(f"{intra:>5} {inter:>5} {n:>5} {ours:>9.2f} {theirs:>9.2f} {torch_ms:>9.2f} "
                  f"{ours / theirs:>6.2f} {gain:>12.2f}", flush=True)

if __name__ == "__main__":
    main()
