"""What every side-by-side benchmark shares: the same script runs as a worker in ndflow's
interpreter and in TensorFlow's (`--worker MODULE ...`, printing one JSON object as its last
line), alternating for a few rounds (the machine may be shared), and each side keeps its best
figure. Imports neither torch nor ndflow, so a TensorFlow worker can import it too."""

from __future__ import annotations

import json
import os
import subprocess
import sys

TF_PYTHON = os.environ.get("TF_PYTHON", "/work/tfvenv/bin/python")


def run_json(argv: list, label: str, env: dict | None = None,
             timeout: float = 1800) -> dict | None:
    """Runs `argv` (an interpreter and its arguments) in /tmp and gives back the JSON object
    its last stdout line prints; None (its stderr's tail printed, under `label`) when it
    fails. Each library runs in its own fresh interpreter, so none imports the other and
    every run starts cold; TensorFlow's C++ logging is kept to warnings."""
    try:
        res = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                             timeout=timeout, cwd="/tmp",
                             env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})})
    except (subprocess.SubprocessError, OSError) as e:
        print(f"{label} run failed: {e}", file=sys.stderr)
        return None
    if res.returncode != 0:
        print(f"{label} run failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def run_json_worker(python: str, script: str, args: list, label: str,
                    timeout: float = 1800, env: dict | None = None) -> dict | None:
    """`python script *args` (see run_json)."""
    return run_json([python, os.path.abspath(script), *args], label, env, timeout)


def run_worker(python: str, script: str, module: str, *args, env: dict | None = None,
               timeout: float = 1800) -> dict | None:
    """`python script --worker module *args` (the benchmarks' convention)."""
    return run_json_worker(python, script, ["--worker", module, *args], module, timeout, env)


def best(runs: list, higher=False) -> dict | None:
    """Per key, the best number over the runs that succeeded: the least, or the most for rates
    (`higher`: True for every key, or the set of keys that are rates); other values come from
    the first run."""
    runs = [r for r in runs if r]
    if not runs:
        return None

    def pick(key):
        return max if higher is True or (higher and key in higher) else min
    return {k: (pick(k)(r[k] for r in runs) if isinstance(v, (int, float)) else v)
            for k, v in runs[0].items()}


def alternate(script: str, rounds: int, *args, tf_python: str = TF_PYTHON, higher=False,
              env: dict | None = None, timeout: float = 1800) -> tuple[dict, dict | None]:
    """Runs ndflow's and TensorFlow's workers in turn `rounds` times; each side's best
    figures (TensorFlow's None when its interpreter is missing or every run failed). Exits
    when every ndflow run failed."""
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(run_worker(sys.executable, script, "ndflow", *args, env=env,
                               timeout=timeout))
        if tf_python and os.path.exists(tf_python):
            theirs.append(run_worker(tf_python, script, "tensorflow", *args, env=env,
                                     timeout=timeout))
    best_ours = best(ours, higher)
    if best_ours is None:
        sys.exit("the ndflow run failed")
    return best_ours, best(theirs, higher)


def print_ratios(ours: dict, theirs: dict | None, scale: float = 1.0, unit: str = "ms",
                 digits: int = 2, width: int = 10) -> None:
    """One line per number: ndflow's figure, TensorFlow's and their ratio (ndflow / TF: below
    1 is ndflow faster), the figures multiplied by `scale` (1e3 turns seconds into ms)."""
    for key, mine in ours.items():
        if not isinstance(mine, (int, float)):
            continue
        line = f"  {key:{width}s} ndflow {mine * scale:8.{digits}f} {unit}"
        if theirs and isinstance(theirs.get(key), (int, float)) and theirs[key]:
            line += (f"   TensorFlow {theirs[key] * scale:8.{digits}f} {unit}   ratio "
                     f"{mine / theirs[key]:5.2f}x")
        print(line)


def print_speed_table(rows: list, ours: dict, theirs: dict | None, width: int = 28) -> None:
    """`rows`: (label, key, is_rate). Rates print as whole numbers, times with one decimal;
    the last column is the speed ratio, above 1 when ndflow is faster."""
    def fmt(v, rate):
        return "-" if v is None else f"{v:,.0f}" if rate else f"{v:,.1f}"

    print(f"{'':{width}s}{'ndflow':>12s}{'TensorFlow':>12s}{'ndflow/TF':>11s}")
    for label, key, rate in rows:
        a, b = ours.get(key), (theirs or {}).get(key)
        ratio = "" if a is None or b is None else f"{(a / b if rate else b / a):10.2f}x"
        print(f"{label:{width}s}{fmt(a, rate):>12s}{fmt(b, rate):>12s}{ratio:>11s}")
    print("(ndflow/TF: speed ratio, above 1 = ndflow faster)")
