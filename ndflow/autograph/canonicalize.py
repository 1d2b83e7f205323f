"""Lowers `break`, `continue` and `return` into flag variables and guarded blocks.

A staged loop or conditional is a function called by `tf.while_loop`/`tf.cond`: a jump out of
it cannot be a Python jump. As TensorFlow's break/continue/return converters do, each jump
becomes an assignment to a flag (`break_ = True`), the statements after a statement that may
have jumped run under `if not flag:`, loop conditions gain `not flag`, and a function whose
returns sit inside compound statements returns one `retval_` at its end. The flags are plain
variables, so they become tensors exactly when the jump depends on a tensor.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.While)


def name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[name(target, store=True)], value=value)


def not_(id_: str) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=name(id_))


def ag_call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=name("ag__"), attr=fn, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _walk_scope(node: ast.AST, into_loops: bool):
    """Nodes under `node` in the same function, optionally not entering nested loops."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _NESTED_SCOPES) or (not into_loops and isinstance(child, _LOOPS)):
            continue
        yield child
        yield from _walk_scope(child, into_loops)


def _contains(node: ast.AST, kind: type, into_loops: bool) -> bool:
    if isinstance(node, _NESTED_SCOPES):
        return False
    return isinstance(node, kind) or any(isinstance(n, kind)
                                         for n in _walk_scope(node, into_loops))


def _lower_block(stmts: list, jump: type, replace: Callable, flag: str,
                 into_loops: bool) -> list:
    """`stmts` with each `jump` replaced and the statements after one that may jump guarded by
    `if not flag:` (the statements after a jump itself are dead and dropped)."""
    out = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, jump):
            out.extend(replace(stmt))
            return out
        may_jump = _contains(stmt, jump, into_loops)
        if may_jump:
            _lower_children(stmt, jump, replace, flag, into_loops)
        out.append(stmt)
        if may_jump and i + 1 < len(stmts):
            rest = _lower_block(stmts[i + 1:], jump, replace, flag, into_loops)
            out.append(ast.copy_location(ast.If(test=not_(flag), body=rest, orelse=[]),
                                         stmts[i + 1]))
            return out
    return out


def _lower_children(stmt: ast.stmt, jump: type, replace: Callable, flag: str,
                    into_loops: bool) -> None:
    if isinstance(stmt, _NESTED_SCOPES) or (not into_loops and isinstance(stmt, _LOOPS)):
        return
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block:
            setattr(stmt, field, _lower_block(block, jump, replace, flag, into_loops) or
                    [ast.Pass()])
    for handler in getattr(stmt, "handlers", []) or []:
        handler.body = _lower_block(handler.body, jump, replace, flag, into_loops) or \
            [ast.Pass()]


def _and_not(flag: str, test: ast.expr | None) -> ast.expr:
    cond = not_(flag)
    return cond if test is None else ast.BoolOp(op=ast.And(), values=[cond, test])


class Namer:
    """Fresh names that no name of the function uses (`break_`, `break__1`, ...)."""

    def __init__(self, taken: set):
        self.taken = set(taken)

    def new(self, base: str) -> str:
        candidate, i = base, 0
        while candidate in self.taken:
            i += 1
            candidate = f"{base}_{i}"
        self.taken.add(candidate)
        return candidate


