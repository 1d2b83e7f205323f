"""`if`, `while` and `for` statements into calls of AutoGraph's operators.

Each statement becomes functions over the enclosing function's variables (TensorFlow's
functional form): the blocks (`if_body`, `loop_body(itr)`, ...) assign those variables through
`nonlocal`, and `get_state`/`set_state` read and write the statement's state — for a
conditional the variables it modifies (the first `nouts`, those live after it, are its
outputs), for a loop its loop variables (modified and either carried into the next iteration
or live after the loop). `ag__.if_stmt`/`while_stmt`/`for_stmt` then either run the blocks as
Python or stage `tf.cond`/`tf.while_loop` around them, depending on the condition's type.
"""

from __future__ import annotations

import ast
import sys

from ndflow.autograph import analysis
from ndflow.autograph.canonicalize import Namer, ag_call, assign, name

_NO_ARGS = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _raw(node: ast.expr) -> ast.expr:
    """Marks generated reads that must see an undefined variable as such (no ag__.ld)."""
    for n in ast.walk(node):
        n.ag_raw = True
    return node


def _args(*names: str) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _def(fn_name: str, body: list, params: tuple = ()) -> ast.FunctionDef:
    extra = {"type_params": []} if sys.version_info >= (3, 12) else {}
    return ast.FunctionDef(name=fn_name, args=_args(*params) if params else _NO_ARGS,
                           body=body or [ast.Pass()], decorator_list=[], returns=None,
                           type_comment=None, **extra)


def _names_tuple(names: list, raw: bool = False) -> ast.Tuple:
    t = ast.Tuple(elts=[name(n) for n in names], ctx=ast.Load())
    return _raw(t) if raw else t


def _locate(nodes: list, ref: ast.AST) -> list:
    """Gives generated nodes the source position of the statement they replace (tracebacks and
    AutoGraph's errors then point at the user's line)."""
    for top in nodes:
        for n in ast.walk(top):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                # a point, not a span: Python reports a method call at its attribute's end
                n.lineno = n.end_lineno = ref.lineno
                n.col_offset = n.end_col_offset = ref.col_offset
    return nodes


