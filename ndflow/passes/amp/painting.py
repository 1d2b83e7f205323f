"""Painting (node, type attribute) vertices ALLOW / DENY, in TensorFlow's order.

As AutoMixedPrecisionImpl::Optimize (auto_mixed_precision.cc, newest version):

1. allowlist ops -> ALLOW (every processed vertex of an allowlisted op, or of any op that
   can be forced under UNSAFE_FORCE_ALL);
2. DENY propagates forward from denylist ops through infer/clear ops, but only along paths
   that reach another infer or deny op (skipped under UNSAFE_FORCE_ALL);
3. infer and clear vertices between two ALLOW vertices -> ALLOW;
4. (bfloat16 only) an infer vertex with an ALLOW fan-in and no DENY fan-in -> ALLOW;
5. ALLOW spreads through clear vertices in both directions;
6. allowlisted vertices whose OpDef does not allow the low-precision type are removed;
then the colours of NextIteration/Merge recurrent edges are matched and existing Casts to
float32 whose consumers are all ALLOW are painted ALLOW.

`paint(view, ...)` returns the ALLOW set (vertex ids of a `TypeGraph`) and logs each
decision at VLOG(2) under the module name "auto_mixed_precision" in TF's wording.
"""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core import dtypes, logging
from ndflow.passes.amp.graph import AmpNode, TypeAttr, TypeGraph
from ndflow.passes.amp.lists import AmpLists

MODULE = "auto_mixed_precision"
INPUTS, OUTPUTS, BOTH = 0, 1, 2


class AmpPaintError(RuntimeError):
    """The painting cannot finish (TF: FailedPrecondition / Internal)."""


def vlog(level: int, msg: str) -> None:
    logging.vlog(MODULE, level, msg, stacklevel=2)


def dfs(view: TypeGraph, root: int, direction: int, enter: Callable[[int], bool],
        pre_order: Callable[[int], None]) -> None:
    """TF's DfsTypeTraversal from one root: a vertex is visited once; `enter` is asked on
    first reaching it (False marks it done); `pre_order` runs on entry."""
    state: dict[int, int] = {}   # 1 visiting, 2 done
    stack = [(root, False)]
    while stack:
        v, children_visited = stack.pop()
        s = state.get(v, 0)
        if s == 2:
            continue
        if not enter(v):
            state[v] = 2
            continue
        if children_visited:
            state[v] = 2
            continue
        if s == 1:           # back edge
            continue
        state[v] = 1
        pre_order(v)
        stack.append((v, True))
        if direction in (INPUTS, BOTH):
            stack.extend((w, False) for w in view.fanin[v])
        if direction in (OUTPUTS, BOTH):
            stack.extend((w, False) for w in view.fanout[v])


_FORCE_EXCLUDED = frozenset({"Const", "SoftmaxCrossEntropyWithLogits"})


def can_force_f16(node: AmpNode) -> bool:
    """TF's CanForceFP16 (ndflow has no ref-typed args)."""
    return node.type not in _FORCE_EXCLUDED and not node.op_def.is_stateful


def implicitly_reads_ref_variable(view: TypeGraph, node: AmpNode) -> bool:
    """An Identity fed by Variable/VariableV2, or an Enter chain to one."""
    if node.type not in ("Identity", "Enter") or not node.inputs:
        return False
    src = view.by_name.get(node.inputs[0][0])
    if src is None:
        return False
    if node.type == "Identity":
        return src.type in ("Variable", "VariableV2")
    return implicitly_reads_ref_variable(view, src)


