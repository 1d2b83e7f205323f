"""A benchmark's worker run in a fresh interpreter (ndflow's, TensorFlow's venv, PyTorch
alone), its result the JSON object its last stdout line prints: each library in its own
process, on the same data, so that none imports the other and every run starts cold."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_json_worker(python: str, script: str, args: list, label: str,
                    timeout: float = 1800) -> dict | None:
    """`python script *args`'s last stdout line as JSON; None (its stderr's tail printed,
    under `label`) when it fails. TensorFlow's C++ logging is kept to warnings."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    res = subprocess.run([python, os.path.abspath(script), *map(str, args)],
                         capture_output=True, text=True, env=env, timeout=timeout)
    if res.returncode != 0:
        print(f"{label} run failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])
