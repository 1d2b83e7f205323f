"""TensorBoard's hparams API (`from tensorboard.plugins.hparams import api as hp`, as the
hparams guide imports it) runs on ndflow where TensorFlow is not installed: its own
`import tensorflow` gets ndflow (ndflow/tensorboard_tf.py), so `hp.hparams_config`,
`hp.hparams` and `hp.KerasCallback` write through the program's default writer. The event
files equal TensorFlow 2.21's (tests/fixtures/tensorboard_hparams_api/expected.json).
Each program runs in its own interpreter: once TensorBoard's API has resolved its TensorFlow,
TensorBoard keeps it for the process."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.fixture_modules import FIXTURES

FIXTURE = FIXTURES / "tensorboard_hparams_api"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())

pytestmark = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is not None,
                                reason="TensorFlow itself is installed: TensorBoard uses it")


def _run(code: str, cwd) -> str:
    run = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_hparams_api_writes_as_tensorflow(tmp_path):
    out = _run("import json, sys\n"
               f"sys.path.insert(0, {str(FIXTURE)!r})\n"
               "import ndflow as tf\n"
               "from configs import program\n"
               f"print(json.dumps(program(tf, {str(tmp_path / 'logs')!r})))\n", tmp_path)
    assert json.loads(out.splitlines()[-1]) == EXPECTED


def test_other_imports_of_tensorflow_still_fail(tmp_path):
    out = _run("import ndflow\n"
               "try:\n"
               "    import tensorflow\n"
               "except ModuleNotFoundError as e:\n"
               "    print('refused', e.name)\n", tmp_path)
    assert out.strip() == "refused tensorflow"
