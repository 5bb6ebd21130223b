"""The page's rules: no ready-made transformer pieces inside your own code.

You may use nn.Linear, nn.Embedding, nn.LayerNorm, nn.GELU, the optimizers and autograd. You may
not use ``nn.MultiheadAttention``, ``nn.Transformer`` and its relatives, or
``F.scaled_dot_product_attention`` in the code you write (checking an answer against
``F.scaled_dot_product_attention`` in a cell of its own is fine: that is what the page does).

Two checks, and the autograder uses both:

- :func:`static_uses` reads the notebook's code, starting from the definitions being graded
  (say ``Attention``) and following every notebook-level name they use, and lists the forbidden
  pieces it finds: attribute access (``F.scaled_dot_product_attention``), imports
  (``from torch.nn import MultiheadAttention``), the names as strings (``getattr(F, "...")``),
  ``getattr`` on torch with a computed name, code run from strings (``exec``, ``eval``,
  ``__import__``), and any cell that changes torch itself (``torch.softmax = ...``). It cannot
  see code that is hidden in ways a reader could not follow either (a name put together from
  pieces inside ``exec`` is flagged because ``exec`` is, not because the name is seen).
- :class:`Watch` records forbidden functions that actually run while your code is called. It runs
  inside your own process, so it is a second signal only: it can take points away, never give
  them.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable

FORBIDDEN_NAMES = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "multi_head_attention_forward": "F.multi_head_attention_forward",
    "MultiheadAttention": "nn.MultiheadAttention",
    "Transformer": "nn.Transformer",
    "TransformerEncoder": "nn.TransformerEncoder",
    "TransformerEncoderLayer": "nn.TransformerEncoderLayer",
    "TransformerDecoder": "nn.TransformerDecoder",
    "TransformerDecoderLayer": "nn.TransformerDecoderLayer",
}
_CLASSES = {"MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerEncoderLayer",
            "TransformerDecoder", "TransformerDecoderLayer"}
_DYNAMIC = {"exec": "exec", "eval": "eval", "compile": "compile", "__import__": "__import__",
            "importlib": "importlib"}
_TORCHY = {"torch", "nn", "F", "functional"}


def _forbidden_word(word: str) -> str | None:
    """The forbidden piece ``word`` names (also torch's private variants of the attention kernel)."""
    if word in FORBIDDEN_NAMES:
        return FORBIDDEN_NAMES[word]
    if "scaled_dot_product" in word:
        return word
    return None


# The magics whose body still runs under the grader (autograder/runner.py, _Shell.RUN_BODY): the
# rules read their bodies as the cell's own code.
RUN_BODY = {"time", "timeit", "capture", "prun"}
_MAGIC_CALLS = {"run_cell_magic": 2, "run_line_magic": 1}     # where the code is among the arguments


def _plain_strings(args: list[ast.expr]) -> bool:
    return all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args)


def _magic_body(node: ast.AST, depth: int) -> list[ast.stmt] | None:
    """The statements a ``run_cell_magic``/``run_line_magic`` call runs under the grader (a magic
    in RUN_BODY, called with plain strings), unfolded in turn; None for any other node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS and len(node.args) > _MAGIC_CALLS[node.func.attr]
            and _plain_strings(node.args) and node.args[0].value in RUN_BODY and depth < 8):
        return None
    try:
        inner = _unfold_magics(ast.parse(_transform(node.args[_MAGIC_CALLS[node.func.attr]].value)),
                               depth + 1)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return inner.body or [ast.Pass()]


def _own_expressions(stmt: ast.stmt) -> Iterable[ast.AST]:
    """Every node in a statement's own expressions (not in the statements nested in its body)."""
    for _, value in ast.iter_fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (ast.expr, ast.withitem, ast.keyword, ast.arguments, ast.comprehension)):
                yield from ast.walk(item)


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
            extra = [s for n in _own_expressions(node) for s in (_magic_body(n, depth) or [])]
            return [node, *extra] if extra else node

    return ast.fix_missing_locations(Unfold().visit(tree))


