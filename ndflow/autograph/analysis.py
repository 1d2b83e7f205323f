"""What AutoGraph needs to know about names in a function body, found with `ast`.

The control-flow converter turns a block into a function that reads and writes the enclosing
function's variables through `nonlocal`; it needs, per statement, the names the block assigns,
the names it reads before assigning them (loop-carried values), and the names read later in
the function (live after it). As TensorFlow's activity and liveness analyses, these look only
at this function's own scope: a nested function, lambda, class or comprehension assigns names
in its own scope (its reads of enclosing names still count as reads).
"""

from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _target_names(target: ast.AST, out: set) -> None:
    """Names bound by an assignment target (`a`, `a, (b, *c)`; not `x.y` or `x[i]`)."""
    if isinstance(target, ast.Name):
        out.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            _target_names(t, out)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, out)


class _Activity(ast.NodeVisitor):
    """Names assigned and read in a subtree, without entering nested scopes' bindings."""

    def __init__(self):
        self.assigned: set = set()
        self.read: set = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.read.add(node.id)
        else:
            self.assigned.add(node.id)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        _target_names(node.target, self.read)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        extra = getattr(node, "ag_extra_test", None)  # the loop condition break/return add
        if extra is not None:
            self.visit(extra)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.assigned.add(node.target.id)
        self.visit(node.value)

    def _visit_def(self, node) -> None:
        self.assigned.add(node.name)
        for d in node.decorator_list:
            self.visit(d)
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(d)
        inner = _Activity()
        for stmt in node.body:
            inner.visit(stmt)
        self.read |= inner.read  # free variables the nested function reads

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.assigned.add(node.name)
        inner = _Activity()
        for stmt in node.body:
            inner.visit(stmt)
        self.read |= inner.read

    def visit_Lambda(self, node: ast.Lambda) -> None:
        inner = _Activity()
        inner.visit(node.body)
        self.read |= inner.read

    def _visit_comprehension(self, node) -> None:
        inner = _Activity()
        for child in ast.iter_child_nodes(node):
            inner.visit(child)
        self.read |= inner.read

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.assigned.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.assigned.add(node.name)
        self.generic_visit(node)


def activity(nodes) -> tuple[set, set]:
    """(assigned, read) names of a node or a list of nodes."""
    a = _Activity()
    for n in nodes if isinstance(nodes, list) else [nodes]:
        a.visit(n)
    return a.assigned, a.read


def assigned(nodes) -> set:
    return activity(nodes)[0]


def read(nodes) -> set:
    return activity(nodes)[1]


def _definitely_assigned(stmt: ast.stmt) -> set:
    """Names a statement binds on every path through it (loops may run zero times)."""
    if isinstance(stmt, ast.If):
        return _block_definitely_assigned(stmt.body) & _block_definitely_assigned(stmt.orelse)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        out = set()
        for item in stmt.items:
            if item.optional_vars is not None:
                _target_names(item.optional_vars, out)
        return out | _block_definitely_assigned(stmt.body)
    if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor, ast.Try)):
        return set()
    return assigned(stmt)


def _block_definitely_assigned(stmts: list) -> set:
    out: set = set()
    for s in stmts:
        out |= _definitely_assigned(s)
    return out


def read_before_assigned(stmts: list, bound: frozenset = frozenset()) -> set:
    """Names a block may read before it assigns them: its loop-carried values when it is a
    loop body. A `with` binds its `as` targets before its body runs (a tape created and used
    inside a loop body is not carried)."""
    out: set = set()
    bound = set(bound)
    for s in stmts:
        if isinstance(s, (ast.With, ast.AsyncWith)):
            targets: set = set()
            for item in s.items:
                out |= read(item.context_expr) - bound
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, targets)
            out |= read_before_assigned(s.body, frozenset(bound | targets))
        elif isinstance(s, ast.If):  # each branch reads in order from what is bound here
            out |= read(s.test) - bound
            out |= read_before_assigned(s.body, frozenset(bound))
            out |= read_before_assigned(s.orelse, frozenset(bound))
        elif isinstance(s, (ast.For, ast.While)):  # a nested loop: its own carried values
            out |= read(s.iter if isinstance(s, ast.For) else s.test) - bound
            out |= loop_carried(s) - bound
            out |= read_before_assigned(s.orelse, frozenset(bound))
        else:
            out |= read(s) - bound
        bound |= _definitely_assigned(s)
    return out


def loop_carried(loop: ast.For | ast.While) -> set:
    """Names a loop's next iteration may read before assigning them (its test, and its body
    from the target it binds): TF's live-in of the loop body. A name assigned and then read
    within one iteration is local to the iteration."""
    extra = getattr(loop, "ag_extra_test", None)  # a canonicalized `break`'s flag test
    out = read(extra) if extra is not None else set()
    if isinstance(loop, ast.For):
        return out | read_before_assigned(loop.body, frozenset(assigned(loop.target)))
    return out | read(loop.test) | read_before_assigned(loop.body)


def annotate_liveness(body: list, after: set = frozenset(), loop: set = frozenset()) -> None:
    """Sets `node.ag_live_out` on each compound statement of a function body: the names that
    may be read after it — later in its block or any enclosing block, or by an enclosing
    loop's next iteration before it assigns them (`loop_carried`). Textual and conservative
    (no kills but a loop iteration's own assignments)."""
    reads_after = [set() for _ in body]
    acc = set(after)
    for i in range(len(body) - 1, -1, -1):
        reads_after[i] = set(acc)
        acc |= read(body[i])
    for stmt, live in zip(body, reads_after):
        live = live | loop
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            stmt.ag_live_out = live
        inner_loop = loop | loop_carried(stmt) if isinstance(stmt, (ast.For, ast.While)) \
            else loop
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt) and \
                    not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                annotate_liveness(block, live, inner_loop)
        for handler in getattr(stmt, "handlers", []) or []:
            annotate_liveness(handler.body, live, inner_loop)


def definitely_defined_before(body: list, params: set) -> None:
    """Sets `node.ag_defined_in` on each compound statement: the names certainly bound when
    it starts (the function's parameters and what earlier statements always bind)."""
    def walk(stmts: list, defined: set) -> None:
        defined = set(defined)
        for stmt in stmts:
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                stmt.ag_defined_in = set(defined)
                inner = defined | (assigned(stmt.target) if isinstance(stmt, ast.For) else set())
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, field, []) or [], inner)
                for handler in getattr(stmt, "handlers", []) or []:
                    walk(handler.body, inner)
            defined |= _definitely_assigned(stmt)
    walk(body, params)


def parameter_names(args: ast.arguments) -> set:
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    if args.vararg:
        names.add(args.vararg.arg)
    if args.kwarg:
        names.add(args.kwarg.arg)
    return names
