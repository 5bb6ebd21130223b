"""Whether a definition is still only a template: the blank notebooks' answers are ``...`` inside
the signature (with ``super().__init__()`` and a given helper around it); a definition that still
computes nothing is no answer, whether or not the blank notebook is at hand to compare with (in the
student's own kernel it is not)."""
from __future__ import annotations

import ast


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str)


def _does_nothing(node: ast.stmt) -> bool:
    """In a function's body: a placeholder, ``return`` of a constant, or a constant put into a
    name of its own (``todo = None``): a body of these computes nothing (so one such
    line beside the ``...`` does not earn a blank piece its rules point)."""
    if _placeholder(node):
        return True
    if isinstance(node, ast.Return):
        return node.value is None or isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and isinstance(node.value, ast.Constant)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and (node.value is None
                                                      or isinstance(node.value, ast.Constant))
    return False


def _placeholder(node: ast.stmt) -> bool:
    """What a blank answer holds: ``...``, ``pass``, a docstring, ``raise NotImplementedError``, and
    the lines the blank notebooks keep around the ``...``: ``super().__init__(...)`` and a given
    helper handed the object alone (07's ``SmallStart(self)``). None of them stores or returns
    anything, so a method made of them does nothing of the answer's."""
    if isinstance(node, ast.Pass) or _is_docstring(node):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return node.value.value is Ellipsis
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) \
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
            return True
        return isinstance(func, ast.Name) and not call.keywords and len(call.args) == 1 \
            and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


_BARE_BASES = frozenset({"Module", "object"})


def is_stub(node: ast.stmt) -> bool:
    """Whether a definition is still only a template: a function whose body computes nothing
    (placeholders such as ``...``, constants: :func:`_does_nothing`), or a class whose only bases are
    ``nn.Module``/object and whose body and methods hold nothing else (a class that names a
    working base is an answer, however short)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return all(_does_nothing(b) for b in node.body)
    if not isinstance(node, ast.ClassDef):
        return False
    bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None) for b in node.bases]
    if node.keywords or not all(b in _BARE_BASES for b in bases):
        return False
    return all(is_stub(b) if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) else _placeholder(b)
               for b in node.body)