def _computed_magic(node: ast.AST) -> bool:
    """A ``run_cell_magic``/``run_line_magic`` call left after :func:`_unfold_magics` that may run
    code the rules have not read: its arguments are not all plain strings, or it names a magic
    whose body runs (not a statement of its own as IPython writes it, or nested too deep)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS):
        return False
    return not _plain_strings(node.args) or (bool(node.args) and node.args[0].value in RUN_BODY)


def _transform(source: str) -> str:
    """IPython syntax (``%magic``, ``!cmd``, ``x?``) as harmless Python, so that the cell parses."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:
        return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _strip_magics(source: str) -> str:
    """The cell as plain Python: IPython syntax made harmless, and the bodies of the magics that
    still run (``%%capture``, ``%%time``, ``%time x = ...``) put in place of the magic."""
    text = _transform(source)
    if "_magic" not in text:
        return text
    try:
        return ast.unparse(_unfold_magics(ast.parse(text)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text


def _parse(cells: Iterable[str]) -> list[ast.Module]:
    trees = []
    for source in cells:
        try:
            trees.append(ast.parse(_strip_magics(source)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return trees


def _top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run at notebook level, also inside if/for/while/try/with."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor)):
            yield from _top_level(node.body + getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + node.finalbody
                                  + [s for h in node.handlers for s in h.body])


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _problems_in(node: ast.AST, torch_aliases: set[str], imported: dict[str, str]) -> list[str]:
    found = []
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            word = _forbidden_word(n.attr)
            if word and (n.attr not in _CLASSES or _root_name(n) in torch_aliases):
                found.append(f"uses {word}")
        elif isinstance(n, ast.Name) and n.id in imported:
            found.append(f"uses {imported[n.id]}")
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            module = getattr(n, "module", None) or ""
            for a in n.names:
                word = _forbidden_word(a.name.split(".")[-1])
                if word and (module.startswith("torch") or a.name.startswith("torch")):
                    found.append(f"imports {word}")
                if a.name.split(".")[0] == "importlib" or module.startswith("importlib"):
                    found.append("runs code built at run time (importlib)")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            word = _forbidden_word(n.value)
            if word:
                found.append(f"names {word} in a string")
        elif isinstance(n, ast.Name) and n.id in _DYNAMIC and isinstance(n.ctx, ast.Load):
            found.append(f"runs code built at run time ({_DYNAMIC[n.id]})")
        elif _computed_magic(n):
            found.append(f"runs code built at run time ({n.func.attr})")   # not unfolded: not plain strings
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in ("getattr", "setattr") \
                and n.args and _root_name(n.args[0]) in torch_aliases \
                and not (len(n.args) > 1 and isinstance(n.args[1], ast.Constant)):
            found.append("looks up a torch function by a computed name (getattr)")
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars" \
                and n.args and _root_name(n.args[0]) in torch_aliases:
            found.append("looks up torch functions by name (vars)")
        elif isinstance(n, ast.Attribute) and n.attr in ("__dict__", "__getattribute__") \
                and _root_name(n.value) in torch_aliases:
            found.append(f"looks up torch functions by name ({n.attr})")
        elif isinstance(n, ast.Attribute) and n.attr == "modules" and isinstance(n.value, ast.Name) \
                and n.value.id == "sys":
            found.append("reaches modules through sys.modules")
        elif isinstance(n, ast.Name) and n.id == "attrgetter":
            found.append("looks up attributes by computed names (attrgetter)")
    return found


def _changes_torch(tree: ast.Module, torch_aliases: set[str]) -> list[str]:
    """Assignments to attributes of torch (``torch.softmax = ...``) anywhere in the notebook."""
    found = []
    for n in ast.walk(tree):
        targets = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, ast.Delete):
            targets = n.targets
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and _root_name(sub) in torch_aliases:
                    found.append(f"changes {ast.unparse(sub)} (a notebook may not change PyTorch)")
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr") \
                and n.args and _root_name(n.args[0]) in torch_aliases:
            found.append(f"changes {ast.unparse(n.args[0])} with {n.func.id} "
                         "(a notebook may not change PyTorch)")
    return found


def static_uses(cells: Iterable[str], roots: Iterable[str],
                template: Iterable[str] | None = None) -> list[str]:
    """What the definitions of ``roots`` (and every notebook-level name they use) do against the
    rules, read from the notebook's code cells (in order). Empty when nothing is found.

    Also a problem: a root with no notebook-level definition at all (the code that answers for it
    cannot be read), and, given the blank notebook's cells as ``template``, a root whose definition
    is still the blank one (whatever answered for it, it was not that definition)."""
    cells = list(cells)
    roots = list(roots)
    trees = _parse(cells)
    torch_aliases = set(_TORCHY)
    imported: dict[str, str] = {}        # names bound to a forbidden piece by a notebook-level import
    for tree in trees:
        for node in _top_level(tree.body):
            if isinstance(node, ast.Import):
                torch_aliases |= {(a.asname or a.name).split(".")[0] for a in node.names
                                  if a.name.split(".")[0] == "torch"}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch"):
                for a in node.names:
                    word = _forbidden_word(a.name)
                    if word:
                        imported[a.asname or a.name] = word
                    else:
                        torch_aliases.add(a.asname or a.name)
    last: dict[str, ast.stmt] = {}
    for tree in trees:
        for node in _top_level(tree.body):
            for name in _bound_names(node):
                last[name] = node
    found: list[str] = []
    if cells:
        found += [f"no definition of {r} found in the notebook's code" for r in roots if r not in last]
    if template is not None:
        blank: dict[str, str] = {}
        for tree in _parse(template):
            for node in _top_level(tree.body):
                for name in _bound_names(node):
                    blank[name] = ast.dump(node)
        found += [f"{r} is still the blank template" for r in roots
                  if r in last and r in blank and ast.dump(last[r]) == blank[r]]
    seen: set[int] = set()
    todo = [last[r] for r in roots if r in last]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found += _problems_in(node, torch_aliases, imported)
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in last and id(last[n.id]) not in seen:
                todo.append(last[n.id])
    for tree in trees:
        found += _changes_torch(tree, torch_aliases)
    return list(dict.fromkeys(found))


class Watch:
    """Records forbidden torch functions and modules used while it is on (a TorchFunctionMode)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self._mode = None

    def __enter__(self) -> Watch:
        from torch.overrides import TorchFunctionMode

        watch = self

        class _Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "") or ""
                word = _forbidden_word(name)
                if word:
                    watch.used.add(word)
                return func(*args, **(kwargs or {}))

        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None


def forbidden_modules(module) -> list[str]:
    """The forbidden nn modules inside ``module`` (found by their classes)."""
    import torch.nn as nn
    bad = tuple(getattr(nn, n) for n in FORBIDDEN_NAMES if hasattr(nn, n))
    if not isinstance(module, nn.Module):
        return []
    return sorted({f"uses nn.{type(m).__name__}" for m in module.modules() if isinstance(m, bad)})


# ---------------------------------------------------------------- code that reaches for the grader

_SUSPICIOUS_CALLS = {
    ("os", "read"): "reads raw file descriptors (os.read)",
    ("os", "write"): "writes raw file descriptors (os.write)",
    ("os", "fdopen"): "opens raw file descriptors (os.fdopen)",
    ("os", "dup"): "copies file descriptors (os.dup)",
    ("os", "dup2"): "copies file descriptors (os.dup2)",
    ("os", "kill"): "sends signals (os.kill)",
    ("os", "fork"): "forks the process (os.fork)",
    ("sys", "_getframe"): "walks the call stack (sys._getframe)",
    ("sys", "settrace"): "installs a trace hook (sys.settrace)",
    ("sys", "setprofile"): "installs a profile hook (sys.setprofile)",
    ("inspect", "currentframe"): "walks the call stack (inspect.currentframe)",
    ("inspect", "stack"): "walks the call stack (inspect.stack)",
    ("gc", "get_objects"): "searches the process's objects (gc.get_objects)",
    ("gc", "get_referrers"): "searches the process's objects (gc.get_referrers)",
    ("gc", "get_referents"): "searches the process's objects (gc.get_referents)",
}
_SUSPICIOUS_MODULES = {
    "ctypes": "loads native code (ctypes)", "threading": "starts threads (threading)",
    "_thread": "starts threads (_thread)", "signal": "handles signals (signal)",
    "socket": "opens sockets (socket)", "fcntl": "changes file descriptors (fcntl)",
    "select": "waits on file descriptors (select)", "selectors": "waits on file descriptors (selectors)",
    "mmap": "maps memory (mmap)", "multiprocessing": "starts processes (multiprocessing)",
    "subprocess": "starts processes (subprocess)", "pty": "opens terminals (pty)",
    "concurrent": "starts threads or processes (concurrent.futures)",
    "asyncio": "runs an event loop (asyncio)",
    "importlib": "imports modules by computed names (importlib)",
}
_SUSPICIOUS_WORDS = {
    "/proc/": "reads /proc (the process's own internals)",
    "DisableTorchFunction": "switches off torch's function hooks (DisableTorchFunction)",
    "_DisableTorchDispatch": "switches off torch's dispatch hooks",
    "__torch_function__": "defines __torch_function__ (objects that answer for torch)",
    "__torch_dispatch__": "defines __torch_dispatch__ (objects that answer for torch)",
    "f_back": "walks the call stack (f_back)",
    "f_locals": "reads other frames' variables (f_locals)",
    "f_globals": "reads other frames' variables (f_globals)",
    "tb_frame": "walks the call stack (tb_frame)",
    "gi_frame": "walks the call stack (gi_frame)",
}


def suspicious(cells: Iterable[str], numbers: Iterable[int] | None = None) -> list[str]:
    """Code anywhere in the notebook that has no business in this course and that reaches for the
    grading machinery (its pipes, its call stack, torch's hooks): listed for the instructor, who
    should read the notebook. An honest notebook has none. ``numbers``: the cells' numbers in the
    notebook (default 1, 2, ...)."""
    found = []
    cells = list(cells)
    for number, source in zip(numbers or range(1, len(cells) + 1), cells, strict=False):
        try:
            tree = ast.parse(_strip_magics(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for n in ast.walk(tree):
            what = None
            if isinstance(n, ast.Attribute):
                base = n.value.id if isinstance(n.value, ast.Name) else None
                what = _SUSPICIOUS_CALLS.get((base, n.attr)) or _SUSPICIOUS_WORDS.get(n.attr)
                if base == "torch" and n.attr == "_C":
                    what = "reaches into torch's internals (torch._C)"
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in n.names]
                names += [n.module] if isinstance(n, ast.ImportFrom) and n.module else []
                for name in names:
                    what = what or _SUSPICIOUS_MODULES.get(name.split(".")[0])
                if isinstance(n, ast.ImportFrom) and n.module in ("os", "sys", "inspect", "gc"):
                    what = what or next((_SUSPICIOUS_CALLS[(n.module, a.name)] for a in n.names
                                         if (n.module, a.name) in _SUSPICIOUS_CALLS), None)
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                what = next((v for k, v in _SUSPICIOUS_WORDS.items()
                             if k.startswith("/") and k in n.value), None)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DYNAMIC:
                # code the rules cannot read (it may redefine a graded name after its visible definition)
                what = f"runs code built at run time ({n.func.id})"
            elif _computed_magic(n):
                what = f"runs code built at run time ({n.func.attr})"
            elif isinstance(n, (ast.FunctionDef, ast.Name)):
                name = n.name if isinstance(n, ast.FunctionDef) else n.id
                what = _SUSPICIOUS_WORDS.get(name)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) \
                    and isinstance(n.value, ast.Attribute) and n.value.attr == "modules":
                what = "replaces entries of sys.modules"
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars" \
                    and n.args and _root_name(n.args[0]) in _TORCHY | {"torch", "course"}:
                what = "looks up torch functions by name (vars)"
            if what:
                found.append(f"cell {number} {what}")
    return list(dict.fromkeys(found))
