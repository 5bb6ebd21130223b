"""The packages by audience, and the arrows between them (COURSE.md section 1).

- ``course/``: the student package, the only code a release ships; it imports neither of the others,
  except ``course/__main__.py``, the one shim that keeps ``python -m course`` working in the private
  repository (a release leaves it out: tests/instructor/test_release.py);
- ``autograder/``: the grader; it imports the student package (the checks' handles, the wire), never
  the instructor's tooling;
- ``instructor/``: the tooling; it may import both.

The module graph is read from the source (every ``import`` and ``from ... import``, relative or
absolute, at any depth, inside functions and under ``if TYPE_CHECKING:`` too: an import only for the
annotations still ties two modules together), not from what happens to be imported at run time.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("course", "autograder", "instructor")
SHIM = ("course.__main__", "instructor.cli")          # the one arrow out of the student package


def modules() -> dict[str, Path]:
    """Every module of the three packages and of their subpackages (``course.rules``), by dotted
    name (a package's __init__ is the package); not the grader's own tests (``tests/autograder``)
    nor the notebooks' material."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            folders = [ROOT.joinpath(*parts[:i]) for i in range(1, len(parts))]
            if "tests" in parts[:-1] or not all((f / "__init__.py").is_file() for f in folders):
                continue                  # the grader's tests, a folder that is no package (assignments)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _known(name: str, known: dict[str, Path]) -> str | None:
    """The module ``name`` is, or is in (``course.handles.student`` -> ``course.handles``)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the three packages that module ``name`` imports, anywhere in its code."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            # `from . import wire` imports the module course.wire; `from .nets import SmallStart`
            # imports course.nets
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            module = _known(target, known)
            if module is not None and module != name:
                found.add(module)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _crossing(edges: dict[str, set[str]], source: str, targets: tuple[str, ...]) -> set[tuple[str, str]]:
    return {(a, b) for a, bs in edges.items() for b in bs
            if a.split(".")[0] == source and b.split(".")[0] in targets}


def test_the_scan_sees_every_kind_of_import():
    edges = graph()
    assert "course.handles" in edges["autograder.judge"]          # from course import handles, wire
    assert "course.wire" in edges["course.serve"]                 # from . import wire
    assert "course.nets" in edges["course"]                       # from .nets import ... (in __init__)
    assert "autograder.grade" in edges["instructor.grade"]        # from autograder import grade as engine
    assert "instructor.build" in edges["instructor.cli"]          # inside a function
    assert "instructor.masters" in edges["instructor.nbgrader.export"]    # from ..masters import ...
    assert "instructor.nbgrader.plugins" in edges["instructor.nbgrader.grade"]   # a subpackage's own
    assert "autograder.notebook" in edges["autograder.judge"]     # relative, inside a function
    assert "instructor.cli" in edges["course.__main__"]
    assert "course.rules.scopes" in edges["course.rules.reading"]  # a module of a subpackage
    assert "course.rules" in edges["course.handles"]               # from . import rules (the package)


def test_an_import_for_annotations_only_counts(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    assert imports("pkg.m", path, {"pkg.m": path, "pkg.b": tmp_path / "b.py"}) == {"pkg.b"}


def test_no_import_circles():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_student_package_imports_neither_the_grader_nor_the_tooling():
    assert _crossing(graph(), "course", ("autograder", "instructor")) == {SHIM}


def test_the_grader_imports_nothing_of_the_tooling():
    assert _crossing(graph(), "autograder", ("instructor",)) == set()


def test_the_console_script_is_the_tooling():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'course = "instructor.cli:main"' in text
    assert '"instructor*"' in text


def _top_imports(path: Path) -> set[str]:
    """The top-level packages one test file imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def test_the_tests_mirror_the_packages_and_the_graders_run_without_the_tooling():
    """tests/course, tests/autograder and tests/instructor test one package each; the grader's tests
    (and the helpers they share) import neither the tooling nor the benchmarks, so the engine can be
    tested, and carried on, alone."""
    assert {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"} == \
        {"course", "autograder", "instructor", "support"}
    shared = {"hostile", "forgery", "isolation_attacks", "checks_helpers", "lms_samples"}
    files = sorted((ROOT / "tests" / "autograder").glob("*.py")) + \
        [ROOT / "tests" / "support" / f"{name}.py" for name in sorted(shared)]
    reaching = {p.relative_to(ROOT).as_posix(): sorted(_top_imports(p) & {"instructor", "benchmarks"})
                for p in files}
    assert {f: used for f, used in reaching.items() if used} == {}
    assert not (ROOT / "autograder" / "tests").exists()
