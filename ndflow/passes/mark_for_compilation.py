"""Auto-clustering, as TensorFlow's MarkForCompilationPass: picks the ops the JIT compiles and
groups them into clusters, each marked `_XlaCluster=<name>` (plus `_XlaAlreadyClustered`) on a
copy of the graph; ndflow/passes/encapsulate_clusters.py then turns each cluster into one call.

Steps (ndflow/passes/mark_for_compilation.py follows TF's order; see /shared/reference/xla.md):
1. candidates, in creation order: compilable ops (ndflow/jit/fusible_ops.py tables; no string
   or variant values, no stateful RNG, Assert, CheckNumerics, TensorArray...) that should be
   compiled on their device, pass `--tf_xla_ops_to_cluster` and are not vetoed by
   `_XlaCompile=false`;
2. one cluster per candidate on a cycle graph of the whole graph (v1 loop frames as phantom
   nodes), then edge contraction in post order, in three phases (shape consumers; all but
   sink-like NoOps and `iteration++` updates; everything), refusing merges that mix devices,
   XLA scopes, exceed `--tf_xla_max_cluster_size`, cross a device dependency, put a variable
   write before a read, or would create a cycle;
3. clusters are kept when their size (Const and Identity count 0) reaches
   `--tf_xla_min_cluster_size` or an op asked for compilation (`_XlaCompile`, jit_compile).

Levels: the session's (`set_jit`, ConfigProto global_jit_level) unless `--tf_xla_auto_jit`
overrides it. ndflow differs from TF in two documented ways: the CPU is ndflow's main device,
so auto-jit clusters CPU ops whenever it is on (TF needs `--tf_xla_cpu_global_jit`, accepted
and implied here); and `_XlaMustCompile` (tf.function(jit_compile=True)) makes an op a
candidate at any level, since ndflow compiles such functions through clustering too (TF has
XlaLaunch). Must-compile and may-fall-back ops never share a cluster.

Logs: TF_CPP_VMODULE=mark_for_compilation_pass=2 prints the "*** Clustering info" summary, =3
adds op histograms, "Could not contract" reasons and node assignments;
`--tf_xla_clustering_debug` dumps the annotated graph under TF_DUMP_GRAPH_PREFIX.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from dataclasses import dataclass, field

from ndflow.core import dtypes, logging
from ndflow.core.devices import DeviceSpec
from ndflow.core.graph import Graph, Operation
from ndflow.jit import fusible_ops
from ndflow.jit.flags import XlaFlags, xla_flags
from ndflow.kernels import registry
from ndflow.passes.cluster_scoping import pipeline_stage_scopes
from ndflow.passes.clustering_report import (
    CLUSTER_ATTR,
    MUST_COMPILE_ATTR,
    VLOG_MODULE,
    dump_clustering,
    report,
    warn_uncompiled_must_compile,
)
from ndflow.passes.cycle_graph import CycleGraph
from ndflow.passes.pass_context import PassContext, op_name_of

ALREADY_CLUSTERED_ATTR = "_XlaAlreadyClustered"
COMPILE_ATTR = "_XlaCompile"
SCOPE_ATTR = "_XlaScope"

OFF = -1
_JIT_DEVICE_TYPES = ("CPU", "GPU", "XLA_CPU", "XLA_GPU")
_STATEFUL_RNG = frozenset({"RandomUniform", "RandomShuffle", "RandomUniformInt",
                           "RandomStandardNormal", "TruncatedNormal", "Multinomial"})
_FUNCTIONAL_CF = frozenset({"If", "While", "StatelessIf", "StatelessWhile"})
_TENSOR_LIST_OPS = frozenset("""
EmptyTensorList TensorListReserve TensorListElementShape TensorListLength TensorListGetItem
TensorListSetItem TensorListPushBack TensorListPopBack TensorListStack TensorListFromTensor
TensorListGather TensorListScatterIntoExistingList TensorListConcatV2 TensorListSplit
""".split())
_BAD_DTYPES = (dtypes.string, dtypes.variant)
_seq_lock = threading.Lock()
_next_seq = itertools.count()
_deterministic_seq: dict = {}


@dataclass
class Cluster:
    """A set of ops being grown by edge contraction (TF's Cluster)."""

    node: int                       # its node in the cycle graph
    ops: list                       # member ops
    effective_size: int
    devices: set                    # {(type, index)}
    resource_op_device: tuple | None
    resource_ops: set               # ids of member ops that touch variables
    xla_compile_attr_true: bool
    must_compile: bool
    scope: str | None
    has_functional_cf: bool = False
    name: str = field(default="")

    def describe(self) -> str:
        first = min(self.ops, key=lambda o: o._id)
        more = f" + {len(self.ops) - 1} others" if len(self.ops) > 1 else ""
        return f"<{first.name}{more} #{self.node}>"


def effective_jit_level(config, flags: XlaFlags, graph: Graph) -> int:
    """The session's level (-1, 1, 2) with `--tf_xla_auto_jit` applied (TF 1.1)."""
    single_gpu = False
    if flags.tf_xla_auto_jit.startswith("single-gpu"):
        gpus = {_device(op) for op in graph.get_operations()} - {("CPU", 0)}
        single_gpu = len(gpus) == 1 and next(iter(gpus))[0] == "GPU"
    override = flags.auto_jit_override(single_gpu)
    level = config.global_jit_level if override is None else override
    return level if level > 0 else OFF


def _device(op: Operation) -> tuple:
    spec = DeviceSpec.from_string(op.device or "")
    return (spec.device_type or "CPU", spec.device_index or 0)


def _attr_true(op: Operation, name: str) -> bool:
    return op.attrs.get(name) is True


def _resource_kind(op: Operation) -> str | None:
    if op.type in fusible_ops.RESOURCE_READS:
        return "read"
    if op.type in fusible_ops.RESOURCE_WRITES:
        return "write"
    if op.type in fusible_ops.RESOURCE_READ_WRITES:
        return "readwrite"
    if any(t.dtype == dtypes.resource for t in op.inputs):
        return "readwrite"  # unknown variable access: assume the worst (TF: calls)
    return None


def program_order_edges(ops: list) -> list:
    """(previous, next) for consecutive stateful ops in creation order: ndflow runs a graph's
    stateful ops in the order they were created (a variable read after an assign_add sees the
    update even without a control edge), so clustering and encapsulation treat that order as
    edges too."""
    stateful = [op for op in ops if op.is_stateful]
    return list(zip(stateful, stateful[1:]))


def _touches_resource(op: Operation) -> bool:
    return any(t.dtype == dtypes.resource for t in list(op.inputs) + op.outputs)


class _Clusterer:
    def __init__(self, graph: Graph, ctx: PassContext, flags: XlaFlags, level: int):
        self.graph = graph
        self.ctx = ctx
        self.flags = flags
        self.level = level
        self.ops = graph.get_operations()
        self.fuel = flags.tf_xla_clustering_fuel
        self.allowed = fusible_ops.allowed_ops(flags.ops_to_cluster)
        self.excluded = fusible_ops.excluded_ops(flags.tf_xla_cluster_exclude_ops)
        self.clusters: dict[int, Cluster] = {}  # cycle node -> cluster
        self.cycles = CycleGraph(len(self.ops))
        self.frame_nodes: dict[str, int] = {}
        self.unsafe_pairs: set = set()

    # -- 1. candidates ------------------------------------------------------------------------
    def should_compile(self, op: Operation, device_type: str) -> bool:
        if _attr_true(op, COMPILE_ATTR) or _attr_true(op, MUST_COMPILE_ATTR):
            return True
        if device_type.startswith("XLA_"):
            return True  # kAlways
        return self.level != OFF  # GPU and (in ndflow) CPU: kIfEnabledGlobally

    def compilable(self, op: Operation, device_type: str) -> bool:
        must = _attr_true(op, MUST_COMPILE_ATTR)
        if op.type in _STATEFUL_RNG:
            # XLA devices and jit_compile=True compile stateful RNG (TF's kernels draw with
            # XLA's rng); auto-clustering leaves it out. In a cluster it is a library call
            # keeping the op's own Philox state, so it draws what it draws outside.
            return device_type.startswith("XLA_") or must
        if op.type in _FUNCTIONAL_CF or op.type in _TENSOR_LIST_OPS:
            # jit_compile=True compiles a conditional or a loop with its bodies, and the
            # TensorLists a loop's gradient keeps, as XLA does; in ndflow each runs in its
            # cluster as its plain kernel (a loop's bodies as their own plans)
            if not must:
                return False
        elif op.type in fusible_ops.NEVER_CLUSTER:
            return False
        elif op.type not in fusible_ops.COMPILABLE_OPS and not (
                must and registry.has_kernel(op.op_def, device_type.removeprefix("XLA_"))):
            # jit_compile=True: an op with a kernel (ndflow's own fused ops, a fused RNN)
            # runs in its cluster as a library call rather than splitting the cluster
            return False
        if "_scoped_allocator" in op.attrs or "_forward_from" in op.attrs:
            return False
        bad = (dtypes.string,) if must else _BAD_DTYPES   # (TensorLists are variants)
        values = list(op.inputs) + op.outputs
        if any(t.dtype in bad or getattr(t.dtype, "is_ref", False) for t in values):
            return False
        return not _touches_resource(op) or _resource_kind(op) is not None

    def find_candidates(self) -> list:
        fed = {op_name_of(n) for n in self.ctx.fed_tensor_names()}
        targets = {self.ctx.current_name(n) for n in self.ctx.targets}
        candidates = []
        for op in self.ops:
            if self.fuel <= 0:
                break
            if op.attrs.get(COMPILE_ATTR) is False:
                continue
            device_type = _device(op)[0]
            if device_type not in _JIT_DEVICE_TYPES or not self.should_compile(op, device_type):
                continue
            if not self.compilable(op, device_type) or op.type in self.excluded:
                continue
            if self.allowed is not None and op.type not in self.allowed:
                continue
            if op.name in fed or (op.name in targets and not _attr_true(op, MUST_COMPILE_ATTR)):
                continue  # fed values and targets stay visible to the plan (a jit_compile
                #           function's stateful ops, its targets, run in their cluster's call)
            candidates.append(op)
            self.fuel -= 1
        logging.vlog(VLOG_MODULE, 2, f"compilation_candidates_.size() = {len(candidates)}")
        return candidates

    # -- 2. cycle graph and initial clusters -------------------------------------------------
    def build_cycle_graph(self) -> bool:
        """The cycle graph of every op (v1 loop frames as phantom nodes, program order of
        stateful ops as edges); False when it has a cycle (TF then skips the graph)."""
        index = {op: i for i, op in enumerate(self.ops)}
        frame_of: dict = {}
        for op in self.ops:
            if op.type == "Enter":
                frame_of[op] = op.attrs.get("frame_name", "")
            else:
                inner = [frame_of[t.op] for t in op.inputs if t.op in frame_of
                         and t.op.type != "Exit"]
                if inner:
                    frame_of[op] = inner[0]
        for op in self.ops:
            edges = [(t.op, True) for t in op.inputs] + [(c, False) for c in op.control_inputs]
            for src, _ in edges:
                a, b = index[src], index[op]
                if op.type == "Enter" or src.type == "Exit":
                    if op.type == "Enter":
                        b = self._frame_node(frame_of.get(op, ""))
                    if src.type == "Exit":
                        a = self._frame_node(frame_of.get(src, ""))
                elif src.type == "NextIteration":
                    continue
                if not self.cycles.insert_edge(a, b):
                    return False
        return all(self.cycles.insert_edge(index[before], index[after])
                   for before, after in program_order_edges(self.ops))

    def _frame_node(self, frame: str) -> int:
        if frame not in self.frame_nodes:
            self.frame_nodes[frame] = self.cycles.new_node()
        return self.frame_nodes[frame]

    def make_clusters(self, candidates: list, scopes: dict) -> None:
        index = {op: i for i, op in enumerate(self.ops)}
        for op in candidates:
            dev = _device(op)
            if self.level != OFF:
                scope = scopes.get(op)
            else:
                scope = op.attrs.get(SCOPE_ATTR) if isinstance(op.attrs.get(SCOPE_ATTR),
                                                               str) else None
            res = _resource_kind(op) is not None
            i = index[op]
            self.clusters[i] = Cluster(
                node=i, ops=[op], effective_size=0 if op.type in ("Const", "Identity") else 1,
                devices={dev}, resource_op_device=dev if _touches_resource(op) else None,
                resource_ops={op._id} if res else set(),
                xla_compile_attr_true=_attr_true(op, COMPILE_ATTR)
                or _attr_true(op, MUST_COMPILE_ATTR),
                must_compile=_attr_true(op, MUST_COMPILE_ATTR), scope=scope or None,
                has_functional_cf=op.type in _FUNCTIONAL_CF)
        self.multi_device = len({d for c in self.clusters.values() for d in c.devices}) > 1
        self._unsafe_resource_pairs(candidates)

    def _unsafe_resource_pairs(self, candidates: list) -> None:
        """(P, Q) with a path P -> Q where P writes a variable and Q reads one (XLA reads all
        variables at cluster entry and writes them at exit)."""
        res_ops = {op for op in candidates if _resource_kind(op) is not None}
        if len(res_ops) < 2:
            return
        reach: dict = {}
        for op in self.ops:
            before: set = set()
            for src in [t.op for t in op.inputs] + op.control_inputs:
                before |= reach.get(src, set())
                if src in res_ops:
                    before.add(src)
            reach[op] = before
            if op in res_ops:
                for p in before:
                    if _resource_kind(p) != "read" and _resource_kind(op) != "write":
                        self.unsafe_pairs.add((p._id, op._id))

    # -- 3. contraction ---------------------------------------------------------------------
    @staticmethod
    def pick_device(devs: set) -> tuple | None:
        gpus = {d for d in devs if d[0] == "GPU"}
        cpus = {d for d in devs if d[0] == "CPU"}
        other = devs - gpus - cpus
        if len(gpus) > 1 or len(cpus) > 1 or len(other) > 1 or (other and (gpus or cpus)):
            return None
        return next(iter(gpus or other or cpus))

    def compatible(self, a: Cluster, b: Cluster) -> bool:
        if len(a.devices) == 1 and a.devices == b.devices:
            picked = next(iter(a.devices))
        else:
            picked = self.pick_device(a.devices | b.devices)
            if picked is None:
                return False
        return all(c.resource_op_device in (None, picked) for c in (a, b))

    def _refuse(self, a: Cluster, b: Cluster, reason) -> bool:
        """Logs why a -> b stays apart (`reason`: text, or a callable building it)."""
        if logging.vlog_is_on(VLOG_MODULE, 3):
            text = reason() if callable(reason) else reason
            logging.vlog(VLOG_MODULE, 3, f"Could not contract {a.describe()} -> "
                         f"{b.describe()} because {text}.")
        return False

    def try_contract(self, a: Cluster, b: Cluster) -> bool:
        if not self.compatible(a, b):
            return self._refuse(a, b, "the two nodes have incompatible devices")
        if a.scope is not None and b.scope is not None and a.scope != b.scope:
            return self._refuse(a, b, "the two nodes have mismatching XLA scopes")
        if a.must_compile != b.must_compile:
            return self._refuse(a, b, "only one of the nodes must be compiled (jit_compile)")
        if len(a.ops) + len(b.ops) > self.flags.tf_xla_max_cluster_size:
            return self._refuse(a, b, "the new cluster will be larger than the max cluster "
                                "size")
        for p in (self.cycles.pred[b.node] if self.multi_device else ()):
            pc = self.clusters.get(p)
            if pc is not None and pc is not a and (not self.compatible(b, pc)
                                                   or not self.compatible(a, pc)):
                return self._refuse(a, b, "the new cluster will introduce a cross device "
                                    "dependency")
        # (A jit_compile cluster is exempt: ndflow's executable runs its variable ops as
        # kernels in program order, so a read after a write sees the write; XLA reads every
        # variable at entry. Auto-clustering keeps TF's rule and TF's clusters.)
        if not self.flags.tf_xla_disable_resource_variable_safety_checks_for_debugging and \
                not a.must_compile and \
                any((x, y) in self.unsafe_pairs for x in a.resource_ops for y in b.resource_ops):
            return self._refuse(a, b, "the new cluster would break resource variable "
                                "semantics")
        survivor = self.cycles.contract_edge(a.node, b.node)
        if survivor is None:
            return self._refuse(a, b, lambda: "contracting the edge would create a cycle via "
                                f"[{self._describe_cycle(a, b)}]")
        self._merge(a, b, survivor)
        return True

    def _describe_cycle(self, a: Cluster, b: Cluster) -> str:
        for s in self.cycles.successors(a.node):
            if s != b.node and self.cycles.is_reachable(s, b.node):
                path = [a.node] + self.cycles.find_path(s, b.node)
                return ", ".join(self._node_text(n) for n in path)
        return ""

    def _node_text(self, n: int) -> str:
        if n in self.clusters:
            return self.clusters[n].describe()
        if n < len(self.ops):
            return f"{self.ops[n].name} #{n}"
        return f"frame #{n}"

    def _merge(self, a: Cluster, b: Cluster, survivor: int) -> None:
        """b's ops join a; a lives on at the cycle-graph node that survived."""
        a.ops += b.ops
        a.effective_size += b.effective_size
        a.devices |= b.devices
        a.resource_op_device = a.resource_op_device or b.resource_op_device
        a.resource_ops |= b.resource_ops
        a.xla_compile_attr_true |= b.xla_compile_attr_true
        a.has_functional_cf |= b.has_functional_cf
        a.scope = a.scope if a.scope is not None else b.scope
        del self.clusters[a.node], self.clusters[b.node]
        a.node = survivor
        self.clusters[survivor] = a

    def for_each_edge_in_post_order(self, fn) -> bool:
        changed = False
        for n in self.cycles.nodes_in_post_order():
            a = self.clusters.get(n)
            if a is None:
                continue
            for s in self.cycles.successors(n):  # a copy: contraction changes them
                b = self.clusters.get(s)
                if b is not None and b is not a:
                    changed |= fn(a, b)
        return changed

    def _sink_like(self, c: Cluster) -> bool:
        op = c.ops[0]
        return len(c.ops) == 1 and op.type == "NoOp" and not op.control_outputs

    @staticmethod
    def _iteration_increment(c: Cluster) -> bool:
        op = c.ops[0]
        return len(c.ops) == 1 and op.type in ("AssignAddVariableOp", "AssignSubVariableOp") \
            and len(op.inputs) > 1 and op.inputs[1].op.type == "Const" \
            and op.inputs[1].shape.rank == 0 and op.inputs[1].dtype.is_integer

    def contract(self) -> None:
        self.for_each_edge_in_post_order(
            lambda a, b: len(b.ops) == 1 and b.ops[0].type in fusible_ops.SHAPE_CONSUMERS
            and self.try_contract(a, b))
        self.for_each_edge_in_post_order(
            lambda a, b: not self._sink_like(b) and not self._iteration_increment(a)
            and self.try_contract(a, b))
        self.for_each_edge_in_post_order(self.try_contract)
        logging.vlog(VLOG_MODULE, 2, "Checking idempotence")
        if self.for_each_edge_in_post_order(self.try_contract):
            raise AssertionError("Internal: clustering is not idempotent")

    # -- 4. finalize ------------------------------------------------------------------------
    def should_compile_cluster(self, c: Cluster) -> bool:
        picked = self.pick_device(c.devices)
        if picked is None or picked[0] not in _JIT_DEVICE_TYPES:
            return False
        if not (c.xla_compile_attr_true or picked[0].startswith("XLA_") or self.level != OFF):
            return False
        return (c.effective_size >= self.flags.tf_xla_min_cluster_size
                or c.has_functional_cf or c.xla_compile_attr_true)

    def finalize(self) -> list:
        for c in self.clusters.values():  # recent TF: a Fill only feeding others stays out
            members = set(c.ops)
            for op in list(c.ops):
                users = [u for t in op.outputs for u in t.consumers()]
                if op.type == "Fill" and len(c.ops) > 1 and \
                        not any(u in members for u in users):
                    c.ops.remove(op)
                    c.effective_size -= 1
        marked = [c for c in self.clusters.values() if self.should_compile_cluster(c)]
        marked.sort(key=lambda c: min(op._id for op in c.ops))
        for c in marked:
            c.ops.sort(key=lambda op: op._id)
            c.name = self._cluster_name()
            for op in c.ops:
                logging.vlog(VLOG_MODULE, 3, f"Assigning node {op.name} to cluster {c.name}")
        return marked

    def _cluster_name(self) -> str:
        with _seq_lock:
            if not self.flags.tf_xla_deterministic_cluster_names:
                return f"cluster_{next(_next_seq)}"
            fp = _fingerprint(self.graph)
            seq = _deterministic_seq.get(fp, 0)
            _deterministic_seq[fp] = seq + 1
            return f"cluster_{fp}_{seq}"


def _fingerprint(graph: Graph) -> int:
    h = hashlib.sha256()
    for op in graph.get_operations():
        h.update(f"{op.name}|{op.type}|{[t.name for t in op.inputs]}\n".encode())
    return int.from_bytes(h.digest()[:8], "little")


def _needs_clustering(graph: Graph, level: int) -> bool:
    ops = graph.get_operations()
    if any(ALREADY_CLUSTERED_ATTR in op.attrs for op in ops):
        return False  # a cluster's own function (the fallback) is never clustered again
    if level != OFF:
        return True
    return any(_attr_true(op, COMPILE_ATTR) or _attr_true(op, MUST_COMPILE_ATTR)
               or ("XLA_" in op.device.upper() and _device(op)[0].startswith("XLA_"))
               for op in ops)


def find_clusters(graph: Graph, ctx: PassContext, flags: XlaFlags | None = None) -> list:
    """The clusters to compile (Cluster objects over `graph`'s ops, named), or []."""
    flags = xla_flags() if flags is None else flags
    level = effective_jit_level(ctx.config, flags, graph)
    if not _needs_clustering(graph, level):
        return []
    c = _Clusterer(graph, ctx, flags, level)
    if flags.ops_to_cluster:
        logging.vlog(VLOG_MODULE, 2, "XLA clustering will only consider the following TF "
                     f"operations: {' '.join(sorted(c.allowed or ()))}")
    logging.vlog(VLOG_MODULE, 2, "Starting fuel: " + (
        "infinity" if flags.tf_xla_clustering_fuel == 2**63 - 1
        else str(flags.tf_xla_clustering_fuel)))
    candidates = c.find_candidates()
    if not candidates:
        logging.vlog(VLOG_MODULE, 2, "No compilable candidates")
        return []
    scopes = pipeline_stage_scopes(c.ops) if level != OFF else {}
    if not c.build_cycle_graph():
        logging.vlog(VLOG_MODULE, 2, "Cycle detected in the graph (through a loop frame); "
                     "not clustering it")
        return []
    c.make_clusters(candidates, scopes)
    c.contract()
    marked = c.finalize()
    report(graph, marked)
    warn_uncompiled_must_compile(graph, marked)
    if flags.tf_xla_clustering_debug:
        dump_clustering(graph, marked)
    return marked


def mark_for_compilation(graph: Graph, ctx: PassContext) -> Graph:
    """A copy of `graph` whose clustered ops carry `_XlaCluster` and `_XlaAlreadyClustered`
    (the input itself when nothing is clustered)."""
    marked = find_clusters(graph, ctx)
    if not marked:
        return graph
    out, mapping = graph.copy()
    for c in marked:
        for op in c.ops:
            new = mapping[op]
            new.attrs[CLUSTER_ATTR] = c.name
            new.attrs[ALREADY_CLUSTERED_ATTR] = True
    return out
