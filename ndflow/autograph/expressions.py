"""Expression conversions: `and`/`or`/`not`, `a if c else b`, calls, and (as TensorFlow's
optional features) `assert`.

`a and b` becomes `ag__.and_(lambda: a, lambda: b)`: the operands stay lazy, as in Python, and
on tensors it stages `tf.cond`. Every call `f(x)` becomes `ag__.converted_call(f, (x,), None,
ag__options)`, which converts user functions on the way down (recursive conversion) and runs
everything else as is.
"""

from __future__ import annotations

import ast

from ndflow.autograph.canonicalize import ag_call, name

# Builtins whose meaning depends on the calling frame: a call through converted_call would see
# the wrong frame, so they are left alone (super() is rewritten to its explicit form instead).
_FRAME_BUILTINS = {"locals", "globals", "vars", "eval", "exec", "dir", "super"}


def _thunk(expr: ast.expr) -> ast.Lambda:
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                         kw_defaults=[], kwarg=None, defaults=[]),
                      body=expr)


class ExpressionConverter(ast.NodeTransformer):
    def __init__(self, first_param: str | None, has_class_cell: bool, assert_statements: bool):
        self.first_param = first_param
        self.has_class_cell = has_class_cell
        self.assert_statements = assert_statements

    # nested functions and classes are converted on their own (their own scope and options)
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        op = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = ag_call(op, _thunk(value), _thunk(result))
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ag_call("not_", node.operand), node)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return ast.copy_location(
            ag_call("if_exp", node.test, _thunk(node.body), _thunk(node.orelse),
                    ast.Constant(ast.unparse(node.test))), node)

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id == "super" and not node.args and \
                self.has_class_cell and self.first_param:
            node.args = [name("__class__"), name(self.first_param)]
            return node
        if isinstance(func, ast.Name) and func.id in _FRAME_BUILTINS:
            return node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id == "ag__":
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        if node.keywords:
            kwargs = ast.Dict(keys=[k.arg for k in node.keywords],
                              values=[k.value for k in node.keywords])
            kwargs.keys = [None if k is None else ast.Constant(k) for k in kwargs.keys]
        else:
            kwargs = ast.Constant(None)
        return ast.copy_location(
            ag_call("converted_call", func, args, kwargs, name("ag__options")), node)

    def visit_Assert(self, node: ast.Assert):
        if not self.assert_statements:
            return self.generic_visit(node)
        self.generic_visit(node)
        msg = _thunk(node.msg if node.msg is not None else ast.Constant("Assertion error"))
        return ast.copy_location(ast.Expr(value=ag_call("assert_stmt", node.test, msg)), node)