def extract_loop_options(body: list) -> None:
    """Sets `loop.ag_loop_options` on every loop of a function body (before any other
    transform sees the directive calls)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.For, ast.While)):
            stmt.ag_loop_options = _loop_options(stmt)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                extract_loop_options(block)
        for handler in getattr(stmt, "handlers", []) or []:
            extract_loop_options(handler.body)


def _loop_options(loop: ast.For | ast.While) -> ast.expr:
    """`tf.autograph.experimental.set_loop_options(...)` directives at the top of a loop body
    are removed from it and passed to the loop operator as options."""
    keys, values = [], []
    kept = []
    for stmt in loop.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        func = getattr(call, "func", None)
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if isinstance(call, ast.Call) and fname == "set_loop_options":
            for kw in call.keywords:
                keys.append(ast.Constant(kw.arg))
                values.append(kw.value)
        else:
            kept.append(stmt)
    loop.body = kept or [ast.Pass()]
    if isinstance(loop, ast.For):
        iterate = loop.target.id if isinstance(loop.target, ast.Name) else ""
        keys.append(ast.Constant("iterate_names"))
        values.append(ast.Constant(iterate))
    return ast.Dict(keys=keys, values=values)


class StatementConverter:
    def __init__(self, namer: Namer, global_names: set, nonlocal_names: set):
        self.namer = namer
        self.globals = set(global_names)
        self.user_nonlocals = set(nonlocal_names)
        self.maybe_undefined: set = set()

    def block(self, stmts: list) -> list:
        out = []
        for stmt in stmts:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt: ast.stmt) -> list:
        if isinstance(stmt, ast.If):
            return self._if(stmt)
        if isinstance(stmt, ast.While):
            return self._while(stmt)
        if isinstance(stmt, ast.For):
            return self._for(stmt)
        if isinstance(stmt, (ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block:
                    setattr(stmt, field, self.block(block))
            for handler in getattr(stmt, "handlers", []) or []:
                handler.body = self.block(handler.body)
        return [stmt]

    # -- pieces shared by the statements -------------------------------------------------------
    def _declarations(self, modified: set) -> list:
        out = []
        local = sorted(modified - self.globals)
        if local:
            out.append(ast.Nonlocal(names=local))
        glob = sorted(modified & self.globals)
        if glob:
            out.append(ast.Global(names=glob))
        return out

    def _bind(self, stmt: ast.stmt, modified: set) -> list:
        """`x = ag__.ld_or_undefined(lambda: x, 'x')` for each variable the blocks assign that
        may be unbound here: `nonlocal` needs a binding in this function, and an undefined
        variable becomes an `Undefined` value (TensorFlow's error names it if it is used)."""
        defined = getattr(stmt, "ag_defined_in", set()) | self.user_nonlocals
        out = []
        for n in sorted(modified - defined - self.globals):
            self.maybe_undefined.add(n)
            lam = _raw(ast.Lambda(args=_NO_ARGS, body=name(n)))
            out.append(assign(n, ag_call("ld_or_undefined", lam, ast.Constant(n))))
        return out

    def _state_functions(self, state: list) -> tuple[str, str, list]:
        get_name, set_name = self.namer.new("get_state"), self.namer.new("set_state")
        get_fn = _def(get_name, [ast.Return(value=_names_tuple(state, raw=True))])
        vars_ = self.namer.new("vars_")
        if state:
            target = ast.Tuple(elts=[name(n, store=True) for n in state], ctx=ast.Store())
            set_body = self._declarations(set(state)) + [
                ast.Assign(targets=[target], value=name(vars_))]
        else:
            set_body = [ast.Pass()]
        set_fn = _def(set_name, set_body, (vars_,))
        return get_name, set_name, [get_fn, set_fn]

    @staticmethod
    def _symbols(state: list) -> ast.Tuple:
        return ast.Tuple(elts=[ast.Constant(n) for n in state], ctx=ast.Load())

    # -- the statements ------------------------------------------------------------------------
    def _if(self, node: ast.If) -> list:
        modified = analysis.assigned(node.body + node.orelse)
        live = getattr(node, "ag_live_out", set())
        outputs = sorted(modified & live)
        state = outputs + sorted(modified - live)
        body, orelse = self.block(node.body), self.block(node.orelse)
        body_name, else_name = self.namer.new("if_body"), self.namer.new("else_body")
        get_name, set_name, state_fns = self._state_functions(state)
        fns = [_def(body_name, self._declarations(analysis.assigned(node.body)) + body),
               _def(else_name, self._declarations(analysis.assigned(node.orelse)) + orelse)]
        call = ast.Expr(value=ag_call("if_stmt", node.test, name(body_name), name(else_name),
                                      name(get_name), name(set_name), self._symbols(state),
                                      ast.Constant(len(outputs))))
        return _locate(self._bind(node, modified) + state_fns + fns + [call], node)

    def _while(self, node: ast.While) -> list:
        opts = node.ag_loop_options
        modified = analysis.assigned(node.body)
        live = getattr(node, "ag_live_out", set())
        carried = analysis.read_before_assigned(node.body) | analysis.read(node.test)
        state = sorted(modified & (carried | live))
        body = self.block(node.body)
        test_name, body_name = self.namer.new("loop_test"), self.namer.new("loop_body")
        get_name, set_name, state_fns = self._state_functions(state)
        fns = [_def(test_name, [ast.Return(value=node.test)]),
               _def(body_name, self._declarations(modified) + body)]
        call = ast.Expr(value=ag_call("while_stmt", name(test_name), name(body_name),
                                      name(get_name), name(set_name), self._symbols(state),
                                      opts))
        return _locate(self._bind(node, modified) + state_fns + fns + [call], node)

    def _for(self, node: ast.For) -> list:
        opts = node.ag_loop_options
        extra = getattr(node, "ag_extra_test", None)
        itr = self.namer.new("itr")
        bind_target = ast.copy_location(
            ast.Assign(targets=[node.target], value=name(itr)), node)
        body_stmts = [bind_target] + node.body
        modified = analysis.assigned(body_stmts)
        live = getattr(node, "ag_live_out", set())
        carried = analysis.read_before_assigned(body_stmts)
        if extra is not None:
            carried |= analysis.read(extra)
        state = sorted(modified & (carried | live))
        body = self.block(node.body)
        body_name = self.namer.new("loop_body")
        get_name, set_name, state_fns = self._state_functions(state)
        fns = [_def(body_name, self._declarations(modified) + [bind_target] + body, (itr,))]
        extra_arg: ast.expr = ast.Constant(None)
        if extra is not None:
            extra_name = self.namer.new("extra_test")
            fns.append(_def(extra_name, [ast.Return(value=extra)]))
            extra_arg = name(extra_name)
        call = ast.Expr(value=ag_call("for_stmt", node.iter, extra_arg, name(body_name),
                                      name(get_name), name(set_name), self._symbols(state),
                                      opts))
        return _locate(self._bind(node, modified) + state_fns + fns + [call], node)


class LoadWrapper(ast.NodeTransformer):
    """Reads of possibly-undefined variables go through `ag__.ld`, which raises Python's
    UnboundLocalError for an `Undefined` value, as the unconverted code would have."""

    def __init__(self, names: set):
        self.names = names

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.names and \
                not getattr(node, "ag_raw", False):
            return ast.copy_location(ag_call("ld", node), node)
        return node

    def visit_Lambda(self, node: ast.Lambda):
        if getattr(node, "ag_raw", False):
            return node
        return self.generic_visit(node)
