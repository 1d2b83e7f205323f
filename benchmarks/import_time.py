"""Import time: `import ndflow as tf; tf.constant(1.0) + 1` in a fresh process (issue 57 §1).

    python benchmarks/import_time.py [--repeat 3] [--tf /work/tfvenv/bin/python] [--repo DIR]

Each case runs in fresh interpreters, best of `--repeat`: the process's wall time (start to
exit, as `time python -c ...` shows it), its CPU time (user + system: steadier than wall time
on a loaded machine) and the ndflow modules it loaded. The cases:

- `tf.constant(1.0) + 1`: the issue's bars are <= 1.0 s wall and <= 250 ndflow modules;
- `torch` only (`import torch; torch.tensor(1.0) + 1`): the floor under ndflow;
- a Keras `fit` program's import and first step (a Dense model, one batch);
- TensorFlow 2.21 (`--tf`, when that interpreter exists): its `tf.constant(1.0) + 1`.

`--repo DIR` measures the ndflow checkout in DIR (PYTHONPATH), e.g. main against a branch.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COUNT = ("import sys; print(sum(1 for m in sys.modules if m == 'ndflow' "
         "or m.startswith('ndflow.')), file=sys.stderr)")
CASES = {
    "tf.constant(1.0) + 1": "import ndflow as tf; tf.constant(1.0) + 1\n" + COUNT,
    "torch only": "import torch; torch.tensor(1.0) + 1",
    "keras fit, import + first step": (
        "import numpy as np\nimport ndflow as tf\n"
        "model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, "
        "activation='relu'), tf.keras.layers.Dense(1)])\n"
        "model.compile(optimizer='adam', loss='mse')\n"
        "x = np.ones((32, 8), np.float32); y = np.ones((32, 1), np.float32)\n"
        "model.fit(x, y, batch_size=32, epochs=1, verbose=0)\n" + COUNT),
}
TF_CASE = "import tensorflow as tf; tf.constant(1.0) + 1"


def run(python: str, code: str, env: dict) -> tuple[float, float, int | None]:
    # (run in the measured checkout: `python -c` puts the working directory first on the path)
    """(wall s, CPU s, ndflow modules or None) of one fresh process running `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                         check=False, cwd=env["PYTHONPATH"])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{code!r} failed:\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = out.stderr.strip().splitlines()
    modules = int(lines[-1]) if lines and lines[-1].isdigit() else None
    return wall, cpu, modules


def best_of(python: str, code: str, env: dict, repeat: int) -> tuple[float, float, int | None]:
    runs = [run(python, code, env) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tf", default="/work/tfvenv/bin/python")
    parser.add_argument("--repo", default=os.path.dirname(HERE))
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.repo), TF_CPP_MIN_LOG_LEVEL="3")
    print(f"ndflow from {os.path.abspath(args.repo)}, best of {args.repeat} fresh processes")
    print(f"{'case':34s} {'wall s':>7s} {'CPU s':>7s} {'modules':>8s}")
    for name, code in CASES.items():
        wall, cpu, modules = best_of(sys.executable, code, env, args.repeat)
        print(f"{name:34s} {wall:7.2f} {cpu:7.2f} {modules if modules is not None else '':>8}")
    if os.path.exists(args.tf):
        wall, cpu, _ = best_of(args.tf, TF_CASE, env, args.repeat)
        print(f"{'TensorFlow 2.21 tf.constant(1.0)+1':34s} {wall:7.2f} {cpu:7.2f}")


if __name__ == "__main__":
    main()
