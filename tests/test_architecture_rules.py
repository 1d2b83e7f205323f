"""Rules of docs/ARCHITECTURE.md that the source must keep, checked on its syntax trees (as
tests/test_layering.py checks the layers):

- the environment is read only by `ndflow/core/config.py`, where every variable is declared
  with its kind, default and meaning; the modules that speak a process protocol through the
  environment (the launcher and cluster resolvers, cuBLAS' workspace, TF's async scope,
  tf.test's Bazel variables) are named here with the reason;
- no test hooks in production code: nothing in ndflow kills its own process (a test that
  needs a writer killed mid-save arms the kill itself, tests/checkpoint/test_atomic_saves.py);
- code imports the `OpDef` objects: the op registry is looked up by name (`REGISTRY[name]`,
  `REGISTRY.get(name)`, `op_def.lookup(name)`) only where the name comes from data (GraphDef
  import, TensorFlow's by-name APIs), in the modules `BY_NAME` names with the reason, and never
  with a literal op name;
- TensorFlow's auto-mixed-precision lists (`ndflow/passes/amp/lists.py`, literal op type
  names) name registered ops, or TensorFlow ops ndflow lacks, listed in `AMP_UNREGISTERED`
  with the reason (a typo or a renamed op would silently drop out of the rewrite);
- raw pointers: a tensor or array becomes an address for numba code only through
  `ndflow/kernels/raw_memory.py` (checked: CPU, contiguous, dtype, bounds), and `numba.carray`
  / `address_as_pointer` views of raw addresses appear only in the OpenMP callbacks
  `RAW_VIEWS` names (offsets into arrays whose spans raw_memory checked on the host);
- the page itself stays a true map: its layer table is tests/test_layering.py's `LAYERS`, and
  every repository path (and `path::test_name`) it cites exists.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import sys
from pathlib import Path

from ndflow.core.errors import NotFoundError
from ndflow.ops.op_def import lookup
from ndflow.passes.amp import lists as amp_lists
from tests.test_layering import LAYERS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ndflow"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"

# module (relative to ndflow/) -> why it may touch os.environ itself
ENVIRONMENT_PROTOCOL = {
    "core/config.py": "the one reader of ndflow's declared variables",
    "runtime/async_execution.py": "tf.experimental.async_scope sets TF's streaming variable "
                                  "for the scope, as TensorFlow does",
    "runtime/execution_config.py": "op determinism sets cuBLAS' CUBLAS_WORKSPACE_CONFIG, which "
                                   "cuBLAS itself reads",
    "distribute/collective.py": "gloo's GLOO_SOCKET_IFNAME for loopback workers",
    "distribute/preemption.py": "GCE's metadata-server variables",
    "distribute/run.py": "the launcher hands its workers their environment",
    "distribute/cluster_resolver/resolvers.py": "TF_CONFIG and the resolvers' variables",
    "distribute/cluster_resolver/slurm.py": "SLURM's job variables, CUDA_VISIBLE_DEVICES",
    "distribute/cluster_resolver/tpu_resolver.py": "the TPU and GCE metadata variables",
    "testing/stubs.py": "tf.test's Bazel variables (TEST_SRCDIR, TEST_WORKSPACE)",
}


@functools.cache
def _sources() -> tuple:
    return tuple((path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8"))
                 for path in sorted(PACKAGE.rglob("*.py")))


@functools.cache
def _tree(name: str, text: str):
    return ast.parse(text)


def _modules(*needles: str):
    """(path relative to ndflow/, syntax tree) of every module whose source mentions one of
    `needles` (a rule's names: parsing all 1,200 modules for each rule took most of this
    file's time), each parsed once for the file."""
    for name, text in _sources():
        if any(n in text for n in needles):
            yield name, _tree(name, text)


def _is_os_attr(node, names) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in names
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def test_the_environment_is_read_only_through_core_config():
    found = []
    for name, tree in _modules("environ", "getenv", "putenv"):
        if name in ENVIRONMENT_PROTOCOL:
            continue
        for node in ast.walk(tree):
            if _is_os_attr(node, ("environ", "getenv", "putenv", "unsetenv", "environb")):
                found.append(f"ndflow/{name}:{node.lineno}: os.{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                    a.name in ("environ", "getenv") for a in node.names):
                found.append(f"ndflow/{name}:{node.lineno}: from os import ...")
    assert not found, ("read the environment through ndflow/core/config.py (declare the "
                       "variable there) or name the protocol in ENVIRONMENT_PROTOCOL:\n"
                       + "\n".join(found))


def test_every_protocol_module_still_needs_its_exception():
    modules = dict(_modules("environ", "getenv"))
    for name in ENVIRONMENT_PROTOCOL:
        assert name in modules, f"ndflow/{name} is gone: drop it from ENVIRONMENT_PROTOCOL"
        assert any(_is_os_attr(node, ("environ", "getenv"))
                   for node in ast.walk(modules[name])), f"ndflow/{name} no longer needs it"


def test_no_module_kills_its_own_process():
    found = []
    for name, tree in _modules("kill"):
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and _is_os_attr(node.func, ("kill",)) and node.args
                    and isinstance(node.args[0], ast.Call)
                    and _is_os_attr(node.args[0].func, ("getpid",))):
                found.append(f"ndflow/{name}:{node.lineno}")
    assert not found, f"a test hook in production code: {found}"


# module (relative to ndflow/) -> why it looks up the op registry by a name it is given
BY_NAME = {
    "ops/op_def.py": "the registry itself: `lookup` and `tagged(...)`'s membership",
    "ops/graph_def_nodes.py": "GraphDef import: a NodeDef names its op",
    "saved_model/custom_gradients.py": "a SavedModel's FunctionDef nodes name their ops",
    "kernels/raw_ops.py": "tf.raw_ops.<OpName>, TensorFlow's API by op name",
    "ops/gradient_registry.py": "tf.RegisterGradient(\"OpName\") / tf.no_gradient, "
                                "TensorFlow's API by op name",
    "ops/register_op_text.py": "a custom op's C++ shape function (ScalarShape, ...) serves any "
                               "op: it finds its op by the InferenceContext's op type",
    "passes/amp/graph.py": "TF's FusedBatchNorm[Grad] -> ...V2 retyping: ndflow registers "
                           "neither, a custom op library may, so the V2 is found by name",
}
_OP_DEF = "ndflow.ops.op_def"


def _registry_lookups(name: str, tree) -> list[tuple[int, bool]]:
    """(line, whether the name is a literal) of each by-name lookup of the op registry:
    `REGISTRY[...]`, `REGISTRY.get(...)` (any alias, or `<op_def module>.REGISTRY`) and
    calls of `ndflow.ops.op_def.lookup`."""
    registry, lookup, module = set(), set(), set()
    if name == "ops/op_def.py":
        registry, lookup = {"REGISTRY"}, {"lookup"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == _OP_DEF:
            for a in node.names:
                {"REGISTRY": registry, "lookup": lookup}.get(a.name, set()).add(
                    a.asname or a.name)
        elif isinstance(node, ast.ImportFrom) and node.module == "ndflow.ops":
            module.update(a.asname or a.name for a in node.names if a.name == "op_def")
        elif isinstance(node, ast.Import):
            module.update(a.asname for a in node.names if a.name == _OP_DEF and a.asname)

    def is_ref(expr, names: set, attr: str) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in names
        return (isinstance(expr, ast.Attribute) and expr.attr == attr
                and (isinstance(expr.value, ast.Name) and expr.value.id in module
                     or ast.unparse(expr.value) == _OP_DEF))

    found = []
    for node in ast.walk(tree):
        key = None
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                and is_ref(node.value, registry, "REGISTRY")):
            key = node.slice
        elif isinstance(node, ast.Call) and node.args and (
                is_ref(node.func, lookup, "lookup")
                or isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "pop", "setdefault", "__getitem__")
                and is_ref(node.func.value, registry, "REGISTRY")):
            key = node.args[0]
        if key is not None:
            found.append((node.lineno, isinstance(key, ast.Constant)
                          and isinstance(key.value, str)))
    return found