def _loop_jumps(stmts: list, namer: Namer) -> list:
    """Lowers break and continue in every loop of a block, innermost loops first."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, _NESTED_SCOPES):
            out.append(stmt)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block:
                setattr(stmt, field, _loop_jumps(block, namer))
        for handler in getattr(stmt, "handlers", []) or []:
            handler.body = _loop_jumps(handler.body, namer)
        out.extend(_lower_loop(stmt, namer) if isinstance(stmt, _LOOPS) else [stmt])
    return out


def _lower_loop(loop: ast.For | ast.While, namer: Namer) -> list:
    before, after = [], []
    if any(_contains(s, ast.Continue, False) for s in loop.body):
        flag = namer.new("continue_")
        reset = ast.copy_location(assign(flag, ast.Constant(False)), loop.body[0])
        loop.body = [reset] + _lower_block(
            loop.body, ast.Continue,
            lambda j: [ast.copy_location(assign(flag, ast.Constant(True)), j)], flag, False)
    if any(_contains(s, ast.Break, False) for s in loop.body):
        flag = namer.new("break_")
        before.append(ast.copy_location(assign(flag, ast.Constant(False)), loop))
        loop.body = _lower_block(
            loop.body, ast.Break,
            lambda j: [ast.copy_location(assign(flag, ast.Constant(True)), j)], flag, False)
        if isinstance(loop, ast.While):
            loop.test = ast.BoolOp(op=ast.And(), values=[loop.test, not_(flag)])
        else:
            loop.ag_extra_test = _and_not(flag, getattr(loop, "ag_extra_test", None))
        if loop.orelse:  # `else:` runs when the loop ended without a break
            after.append(ast.copy_location(ast.If(test=not_(flag), body=loop.orelse, orelse=[]),
                                           loop.orelse[0]))
    elif loop.orelse:
        after.extend(loop.orelse)
    loop.body = loop.body or [ast.Pass()]
    loop.orelse = []
    return before + [loop] + after


# -- return --------------------------------------------------------------------------------------

def _definitely_returns(stmts: list) -> bool:
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and _definitely_returns(s.body) and \
                _definitely_returns(s.orelse):
            return True
        if isinstance(s, (ast.With, ast.AsyncWith)) and _definitely_returns(s.body):
            return True
    return False


def _fold_conditional_returns(stmts: list) -> list:
    """TF's ConditionalReturnRewriter: `if c: ...; return a` followed by more statements puts
    those statements in the `else` branch, so both branches of the conditional return (a
    staged conditional cannot return in one branch only)."""
    out = []
    for i, stmt in enumerate(stmts):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and not isinstance(stmt, _NESTED_SCOPES):
                setattr(stmt, field, _fold_conditional_returns(block))
        for handler in getattr(stmt, "handlers", []) or []:
            handler.body = _fold_conditional_returns(handler.body)
        out.append(stmt)
        rest = stmts[i + 1:]
        if isinstance(stmt, ast.If) and rest:
            if _definitely_returns(stmt.body):
                stmt.orelse = _fold_conditional_returns(stmt.orelse + rest)
                return out
            if _definitely_returns(stmt.orelse):
                stmt.body = _fold_conditional_returns(stmt.body + rest)
                return out
    return out


def _nested_return(stmts: list) -> bool:
    return any(not isinstance(s, ast.Return) and _contains(s, ast.Return, True)
               for s in stmts if not isinstance(s, _NESTED_SCOPES))


def _add_loop_return_tests(stmts: list, flag: str) -> None:
    for stmt in stmts:
        if isinstance(stmt, _NESTED_SCOPES):
            continue
        if isinstance(stmt, _LOOPS) and _contains(stmt, ast.Return, True):
            if isinstance(stmt, ast.While):
                stmt.test = _and_not(flag, stmt.test)
            else:
                stmt.ag_extra_test = _and_not(flag, getattr(stmt, "ag_extra_test", None))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                _add_loop_return_tests(block, flag)
        for handler in getattr(stmt, "handlers", []) or []:
            _add_loop_return_tests(handler.body, flag)


def lower_returns(body: list, namer: Namer) -> list:
    """One `return` at the end when a return sits inside a compound statement."""
    body = _fold_conditional_returns(body)
    if not _nested_return(body):
        return body
    do_return, retval = namer.new("do_return"), namer.new("retval_")
    _add_loop_return_tests(body, do_return)

    def replace(ret: ast.Return) -> list:
        value = ret.value if ret.value is not None else ast.Constant(None)
        return [ast.copy_location(assign(do_return, ast.Constant(True)), ret),
                ast.copy_location(assign(retval, value), ret)]
    lowered = _lower_block(body, ast.Return, replace, do_return, True)
    return ([assign(do_return, ast.Constant(False)),
             assign(retval, ag_call("UndefinedReturnValue"))] + lowered +
            [ast.Return(value=ag_call("retval", name(retval)))])


def lower_jumps(body: list, namer: Namer) -> list:
    """break/continue in loops, then returns (TensorFlow's converter order)."""
    return lower_returns(_loop_jumps(body, namer), namer)
