"""A directed acyclic graph that stays acyclic under edge insertion and edge contraction
(TensorFlow's GraphCycles, used by auto-clustering).

Nodes carry a rank that is a topological order; inserting an edge that breaks the order
re-ranks the affected region (Pearce & Kelly's dynamic topological sort) or, when the edge
would close a cycle, is refused. `contract_edge(a, b)` merges `b` into `a` unless another path
a -> ... -> b exists (then the merged node would sit on a cycle).

    g = CycleGraph(3); g.insert_edge(0, 1); g.insert_edge(1, 2); g.insert_edge(0, 2)
    g.contract_edge(0, 2)      # None: 0 -> 1 -> 2 is another path
    g.contract_edge(0, 1)      # 0 (the survivor): node 1 is gone, 0 -> 2 remains
"""

from __future__ import annotations


class CycleGraph:
    def __init__(self, n: int = 0):
        self.rank: list[int] = []
        self.succ: list[set[int]] = []
        self.pred: list[set[int]] = []
        self.alive: list[bool] = []
        for _ in range(n):
            self.new_node()

    def new_node(self) -> int:
        i = len(self.rank)
        self.rank.append(i)
        self.succ.append(set())
        self.pred.append(set())
        self.alive.append(True)
        return i

    def has_edge(self, a: int, b: int) -> bool:
        return b in self.succ[a]

    def insert_edge(self, a: int, b: int) -> bool:
        """Adds a -> b; False (and no change) when it would create a cycle."""
        if a == b:
            return False
        if b in self.succ[a]:
            return True
        self.succ[a].add(b)
        self.pred[b].add(a)
        if self.rank[a] < self.rank[b]:
            return True
        forward = self._reach(b, self.rank[a], self.succ)
        if forward is None:  # b reaches a: a cycle
            self.succ[a].discard(b)
            self.pred[b].discard(a)
            return False
        backward = self._reach(a, self.rank[b], self.pred, lower=True)
        self._reorder(backward, forward)
        return True

    def remove_edge(self, a: int, b: int) -> None:
        self.succ[a].discard(b)
        self.pred[b].discard(a)

    def _reach(self, start: int, bound: int, edges, lower: bool = False):
        """Nodes reachable from `start` within rank `bound` (above it for backward search);
        None when the forward search meets the bound node itself (a cycle)."""
        seen = {start}
        stack = [start]
        while stack:
            n = stack.pop()
            for m in edges[n]:
                r = self.rank[m]
                if not lower and r == bound:
                    return None
                if (r > bound if lower else r < bound) and m not in seen:
                    seen.add(m)
                    stack.append(m)
        return seen

    def _reorder(self, backward: set, forward: set) -> None:
        nodes = sorted(backward, key=self.rank.__getitem__) + \
            sorted(forward, key=self.rank.__getitem__)
        ranks = sorted(self.rank[n] for n in nodes)
        for n, r in zip(nodes, ranks):
            self.rank[n] = r

    def is_reachable(self, a: int, b: int) -> bool:
        """Whether a path a -> ... -> b exists (ranks bound the search)."""
        if a == b:
            return True
        if self.rank[a] > self.rank[b]:
            return False
        bound = self.rank[b]
        seen = {a}
        stack = [a]
        while stack:
            n = stack.pop()
            for m in self.succ[n]:
                if m == b:
                    return True
                if self.rank[m] < bound and m not in seen:
                    seen.add(m)
                    stack.append(m)
        return False

    def find_path(self, a: int, b: int) -> list[int]:
        """One path a -> ... -> b (for messages), or []."""
        parent = {a: None}
        stack = [a]
        while stack:
            n = stack.pop()
            if n == b:
                path = []
                while n is not None:
                    path.append(n)
                    n = parent[n]
                return path[::-1]
            for m in self.succ[n]:
                if m not in parent and self.rank[m] <= self.rank[b]:
                    parent[m] = n
                    stack.append(m)
        return []

    def contract_edge(self, a: int, b: int) -> int | None:
        """Merges the edge a -> b into one node and returns it (the end with more edges
        survives, so growing a large cluster stays cheap); None (no change) when another path
        from a to b exists."""
        self.remove_edge(a, b)
        if self.is_reachable(a, b):
            self.insert_edge(a, b)
            return None
        if len(self.succ[b]) + len(self.pred[b]) > len(self.succ[a]) + len(self.pred[a]):
            for p in list(self.pred[a]):
                self.remove_edge(p, a)
                ok = self.insert_edge(p, b)
                assert ok, "contracting an edge with no other path cannot create a cycle"
            for s in list(self.succ[a]):
                self.remove_edge(a, s)
                ok = self.insert_edge(b, s)
                assert ok, "contracting an edge with no other path cannot create a cycle"
            self.alive[a] = False
            return b
        for p in list(self.pred[b]):
            self.remove_edge(p, b)
            ok = self.insert_edge(p, a)
            assert ok, "contracting an edge with no other path cannot create a cycle"
        for s in list(self.succ[b]):
            self.remove_edge(b, s)
            ok = self.insert_edge(a, s)
            assert ok, "contracting an edge with no other path cannot create a cycle"
        self.alive[b] = False
        return a

    def successors(self, n: int) -> list[int]:
        return sorted(self.succ[n])

    def predecessors(self, n: int) -> list[int]:
        return sorted(self.pred[n])

    def nodes_in_post_order(self) -> list[int]:
        """Live nodes, consumers first (decreasing rank), as TF's AllNodesInPostOrder."""
        return sorted((n for n in range(len(self.rank)) if self.alive[n]),
                      key=lambda n: -self.rank[n])