def test_ops_are_used_as_objects_not_looked_up_by_name():
    literal, by_name = [], []
    for name, tree in _modules("REGISTRY", "lookup"):
        for line, is_literal in _registry_lookups(name, tree):
            if is_literal:
                literal.append(f"ndflow/{name}:{line}")
            elif name not in BY_NAME:
                by_name.append(f"ndflow/{name}:{line}")
    assert not literal, ("import the op's OpDef (`from ndflow.ops.math import Square`) "
                         "instead of looking it up by a literal name:\n" + "\n".join(literal))
    assert not by_name, ("the op registry is looked up by name only where the name comes "
                         "from data; use the OpDef, or name the module in BY_NAME with the "
                         "reason:\n" + "\n".join(by_name))


def test_every_by_name_module_still_needs_its_exception():
    modules = dict(_modules("REGISTRY", "lookup"))
    for name in BY_NAME:
        assert name in modules, f"ndflow/{name} is gone: drop it from BY_NAME"
        assert _registry_lookups(name, modules[name]), f"ndflow/{name} no longer needs it"


# The op types in TensorFlow's AMP lists that ndflow does not register: reason -> names. The
# lists keep them (as TensorFlow's) so that a graph holding such an op from a custom op
# library is painted as TensorFlow paints it.
AMP_UNREGISTERED = {
    "an older version of an op ndflow has (BatchMatMulV2, ConcatV2, ..., TF keeps both)": {
        "BatchMatMul", "BatchToSpace", "BiasAddV1", "Concat", "Conv3DBackpropFilter",
        "Conv3DBackpropInput", "FusedBatchNormGradV2", "FusedBatchNormV2", "Gather", "Inv",
        "MaxPoolGradGradV2", "MaxPoolGradV2", "MaxPoolV2", "Reverse", "SpaceToBatch", "TopK",
    },
    "TF1 control flow: ndflow's graphs hold the functional While/If": {
        "Enter", "Exit", "Merge", "NextIteration", "Switch",
    },
    "the fused RNN cells (tf.raw_ops only; Keras' RNN layers build them from ops)": {
        "BlockLSTM", "BlockLSTMGrad", "BlockLSTMGradV2", "BlockLSTMV2", "CudnnRNN",
        "CudnnRNNBackprop", "CudnnRNNBackpropV2", "CudnnRNNV2", "GRUBlockCell",
        "GRUBlockCellGrad", "LSTMBlockCell", "LSTMBlockCellGrad",
    },
    "ops no tf.* function of ndflow's builds (tf.clip_by_value is Minimum then Maximum, as "
    "TF's Python builds it; FusedPadConv2D is a grappler fusion ndflow's remapper lacks)": {
        "ClipByValue", "FusedPadConv2D", "PreventGradient", "Snapshot",
        "TensorListConcatLists", "TensorListPushBackBatch",
    },
}
# ... and those that are not even TensorFlow's public ops (not in tf.raw_ops: contrib and
# Google-internal kernels TensorFlow's CUDA allow list names)
AMP_NOT_TENSORFLOWS = {
    "FastUnsortedSegmentMax", "FusedConv2DBiasActivation", "FusedSparseConvGpuV2", "Mha",
    "MhaV2", "Pmlp", "Tmlp", "TmlpV2", "TmlpV3",
}
TF_OPS = ROOT / "tests" / "fixtures" / "tf_ops" / "tf_2_21_ops.json"


