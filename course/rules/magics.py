"""IPython syntax read as plain Python, for the rules: ``%magic`` lines made harmless, and the
bodies of the magics that still run under the grader (``%%capture``, ``%%time``, ...) put in
place of the magic, so that the rules read them as the cell's own code."""
from __future__ import annotations

import ast
import functools
from typing import Any

from .syntax import own_expressions, plain_strings

# The magics whose body still runs under the grader (autograder/runner.py, _Shell.RUN_BODY): the
# rules read their bodies as the cell's own code.
RUN_BODY = {"time", "timeit", "capture", "prun"}
_MAGIC_CALLS = {"run_cell_magic": 2, "run_line_magic": 1}     # where the code is among the arguments


def _magic_body(node: ast.AST, depth: int) -> list[ast.stmt] | None:
    """The statements a ``run_cell_magic``/``run_line_magic`` call runs under the grader (a magic
    in RUN_BODY, called with plain strings), unfolded in turn; None for any other node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS and len(node.args) > _MAGIC_CALLS[node.func.attr]
            and plain_strings(node.args) and node.args[0].value in RUN_BODY and depth < 8):
        return None
    try:
        inner = _unfold_magics(ast.parse(_transform(node.args[_MAGIC_CALLS[node.func.attr]].value)),
                               depth + 1)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return inner.body or [ast.Pass()]


def _unfold_magics(tree: ast.Module, depth: int = 0) -> ast.Module:
    """Put the statements of each ``get_ipython().run_cell_magic("time", "", body)`` (what
    ``%%time`` becomes; also ``run_line_magic``) in place of the call: instead of it when the call
    is a statement of its own (as IPython writes it), else right after the statement that makes
    it. A call whose magic or body is not a plain string, or nested over 8 deep, is left as it is
    (and read as running code built at run time)."""

    class Unfold(ast.NodeTransformer):
        def generic_visit(self, node: ast.AST):
            node = super().generic_visit(node)
            if not isinstance(node, ast.stmt):
                return node
            if isinstance(node, ast.Expr):
                inner = _magic_body(node.value, depth)
                if inner is not None:
                    return inner
            extra = [s for n in own_expressions(node) for s in (_magic_body(n, depth) or [])]
            return [node, *extra] if extra else node

    return ast.fix_missing_locations(Unfold().visit(tree))


def computed_magic(node: ast.AST) -> bool:
    """A ``run_cell_magic``/``run_line_magic`` call left after :func:`_unfold_magics` that may run
    code the rules have not read: its arguments are not all plain strings, or it names a magic
    whose body runs (not a statement of its own as IPython writes it, or nested too deep)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS):
        return False
    return not plain_strings(node.args) or (bool(node.args) and node.args[0].value in RUN_BODY)


@functools.cache
def _transformer() -> Any:
    from IPython.core.inputtransformer2 import TransformerManager
    return TransformerManager()


def _transform(source: str) -> str:
    """The cell as IPython runs it (prompts stripped; ``%magic``, ``!cmd``, ``x?`` as calls): the
    transformation the grader's runner applies (autograder/runner.py) and Jupyter's."""
    try:
        return _transformer().transform_cell(source)
    except Exception:
        return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def strip_magics(source: str) -> str:
    """The cell as plain Python: IPython syntax made harmless, and the bodies of the magics that
    still run (``%%capture``, ``%%time``, ``%time x = ...``) put in place of the magic."""
    text = _transform(source)
    if "_magic" not in text:
        return text
    try:
        return ast.unparse(_unfold_magics(ast.parse(text)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
