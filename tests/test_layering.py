"""docs/ARCHITECTURE.md's layering rule, checked on the source with `ast`.

A module may import ndflow modules of its own layer or lower ones, never higher ones; it may not
import ndflow modules inside a function (the usual way of dodging a cycle), nor use star imports.
`from __future__` and third-party imports are not layered.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "ndflow"

# docs/ARCHITECTURE.md's layer table (tests/test_architecture_rules.py checks the page).
# Top-level modules (ndflow/__init__.py, ndflow/custom_op.py) are layer 7, and so are the
# developer tools (ndflow/tools: `python -m ndflow.tools.gen_api_index` imports every declaring
# module); the public namespaces (tf.nn, tf.compat.v1, ...) are served from the index of the
# tf_export declarations by ndflow/core/lazy_api.py, the one module that imports ndflow modules
# of any layer by computed names (importlib.import_module of a module name from the index: a
# call this checker cannot place in a layer, so it does not check it).
LAYERS: dict[str, int] = {
    "core": 0,
    "ops": 1,
    "kernels": 2, "autodiff": 2,
    "passes": 3, "jit": 3,
    "runtime": 4, "autograph": 4,
    "train": 5, "data": 5, "summary": 5, "profiler": 5, "distribute": 5, "checkpoint": 5,
    "saved_model": 5, "inference": 5, "onnx": 5, "testing": 5,
    "feature_column": 5,
    "keras": 6,
    "models": 7,
    "tools": 7,
}
TOP_LEVEL = 7


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    statement: str
    reason: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.statement}  -- {self.reason}"


def module_name(path: Path, package_dir: Path = PACKAGE_DIR) -> str:
    rel = path.relative_to(package_dir.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def layer_of(module: str, package_dir: Path = PACKAGE_DIR) -> int | None:
    """The layer of ndflow module `module`; None for a subpackage missing from the table."""
    parts = module.split(".")
    if len(parts) == 1:
        return TOP_LEVEL  # ndflow/__init__.py
    head = parts[1]
    if (package_dir / head).is_dir():
        return LAYERS.get(head)
    return TOP_LEVEL  # a top-level module such as ndflow/custom_op.py, or a name from ndflow


def resolve_relative(module: str, is_pkg: bool, level: int, target: str | None) -> str:
    """The absolute name `from <level dots><target> import ...` refers to inside `module`."""
    base = module.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _is_ndflow(name: str) -> bool:
    return name == "ndflow" or name.startswith("ndflow.")


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool) -> list[str]:
    """ndflow modules an import statement reaches (empty for third-party imports)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if _is_ndflow(alias.name)]
    if node.level:
        source = resolve_relative(module, is_pkg, node.level, node.module)
    else:
        source = node.module or ""
    if not _is_ndflow(source):
        return []
    # `from ndflow.x import y`: y may be a submodule (ndflow.x.y) or a name in ndflow.x; the
    # layer is decided by the first component below ndflow, so either reading gives the same
    # layer except for `from ndflow import sub`, where `sub` names the subpackage.
    if source == "ndflow":
        return [f"ndflow.{alias.name}" for alias in node.names if alias.name != "*"] or [source]
    return [source]


def _import_text(node: ast.Import | ast.ImportFrom) -> str:
    return ast.unparse(node).splitlines()[0]


class _Checker(ast.NodeVisitor):
    def __init__(self, module: str, is_pkg: bool, package_dir: Path):
        self.module = module
        self.is_pkg = is_pkg
        self.package_dir = package_dir
        self.layer = layer_of(module, package_dir)
        self.function_depth = 0
        self.violations: list[Violation] = []

    def _report(self, node: ast.AST, reason: str) -> None:
        text = _import_text(node) if isinstance(node, ast.Import | ast.ImportFrom) else \
            ast.unparse(node)
        self.violations.append(Violation(self.module, node.lineno, text, reason))

    def _visit_function(self, node: ast.AST) -> None:
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function
    visit_Lambda = _visit_function

    def _check_targets(self, node: ast.AST, targets: list[str]) -> None:
        for target in targets:
            target_layer = layer_of(target, self.package_dir)
            if target_layer is None:
                self._report(node, f"{target} is in no layer of docs/ARCHITECTURE.md's table")
            elif self.layer is not None and target_layer > self.layer:
                self._report(node, f"layer {self.layer} imports {target} (layer {target_layer})")
        if targets and self.function_depth:
            self._report(node, "ndflow import inside a function (fix the layering instead)")

    def visit_Import(self, node: ast.Import) -> None:
        self._check_targets(node, _targets(node, self.module, self.is_pkg))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "__future__" and not node.level:
            return
        if any(alias.name == "*" for alias in node.names):
            self._report(node, "star import")
        self._check_targets(node, _targets(node, self.module, self.is_pkg))

    def visit_Call(self, node: ast.Call) -> None:
        # importlib.import_module("ndflow.x") / __import__("ndflow.x") are imports too.
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in ("import_module", "__import__") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                    and _is_ndflow(arg.value):
                self._check_targets(node, [arg.value])
        self.generic_visit(node)


_STATEMENT_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def _visit_statements(checker: _Checker, body: list) -> None:
    """The checker's verdicts on a module without import_module/__import__ calls: imports are
    statements, so only statement blocks are walked (a full visit of every expression costs
    ~4x more; the answer is the same)."""
    for node in body:
        if isinstance(node, ast.Import):
            checker.visit_Import(node)
        elif isinstance(node, ast.ImportFrom):
            checker.visit_ImportFrom(node)
        is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        checker.function_depth += is_function
        for field in node._fields:   # in ast's order, as NodeVisitor reports them
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], _STATEMENT_BLOCKS):
                _visit_statements(checker, block)
        checker.function_depth -= is_function