def _amp_list_names() -> set[str]:
    names = set()
    for mode in amp_lists.Mode:
        for cuda, cudnn in ((0, 0), (9010, 7602), (12000, 9000)):
            base = amp_lists.base_lists(mode, cuda, cudnn)
            names |= base.allow | base.infer | base.deny | base.clear
    return names


def test_the_amp_lists_name_registered_ops():
    def lookup_or_none(name: str):
        try:
            return lookup(name)
        except NotFoundError:
            return None

    names = _amp_list_names()
    lacking = set().union(*AMP_UNREGISTERED.values())
    found = {n: lookup_or_none(n) for n in names | lacking | AMP_NOT_TENSORFLOWS}
    # Registered by ndflow: its OpDef a module attribute of ndflow's (a test's stand-in
    # registered into the same registry, as tests/passes/amp_helpers.py's, is not).
    ndflow_defs = {id(v) for m_name, m in list(sys.modules.items())
                   if m_name.startswith("ndflow.") and m is not None
                   for v in list(vars(m).values())}

    def registered(name: str) -> bool:
        return found[name] is not None and id(found[name]) in ndflow_defs

    unknown = sorted(n for n in names - lacking - AMP_NOT_TENSORFLOWS if not registered(n))
    assert not unknown, f"the AMP lists name ops ndflow does not register: {unknown}"
    stale = sorted(n for n in (lacking | AMP_NOT_TENSORFLOWS) if registered(n) or n not in names)
    assert not stale, f"registered now, or gone from the lists: drop them here: {stale}"
    tensorflows = json.loads(TF_OPS.read_text(encoding="utf-8"))["ops"]
    assert not sorted(lacking - set(tensorflows)), "not TensorFlow ops (typos?)"
    assert not sorted(AMP_NOT_TENSORFLOWS & set(tensorflows)), "TensorFlow ops: say why"


