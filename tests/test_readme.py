"""README's Python examples run as written, each as a script in a fresh interpreter, and print
what the README shows under them (the ```text block that follows each ```python block)."""

import re
import subprocess
import sys
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


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_prints_what_the_readme_shows(index, tmp_path):
    source, shown = EXAMPLES[index]
    script = tmp_path / "example.py"  # a file, as users run them: AutoGraph reads the source
    script.write_text(source, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got_words, got_numbers = _words_and_numbers(out.stdout)
    want_words, want_numbers = _words_and_numbers(shown)
    assert got_words == want_words, out.stdout
    # Float digits may differ in the last places between BLAS builds; nothing more.
    np.testing.assert_allclose(got_numbers, want_numbers, rtol=1e-5, atol=1e-6,
                               err_msg=out.stdout)
