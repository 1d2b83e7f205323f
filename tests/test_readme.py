"""The Python examples of README.md and of the documentation site (docs/*.md) run as written,
each as a script in a fresh interpreter, and print what the page shows under them (the ```text
block that follows each ```python block). Also: the site's nav (mkdocs.yml) lists every page,
and the README's links into docs/ resolve."""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("**/*.md"))]
TEXTS = {page: page.read_text(encoding="utf-8") for page in PAGES}
EXAMPLE = re.compile(r"```python\n(.*?)```\n```text\n(.*?)```", re.S)
# Developer notes whose ```python blocks are fragments (an op's declaration, a kernel), not
# programs: their blocks are not required to show output. Every other page's are.
FRAGMENT_PAGES = {"docs/ARCHITECTURE.md", "docs/CONTRIBUTING_NOTES.md", "docs/custom_ops.md"}


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _examples():
    """(page, line, source, shown) for every ```python block followed by a ```text block."""
    out = []
    for page, text in TEXTS.items():
        for m in EXAMPLE.finditer(text):
            out.append((_rel(page), text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)))
    return out


EXAMPLES = _examples()
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@pytest.mark.parametrize("page", [p for p in PAGES if _rel(p) not in FRAGMENT_PAGES], ids=_rel)
def test_every_example_shows_its_output(page):
    text = TEXTS[page]
    assert len(EXAMPLE.findall(text)) == text.count("```python\n"), \
        f"{_rel(page)}: a ```python block without the ```text block of what it prints"


def test_the_readme_and_the_site_keep_their_examples():
    per_page = {}
    for rel, *_ in EXAMPLES:
        per_page[rel] = per_page.get(rel, 0) + 1
    assert per_page.get("README.md", 0) >= 3
    assert sum(n for rel, n in per_page.items() if rel.startswith("docs/")) >= 30


def test_the_site_nav_lists_every_page_and_only_pages():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config.split("\nnav:\n", 1)[1]
    listed = re.findall(r":\s*(\S+\.md)\s*$", nav, re.M)
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("**/*.md")}
    assert len(listed) == len(set(listed))
    assert set(listed) == pages


def test_readme_links_into_docs_resolve():
    links = re.findall(r"\]\((docs/[^)#\s]*)", TEXTS[README])
    assert links
    for link in links:
        assert (ROOT / link).exists(), link


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
    futures = [pool.submit(_run_example, source, d)
               for (_, _, source, _), d in zip(EXAMPLES, dirs)]
    yield futures
    pool.shutdown(wait=True)


@pytest.mark.slow  # ~35 fresh interpreters (a few minutes on 2 cores): CI's slow pass runs them
@pytest.mark.parametrize("index", range(len(EXAMPLES)),
                         ids=[f"{rel}:{line}" for rel, line, _, _ in EXAMPLES])
def test_example_prints_what_its_page_shows(index, example_runs):
    rel, line, _, shown = EXAMPLES[index]
    out = example_runs[index].result()
    assert out.returncode == 0, f"{rel}:{line}\n{out.stderr[-2000:]}"
    got_words, got_numbers = _words_and_numbers(out.stdout)
    want_words, want_numbers = _words_and_numbers(shown)
    assert got_words == want_words, f"{rel}:{line}\n{out.stdout}"
    # Float digits may differ in the last places between BLAS builds; nothing more.
    np.testing.assert_allclose(got_numbers, want_numbers, rtol=1e-5, atol=1e-6,
                               err_msg=f"{rel}:{line}\n{out.stdout}")