_CALLBACK = ("an OpenMP chunk callback (nopython, run as a C function on ATen's team): views "
             "of its chunk at offsets it computes into the arrays omp_pool.run_chunks handed "
             "it, each span checked by raw_memory on the host; a check in the callback could "
             "not raise")
# module (relative to ndflow/) -> why it views raw addresses with carray / address_as_pointer
RAW_VIEWS = {
    "kernels/omp_pool.py": "defines the address_as_pointer intrinsic",
    "jit/codegen/numba_intrinsics.py": "hands the intrinsics to the JIT's generated code",
    "jit/codegen/numba_backend.py": "the JIT's generated chunk callbacks: " + _CALLBACK,
    **{f"kernels/{name}.py": _CALLBACK for name in (
        "adam_numba", "adaptive_numba", "attention_numba", "batch_norm_numba", "bmm_numba",
        "conv_fft_numba", "conv_narrow_numba", "conv_pool_numba",
        "depthwise_numba",
        "dropout_select",
        "gemm_epilogue",
        "image_color_numba", "image_transform_numba", "math_special_cephes", "max_pool_numba",
        "max_pool3d_grad_numba",
        "momentum_numba",
        "philox_numba", "pool_gemm", "resize_bilinear_numba", "rmsprop_numba",
        "rnn_numba_rows",
        "small_gemm_numba", "sum_squares_numba",
        "tanh_numba", "transpose_numba", "xent_numba")},
}
_RAW_VIEW_NAMES = ("carray", "farray", "address_as_pointer")