class Painter:
    """The painting passes for one graph (see module doc)."""

    def __init__(self, view: TypeGraph, lists: AmpLists, processed: set,
                 target, supports_kernel: Callable[[AmpNode], bool], bf16_mode: bool):
        self.view = view
        self.lists = lists
        self.processed = processed          # names of nodes that should be processed
        self.target = target                # dtypes.float16 or dtypes.bfloat16
        self.supports_kernel = supports_kernel
        self.bf16_mode = bf16_mode
        self.allow: set[int] = set()
        self.deny: set[int] = set()

    # -- vertex predicates -----------------------------------------------------------------
    def node(self, v: int) -> AmpNode:
        return self.view.vertices[v][0]

    def ta(self, v: int) -> TypeAttr:
        return self.view.vertices[v][1]

    def should_process(self, v: int) -> bool:
        return self.node(v).name in self.processed

    def is_float32(self, v: int) -> bool:
        node, ta = self.view.vertices[v]
        return node.dtype(ta) is dtypes.float32

    def supports_f16_dtype(self, v: int) -> bool:
        node, ta = self.view.vertices[v]
        allowed = node.allowed_types(ta)
        return allowed is None or self.target in allowed

    def supports_f16(self, v: int) -> bool:
        return self.supports_f16_dtype(v) and self.supports_kernel(self.node(v))

    def _paint(self, v: int, color: str, why: str = "") -> None:
        if logging.vlog_is_on(MODULE, 2):
            node, ta = self.view.vertices[v]
            if why:
                vlog(2, f"Painting type {ta.debug_string()} of node {node.name} {color} {why}")
            else:
                vlog(2, f"Painting type {ta.debug_string()} of {node.type} node {node.name} "
                        f"{color}")

    # -- passes ----------------------------------------------------------------------------
    def add_allowlist_ops(self) -> None:
        for v in range(len(self.view)):
            if not self.should_process(v):
                continue
            node = self.node(v)
            forced = self.lists.force_all and can_force_f16(node)
            if (node.type in self.lists.allow or forced) and v not in self.allow:
                self.allow.add(v)
                self._paint(v, "ALLOW", f"because its op {node.type} is on the allowlist")

    def propagate_deny(self) -> None:
        if self.lists.force_all:
            return
        lists, view = self.lists, self.view
        upstream: set[int] = set()
        for root in range(len(view)):
            if self.node(root).type not in lists.deny and self.node(root).type not in lists.infer:
                continue
            dfs(view, root, INPUTS,
                lambda v, r=root: v == r or (v not in upstream
                                             and self.node(v).type in lists.clear),
                upstream.add)
        for root in range(len(view)):
            if root in self.deny or self.node(root).type not in lists.deny:
                continue

            def paint(v: int) -> None:
                if v not in self.deny:
                    self.deny.add(v)
                    self._paint(v, "DENY")
            dfs(view, root, OUTPUTS,
                lambda v, r=root: v == r or (v not in self.deny and v in upstream), paint)

    def add_between_allow(self) -> None:
        lists, view = self.lists, self.view
        downstream: set[int] = set()

        def may_enter(v: int) -> bool:
            t = self.node(v).type
            return (v not in downstream and t not in lists.allow and v not in self.deny
                    and self.should_process(v) and self.is_float32(v) and self.supports_f16(v)
                    and (t in lists.clear or t in lists.infer))
        for root in range(len(view)):
            if not self.should_process(root) or self.node(root).type not in lists.allow:
                continue
            dfs(view, root, OUTPUTS, lambda v, r=root: v == r or may_enter(v), downstream.add)
        upstream: set[int] = set()

        def paint(v: int) -> None:
            upstream.add(v)
            if v not in self.allow:
                self.allow.add(v)
                self._paint(v, "ALLOW")
        for root in range(len(view)):
            if (not self.should_process(root) or root in upstream
                    or self.node(root).type not in lists.allow):
                continue
            dfs(view, root, INPUTS,
                lambda v, r=root: v == r or (v not in upstream and v in downstream), paint)

    def add_infer_after_allow(self) -> None:
        """Pass 4 (bfloat16 mode): TF's AddInferToAllowIfFollowAllow."""
        for v in range(len(self.view)):
            if (not self.should_process(v) or v in self.deny
                    or self.node(v).type not in self.lists.infer or not self.is_float32(v)
                    or not self.supports_f16_dtype(v)):
                continue
            has_allow_fanin = False
            for w in self.view.fanin[v]:
                if w in self.deny:
                    has_allow_fanin = False
                    break
                if w in self.allow:
                    has_allow_fanin = True
            if has_allow_fanin and v not in self.allow:
                self.allow.add(v)
                self._paint(v, "ALLOW")

    def propagate_allow_through_clear(self) -> None:
        lists, view = self.lists, self.view
        seen: set[int] = set()

        def may_enter(v: int) -> bool:
            return (v not in self.allow and v not in self.deny and self.should_process(v)
                    and self.is_float32(v) and self.supports_f16(v)
                    and self.node(v).type in lists.clear
                    and not implicitly_reads_ref_variable(view, self.node(v)))

        def paint(v: int) -> None:
            seen.add(v)
            if v not in self.allow:
                self.allow.add(v)
                self._paint(v, "ALLOW")
        for root in range(len(view)):
            if not self.should_process(root) or root in seen or root not in self.allow:
                continue
            dfs(view, root, BOTH, lambda v, r=root: v == r or may_enter(v), paint)

    def remove_unsupported_allow(self) -> None:
        for v in range(len(self.view)):
            node = self.node(v)
            if (node.type in self.lists.allow and v in self.allow
                    and not self.supports_f16_dtype(v)):
                self.allow.discard(v)
                vlog(2, f"UnPainting type {self.ta(v).debug_string()} of node {node.name} "
                        f"ALLOW because its op {node.type} is not support F16 DataType")

    def match_tensor_list_clusters(self) -> None:
        """TensorList ops joined by list handles share one element type (TF colours them
        together): a cluster is ALLOW only if all its element_dtype vertices are, and never
        when a list handle also reaches another op (a While, a function, an Identity)."""
        view, parent = self.view, {}

        def find(n: str) -> str:
            while parent.setdefault(n, n) != n:
                n = parent[n]
            return n
        unsafe: set = set()
        for node in view.nodes:
            for port, (src, _) in enumerate(node.inputs):
                if node.op.inputs[port].dtype is not dtypes.variant:
                    continue
                lists = ["TensorList" in n.type for n in (node, view.by_name[src])]
                if all(lists):
                    parent[find(node.name)] = find(src)
                else:
                    unsafe.update(n for n, ok in zip((node.name, src), lists) if ok)
        clusters: dict = {}
        for node in view.nodes:
            v = view.vertex(node, TypeAttr("element_dtype"))
            if "TensorList" in node.type and v is not None:
                clusters.setdefault(find(node.name), []).append(v)
        bad = {find(n) for n in unsafe}
        for root, vs in clusters.items():
            if root in bad or not all(v in self.allow for v in vs):
                for v in vs:
                    if v in self.allow:
                        self.allow.discard(v)
                        vlog(2, f"Painting type element_dtype of {self.node(v).type} node "
                                f"{self.node(v).name} DENY to match its Tensor List cluster")

    def match_recurrent_edges(self) -> None:
        view = self.view
        for node in view.nodes:
            if node.type != "NextIteration":
                continue
            merges = [dst for dst, _ in view.consumers.get((node.name, 0), [])]
            for m in merges:
                if m.type != "Merge":
                    raise AmpPaintError("Expected Merge node after NextIteration, got "
                                        f"{m.type}")
            merge_ids = [view.vertex(m, TypeAttr("T")) for m in merges]
            nxt = view.vertex(node, TypeAttr("T"))
            if nxt is None or any(i is None for i in merge_ids):
                raise AmpPaintError(f"Type attribute T of NextIteration node {node.name} or "
                                    "its Merge nodes not found in graph view")
            if any(i not in self.allow for i in merge_ids):
                for m, i in zip(merges, merge_ids):
                    if i in self.allow:
                        self.allow.discard(i)
                        vlog(2, f"Painting type T of Merge node {m.name} DENY to match the "
                                "color of its sibling Merge nodes with common NextIteration "
                                f"node {node.name}")
                if nxt in self.allow:
                    self.allow.discard(nxt)
                    vlog(2, f"Painting type T of NextIteration node {node.name} DENY to match "
                            "the color of its output Merge node(s)")
            elif nxt not in self.allow:
                self.allow.add(nxt)
                vlog(2, f"Painting type T of NextIteration node {node.name} ALLOW to match the "
                        "color of its output Merge node(s)")

    def make_casts_allow(self) -> None:
        view = self.view
        for node in view.nodes:
            dst_t = TypeAttr("DstT")
            if node.type != "Cast" or node.dtype(dst_t) is not dtypes.float32:
                continue
            fanout = view.consumers.get((node.name, 0), [])
            if fanout and all(view.input_vertex(d, p) in self.allow for d, p in fanout):
                v = view.vertex(node, dst_t)
                if v is not None:
                    self.allow.add(v)

    # -- driver ----------------------------------------------------------------------------
    def run(self) -> set[int]:
        """Passes 1-6 and the fix-ups; the ALLOW set (empty: nothing to do)."""
        vlog(2, "Beginning pass 1 to add allowlist ops")
        self.add_allowlist_ops()
        vlog(2, "Finished pass 1")
        if not self.allow:
            logging.log(logging.INFO, "No allowlist ops found, nothing to do", stacklevel=2)
            return self.allow
        vlog(2, "Beginning pass 2 to propagate deny forwards from denylist ops through "
                "clear/inferlist ops")
        self.propagate_deny()
        vlog(2, "Finished pass 2")
        vlog(2, "Beginning pass 3 to set clear and infer nodes to allow if they are between "
                "allow ops")
        self.add_between_allow()
        vlog(2, "Finished pass 3")
        if self.bf16_mode:
            vlog(2, "Beginning pass 4 to add infer list ops whose inputs are allow")
            self.add_infer_after_allow()
            vlog(2, "Finished pass 4")
        vlog(2, "Beginning pass 5 to propagate allow from allow nodes through clearlist ops")
        self.propagate_allow_through_clear()
        vlog(2, "Finished pass 5")
        vlog(2, "Beginning pass 6 to remove some nodes which could not be changed to F16 "
                "from allow set")
        self.remove_unsupported_allow()
        vlog(2, "Finished pass 6")
        self.match_tensor_list_clusters()
        vlog(2, "Forcing color match on loop edges")
        self.match_recurrent_edges()
        vlog(2, "Finding existing casts that can be made allow")
        self.make_casts_allow()
        return self.allow