def check_source(source: str, module: str, is_pkg: bool = False,
                 package_dir: Path = PACKAGE_DIR) -> list[Violation]:
    checker = _Checker(module, is_pkg, package_dir)
    if checker.layer is None:
        return [Violation(module, 1, "<module>",
                          f"package {module.split('.')[1]} is in no layer of "
                          "docs/ARCHITECTURE.md's table")]
    tree = ast.parse(source, filename=module)
    if "import_module" in source or "__import__" in source:
        checker.visit(tree)   # calls may sit in any expression
    else:
        _visit_statements(checker, tree.body)
    return checker.violations


def check_tree(package_dir: Path = PACKAGE_DIR) -> list[Violation]:
    violations: list[Violation] = []
    for path in sorted(package_dir.rglob("*.py")):
        module = module_name(path, package_dir)
        violations += check_source(path.read_text(encoding="utf-8"), module, is_package(path),
                                   package_dir)
    return violations


def test_package_respects_layers():
    assert any(PACKAGE_DIR.rglob("*.py")), f"no modules found under {PACKAGE_DIR}"
    violations = check_tree()
    assert not violations, "layering violations (see docs/ARCHITECTURE.md, Layers):\n" + "\n".join(
        str(v) for v in violations)


def test_every_subpackage_has_a_layer():
    missing = [p.name for p in PACKAGE_DIR.iterdir()
               if p.is_dir() and (p / "__init__.py").exists() and p.name not in LAYERS]
    assert not missing, f"subpackages missing from docs/ARCHITECTURE.md's layer table: {missing}"


# --- the checker itself ---------------------------------------------------------------------

@pytest.fixture()
def fake_tree(tmp_path):
    root = tmp_path / "ndflow"
    for sub in LAYERS:
        (root / sub).mkdir(parents=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "nn.py").write_text("")
    return root


def _check(source, module, fake_tree, is_pkg=False):
    return check_source(source, module, is_pkg, fake_tree)


@pytest.mark.parametrize("source", [
    "from ndflow.runtime import session",
    "import ndflow.runtime.session",
    "import ndflow",
    "from ndflow import nn",
    "from ndflow import keras",
    "from ..runtime import session",
    "from .. import keras",
    "import importlib\nimportlib.import_module('ndflow.train.optimizer')",
])
def test_upward_imports_are_caught(source, fake_tree):
    violations = _check(source, "ndflow.ops.math", fake_tree)
    assert violations and all("imports" in v.reason for v in violations), violations


@pytest.mark.parametrize("source", [
    "from __future__ import annotations",
    "import numpy as np\nimport torch",
    "from ndflow.core import dtypes",
    "from ndflow.ops import op_def",
    "from . import array",
    "from .array import constant",
    "from ..core.shapes import TensorShape",
    "import ndflow.core.errors as errors",
])
def test_same_and_lower_imports_pass(source, fake_tree):
    assert _check(source, "ndflow.ops.math", fake_tree) == []


def test_top_level_modules_may_import_everything(fake_tree):
    source = "from ndflow import keras, models\nfrom ndflow.runtime import session\n"
    assert _check(source, "ndflow.nn", fake_tree) == []
    assert _check(source, "ndflow", fake_tree, is_pkg=True) == []


def test_relative_import_in_package_init(fake_tree):
    # ndflow/ops/__init__.py: `from . import math` is ndflow.ops.math (same layer).
    assert _check("from . import math", "ndflow.ops", fake_tree, is_pkg=True) == []
    assert _check("from ..keras import layers", "ndflow.ops", fake_tree, is_pkg=True)


def test_function_level_import_is_caught(fake_tree):
    source = "def f():\n    from ndflow.core import dtypes\n    return dtypes\n"
    (v,) = _check(source, "ndflow.ops.math", fake_tree)
    assert "inside a function" in v.reason and v.line == 2
    # Third-party imports inside functions (optional dependencies) are allowed.
    assert _check("def f():\n    import numba\n", "ndflow.jit.codegen", fake_tree) == []


def test_star_import_is_caught(fake_tree):
    (v,) = _check("from numpy import *", "ndflow.ops.math", fake_tree)
    assert v.reason == "star import"


def test_unknown_subpackage_is_caught(fake_tree):
    (fake_tree / "utils").mkdir()
    (v,) = _check("", "ndflow.utils.misc", fake_tree)
    assert "no layer" in v.reason
    (v,) = _check("from ndflow.utils import misc", "ndflow.ops.math", fake_tree)
    assert "no layer" in v.reason


def test_violation_names_module_and_import(fake_tree):
    (v,) = _check("\n\nfrom ndflow.keras import layers", "ndflow.core.graph", fake_tree)
    text = str(v)
    assert text.startswith("ndflow.core.graph:3:")
    assert "from ndflow.keras import layers" in text
    assert "layer 0 imports ndflow.keras (layer 6)" in text


def test_check_tree_reads_files(fake_tree):
    (fake_tree / "core" / "graph.py").write_text("from ndflow.runtime import plan\n")
    (fake_tree / "ops" / "math.py").write_text("from ndflow.core import graph\n")
    (v,) = check_tree(fake_tree)
    assert v.module == "ndflow.core.graph" and "ndflow.runtime" in v.reason