def _raw_views(tree) -> list[int]:
    """Lines naming carray / address_as_pointer, in code or in the source of generated code
    (a string holding `carray(`; docstrings aside)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr)}
    lines = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id in _RAW_VIEW_NAMES
                or isinstance(node, ast.Attribute) and node.attr in _RAW_VIEW_NAMES
                or isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings
                and any(f"{n}(" in node.value for n in _RAW_VIEW_NAMES)):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(
                a.name in _RAW_VIEW_NAMES for a in node.names):
            lines.append(node.lineno)
    return lines


def test_raw_memory_is_viewed_only_by_the_named_callbacks():
    found = [f"ndflow/{name}:{line}" for name, tree in _modules(*_RAW_VIEW_NAMES)
             if name not in RAW_VIEWS
             for line in _raw_views(tree)]
    assert not found, ("a raw address viewed as an array outside the callbacks RAW_VIEWS "
                       "names: take the address with ndflow/kernels/raw_memory.py and hand "
                       "the array to numba, or name the module with the reason:\n"
                       + "\n".join(found))


def test_every_raw_view_module_still_needs_its_exception():
    modules = dict(_modules(*_RAW_VIEW_NAMES))
    for name in RAW_VIEWS:
        assert name in modules, f"ndflow/{name} is gone: drop it from RAW_VIEWS"
        assert _raw_views(modules[name]), f"ndflow/{name} no longer needs it"


def _is_address_of(node) -> bool:
    """`x.data_ptr()` or `x.ctypes.data`: an address taken from a tensor or an array."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "data_ptr" and not node.args
            or isinstance(node, ast.Attribute) and node.attr == "data"
            and isinstance(node.value, ast.Attribute) and node.value.attr == "ctypes")


# module (relative to ndflow/) -> why it reads an address itself, not through raw_memory
ADDRESSES = {
    "kernels/raw_memory.py": "the checked helper",
    "kernels/omp_pool.py": "the address of run_chunks' own int64 block, made there",
    "kernels/tanh_numba.py": "compares two tensors' addresses (in place or not)",
    "kernels/string_hash_numba.py": "string bytes in a buffer it packs, and the PyObject "
                                    "pointers of an object array (CPython's layout, checked "
                                    "there)",
    "runtime/memory_plan.py": "storages' addresses as identities (which values share memory)",
    "runtime/inplace.py": "storages' addresses as identities (whether two tensors alias)",
}


def test_addresses_are_taken_through_raw_memory():
    found = [f"ndflow/{name}:{node.lineno}" for name, tree in _modules("data_ptr", "ctypes")
             if name not in ADDRESSES for node in ast.walk(tree) if _is_address_of(node)]
    assert not found, ("take a tensor's or array's address with ndflow/kernels/raw_memory.py "
                       "(it checks device, contiguity, dtype and bounds), or name the module "
                       "in ADDRESSES with the reason:\n" + "\n".join(found))
    modules = dict(_modules("data_ptr", "ctypes"))
    for name in ADDRESSES:
        assert any(_is_address_of(node) for node in ast.walk(modules[name])), \
            f"ndflow/{name} no longer takes addresses: drop it from ADDRESSES"


def _architecture_text() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def test_the_layer_table_is_the_layering_tests():
    text = _architecture_text().split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    table = {}
    for row in re.findall(r"^\| (\d+) \| ([^|]*) \|", text, re.M):
        for package in re.findall(r"`([^`]+)`", row[1]):
            assert package not in table, f"{package} is in two rows"
            table[package] = int(row[0])
    assert table == LAYERS


# a backticked repository path, optionally with `::test_name`; `<family>`-style placeholders
# and `{a,b}` alternatives are not paths
_CITED = re.compile(r"`((?:ndflow|tests|docs|benchmarks|examples)/[^`<>{}*\s]*)`")


def test_every_path_the_architecture_map_cites_exists():
    text = _architecture_text()
    cited = _CITED.findall(text)
    assert len(cited) > 50
    missing = []
    for ref in sorted(set(cited)):
        path, _, test = ref.partition("::")
        if not (ROOT / path).exists():
            missing.append(ref)
        elif test and not re.search(rf"^def {re.escape(test)}\(",
                                    (ROOT / path).read_text(encoding="utf-8"), re.M):
            missing.append(ref)
    assert not missing, f"docs/ARCHITECTURE.md cites what does not exist: {missing}"
    assert "DESIGN.md" not in text
    assert len(text.splitlines()) <= 300, "docs/ARCHITECTURE.md is a map: at most 300 lines"
