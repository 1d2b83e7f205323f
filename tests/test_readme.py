"""README's Python examples run as written, each as a script in a fresh interpreter, and print
what the README shows under them (the ```text block that follows each ```python block)."""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
EXAMPLES = re.findall(r"```python\n(.*?)```\n```text\n(.*?)```", TEXT, re.S)
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def test_every_example_shows_its_output():
    assert len(EXAMPLES) >= 4
    assert len(EXAMPLES) == TEXT.count("```python\n")


def _words_and_numbers(text: str) -> tuple[list[str], np.ndarray]:
    words = " ".join(NUMBER.sub("#", text).split())
    return words, np.array([float(n) for n in NUMBER.findall(text)])


def _run_example(source: str, directory: Path) -> subprocess.CompletedProcess:
    script = directory / "example.py"  # a file, as users run them: AutoGraph reads the source
    script.write_text(source, encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=directory)


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    """Every example started at once, as many at a time as there are cores: each is mostly a
    fresh interpreter importing ndflow, one core's work."""
    dirs = [tmp_path_factory.mktemp(f"example{i}") for i in range(len(EXAMPLES))]
    pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
    futures = [pool.submit(_run_example, source, d) for (source, _), d in zip(EXAMPLES, dirs)]
    yield futures
    pool.shutdown(wait=True)


@pytest.mark.slow  # 12 fresh interpreters (~30 s on 2 cores): CI's slow pass runs them
@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_prints_what_the_readme_shows(index, example_runs):
    _, shown = EXAMPLES[index]
    out = example_runs[index].result()
    assert out.returncode == 0, out.stderr[-2000:]
    got_words, got_numbers = _words_and_numbers(out.stdout)
    want_words, want_numbers = _words_and_numbers(shown)
    assert got_words == want_words, out.stdout
    # Float digits may differ in the last places between BLAS builds; nothing more.
    np.testing.assert_allclose(got_numbers, want_numbers, rtol=1e-5, atol=1e-6,
                               err_msg=out.stdout)
