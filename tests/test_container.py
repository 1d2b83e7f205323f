"""The container files: the Dockerfile installs the pinned torch from PyTorch's CPU index, then
ndflow, and runs the README's MNIST command; Dockerfile.addpackages extends it. Parsed here
(building an image needs a Docker daemon); hadolint lints both in the slow pass."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
ADDPACKAGES = ROOT / "examples" / "container" / "Dockerfile.addpackages"


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, continuations joined."""
    out, pending = [], ""
    for line in path.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, rest = full.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def arg_defaults(items) -> dict[str, str]:
    return dict(rest.split("=", 1) for kw, rest in items if kw == "ARG" and "=" in rest)


def expand(text: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], text)


def readme_install_command() -> list[str]:
    """The README's first shell block: its install-and-run line, split at `&&`."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [part.strip() for part in block.strip().splitlines()[0].split("&&")]


DOCKER = instructions(DOCKERFILE)
ARGS = arg_defaults(DOCKER)


def test_base_image_is_a_slim_python_that_ndflow_supports():
    assert DOCKER[0] == ("ARG", "BASE_IMAGE=python:3.11-slim")
    assert ("FROM", "${BASE_IMAGE}") in DOCKER
    needs = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    version = re.match(r"python:(\d+\.\d+)-slim", ARGS["BASE_IMAGE"]).group(1)
    assert version in SpecifierSet(needs)


def test_installs_the_readmes_torch_pin_from_the_cpu_index_before_ndflow():
    runs = [expand(rest, ARGS) for kw, rest in DOCKER if kw == "RUN"]
    torch_run = next(r for r in runs if "torch==" in r)
    pin = re.search(r'"?torch==([\w.]+)"?', torch_run).group(1)
    readme_pin = next(re.search(r"torch==([\w.]+)", p).group(1)
                      for p in readme_install_command() if "torch==" in p)
    assert pin == readme_pin == "2.13.0"
    assert "--index-url https://download.pytorch.org/whl/cpu" in torch_run.replace('"', "")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    torch_req = next(d for d in deps if d.startswith("torch"))
    assert pin in SpecifierSet(torch_req[len("torch"):])
    ndflow_run = next(r for r in runs if "pip install --no-cache-dir /opt/ndflow" in r)
    assert runs.index(torch_run) < runs.index(ndflow_run)


def test_copies_what_the_install_needs():
    copied = [rest.split()[:-1] for kw, rest in DOCKER if kw == "COPY"]
    sources = [s for group in copied for s in group]
    assert {"pyproject.toml", "README.md", "ndflow"} <= set(sources)
    assert all((ROOT / s).exists() for s in sources)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv"} <= set(ignored) and "ndflow" not in ignored


def test_runs_the_readmes_mnist_command_as_an_unprivileged_user():
    cmd = [json_arg for kw, rest in DOCKER if kw == "CMD"
           for json_arg in re.findall(r'"([^"]*)"', rest)]
    readme_run = next(p for p in readme_install_command() if p.startswith("python -m "))
    assert cmd == shlex.split(readme_run)
    assert importlib.util.find_spec(cmd[2]) is not None
    users = [rest for kw, rest in DOCKER if kw == "USER"]
    assert users and users[-1] == "1000"


def test_addpackages_extends_the_image():
    items = instructions(ADDPACKAGES)
    assert ("FROM", "${NDFLOW_IMAGE}") in items
    assert arg_defaults(items)["NDFLOW_IMAGE"] == "ndflow:latest"
    assert [rest for kw, rest in items if kw == "USER"][-1] == "1000"
    copied = [rest.split()[0] for kw, rest in items if kw == "COPY"]
    assert all((ROOT / s).exists() for s in copied)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint is not installed")
def test_hadolint_is_clean():
    result = subprocess.run(["hadolint", "--no-color", str(DOCKERFILE), str(ADDPACKAGES)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
