"""Writes tf_2_21_metrics.json: every corpus program's final metrics under TensorFlow 2.21
and Keras 3 — the reference tests/programs/test_corpus.py holds ndflow's runs to. Run it in
the TensorFlow environment (the programs then `import tensorflow` / `import keras` for real):

    /work/tfvenv/bin/python tests/programs/corpus/generate_fixture.py [PROGRAM ...]

Each program runs as the test runs it under ndflow: `run_program.py PROGRAM tensorflow` in a
fresh scratch directory, one process each, with the same seeds and environment. Naming
programs regenerates just those entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run_program import MARKER  # noqa: E402

FIXTURE = os.path.join(HERE, "tf_2_21_metrics.json")
NOT_PROGRAMS = {"generate_fixture.py", "run_program.py", "synthetic_data.py"}


def programs() -> list:
    return sorted(name[:-3] for name in os.listdir(HERE)
                  if name.endswith(".py") and name not in NOT_PROGRAMS)


def run(program: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="",
               TF_CPP_MIN_LOG_LEVEL="2")
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run([sys.executable, os.path.join(HERE, "run_program.py"),
                               os.path.join(HERE, program + ".py"), "tensorflow"],
                              cwd=scratch, env=env, capture_output=True, text=True,
                              timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{program} failed under TensorFlow:\n{done.stderr[-4000:]}")
    line = [x for x in done.stdout.splitlines() if x.startswith(MARKER)][-1]
    return json.loads(line[len(MARKER):])


def main(names: list) -> None:
    import keras
    import tensorflow as tf

    if os.path.exists(FIXTURE):
        with open(FIXTURE) as f:
            out = json.load(f)
    else:
        out = {"programs": {}}
    out["_meta"] = {"tensorflow": tf.__version__, "keras": keras.__version__}
    for program in names or programs():
        print("running", program, flush=True)
        out["programs"][program] = run(program)
    out["programs"] = dict(sorted(out["programs"].items()))
    with open(FIXTURE, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", FIXTURE)


if __name__ == "__main__":
    main(sys.argv[1:])
