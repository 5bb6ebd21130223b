"""Small helpers on the syntax tree, shared by the rules' passes."""
from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    class StrConstant(ast.Constant):
        """For the type checker: a constant whose value is a string, what :func:`plain_string` tells."""
        value: str


def source_text(node: ast.AST) -> str:
    """Short source text of an expression, for a message."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
        return f"{node.func.id}()"
    if isinstance(node, (ast.Call, ast.Subscript, ast.Attribute)):
        inner = node.func if isinstance(node, ast.Call) else node.value
        if isinstance(node, ast.Attribute):
            return f"{source_text(inner)}.{node.attr}"
        return source_text(inner) + ("(...)" if isinstance(node, ast.Call) else "[...]")
    return "(...)"


def dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def plain_string(node: ast.AST | None) -> TypeGuard[StrConstant]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def plain_strings(args: list[ast.expr]) -> TypeGuard[list[StrConstant]]:
    return all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args)


def own_expressions(stmt: ast.stmt) -> Iterable[ast.AST]:
    """Every node in a statement's own expressions (not in the statements nested in its body)."""
    for _, value in ast.iter_fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (ast.expr, ast.withitem, ast.keyword, ast.arguments, ast.comprehension)):
                yield from ast.walk(item)
