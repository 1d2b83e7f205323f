"""TF1's AdagradDAOptimizer step in a Session: ndflow vs TensorFlow.

    python benchmarks/adagrad_da.py [--steps 40] [--rounds 2] [--tf PYTHON]

The fixed-gradient update of an MLP's variables (784x512, 512, 512x512, 512, 512x10, 10:
0.67 M parameters; ResourceApplyAdagradDA) and of a 50,000 x 64 embedding's 256 gathered rows
(ResourceSparseApplyAdagradDA), with l1 and l2; the figure is the median time of one
`sess.run(train_op)` over `steps` runs after 3 warm-up runs, the best of `rounds` runs of each
interpreter (alternating; the machine may be shared). The same source runs in both
(`--worker MODULE`: `import MODULE as tf`).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from side_by_side import TF_PYTHON, alternate

SHAPES = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
CASES = ["dense MLP", "sparse embedding rows"]


def _time(sess, op, steps: int) -> float:
    for _ in range(3):
        sess.run(op)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        sess.run(op)
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def worker(module: str, steps: int) -> dict:
    tf = __import__(module)
    v1 = tf.compat.v1
    rng = np.random.default_rng(0)
    out = {"version": tf.__version__}
    with tf.Graph().as_default():
        gs = v1.train.get_or_create_global_step()
        variables = [tf.Variable(rng.standard_normal(s).astype(np.float32) * 0.05)
                     for s in SHAPES]
        grads = [tf.constant(rng.standard_normal(s).astype(np.float32) * 0.01) for s in SHAPES]
        emb = tf.Variable(rng.standard_normal((50000, 64)).astype(np.float32))
        rows = tf.constant(rng.integers(0, 50000, 256).astype(np.int32))
        opt = v1.train.AdagradDAOptimizer(0.1, gs, l1_regularization_strength=0.01,
                                          l2_regularization_strength=0.01)
        dense = opt.apply_gradients(zip(grads, variables), global_step=gs)
        sparse_loss = tf.reduce_sum(tf.gather(emb, rows) ** 2)
        sparse = opt.minimize(sparse_loss, global_step=gs, var_list=[emb])
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            out[CASES[0]] = _time(sess, dense, steps)
            out[CASES[1]] = _time(sess, sparse, steps)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tf", default=TF_PYTHON)
    ap.add_argument("--worker", metavar="MODULE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps)))
        return
    from machine import cpu_line  # noqa: PLC0415 - imports torch: the parent only

    print(cpu_line())
    best_ours, best_theirs = alternate(__file__, args.rounds, "--steps", args.steps,
                                       tf_python=args.tf)
    tf_name = f"TF {best_theirs['version']}" if best_theirs else "TF"
    print(f"AdagradDAOptimizer step in a Session; median of {args.steps} steps, best of "
          f"{args.rounds} rounds")
    print(f"  {'case':24s} {'ndflow ms':>10s} {tf_name + ' ms':>12s} {'ratio':>7s}")
    for name in CASES:
        mine = best_ours[name]
        theirs_ms = best_theirs.get(name) if best_theirs else None
        ratio = f"{mine / theirs_ms:6.2f}x" if theirs_ms else "    n/a"
        theirs_text = f"{theirs_ms:12.3f}" if theirs_ms else f"{'n/a':>12s}"
        print(f"  {name:24s} {mine:10.3f} {theirs_text} {ratio}")


if __name__ == "__main__":
    main()
