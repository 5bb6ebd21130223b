"""`course solutions [--quick] [NOTEBOOK...]`: run the solution notebooks headless, in order.

Each master notebook solutions/NN_name.ipynb is executed top to bottom in a fresh kernel
(working directory: solutions/, as when a TA opens it in Jupyter). The executed notebook and
an HTML copy of it are written to runs/solutions/ (git-ignored), also when a cell fails, so
that the failure can be read there. A progress bar runs over the notebooks (and one over the
cells of the current notebook), and the time each notebook took is printed.

--quick (or COURSE_QUICK=1 in the environment, as in CI) cuts every training run to a few
hundred steps (see course.training.Steps). The exit status is 0 when every notebook ran,
1 when one failed (its failing cell and error are printed), 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course.training import QUICK_ENV, Quick

from . import registry

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
OUT = ROOT / "runs" / "solutions"


@dataclass
class Outcome:
    """What happened to one notebook."""

    notebook: str
    ok: bool
    seconds: float                         # running the cells
    executed: str = ""
    html: str = ""
    failed_cell: int | None = None         # index of the failing cell in the notebook
    error: str = ""                        # e.g. "AssertionError: ..." or "timeout after 600 s"
    traceback: str = ""
    cell_source: str = field(default="", repr=False)
    write_seconds: float = 0.0             # saving the executed copy and its HTML


def FindNotebooks(names: list[str], folder: Path = SOLUTIONS, config: Path | None = None) -> list[Path]:
    """The solution notebooks to run, in course order (course.toml's list, or ``config``'s).

    No names: every notebook of the course that is in ``folder``. A name may be a path, a file name,
    a stem such as `03_attention`, a number such as `03` or `3`, or a part of the name such as
    `attention`. Raises ValueError for a name that matches no notebook, or more than one, and for a
    master in ``folder`` that the course does not list.
    """
    strays = [s for s in registry.strays(folder, config) if "is missing" not in s]
    if strays:
        raise ValueError("; ".join(strays))
    every = [(folder / f"{n}.ipynb").resolve() for n in registry.notebooks(config)
             if (folder / f"{n}.ipynb").is_file()]
    if not names:
        return every
    chosen: list[Path] = []
    for name in names:
        path = Path(name)
        if path.suffix == ".ipynb" and path.exists():
            matches = [path.resolve()]
        else:
            stem = path.stem if path.suffix == ".ipynb" else name
            if stem.isdigit():
                stem = f"{int(stem):02d}"
            matches = [p for p in every if p.stem == stem]
            matches = matches or [p for p in every if p.stem.startswith(stem + "_")]
            matches = matches or [p for p in every if stem.lower() in p.stem.lower()]
        if len(matches) != 1:
            known = ", ".join(p.stem for p in every) or f"none in {folder}"
            what = "matches no" if not matches else "matches more than one"
            raise ValueError(f"{name!r} {what} solution notebook (there are: {known})")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return sorted(chosen, key=lambda p: (every.index(p) if p in every else len(every), p.name))


def _first_error(nb) -> tuple[int | None, str, str, str]:
    """(cell index, 'Name: value', traceback text, cell source) of the first cell with an error."""
    import re

    ansi = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                trace = ansi.sub("", "\n".join(output.get("traceback", [])))
                return (index, f"{output.get('ename', 'Error')}: {output.get('evalue', '')}",
                        trace, cell.source)
    return None, "", "", ""


def _write_html(nb, path: Path) -> None:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb)
    path.write_text(body, encoding="utf-8")


def RunNotebook(path: Path, out: Path, timeout: int | None = None, kernel: str = "python3",
                cell_bar: bool = True) -> Outcome:
    """Execute one notebook in a fresh kernel; write the executed copy and its HTML to `out`."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from tqdm.auto import tqdm

    nb = nbformat.read(path, as_version=4)
    out.mkdir(parents=True, exist_ok=True)
    code_cells = sum(cell.cell_type == "code" for cell in nb.cells)
    bar = tqdm(total=code_cells, desc=f"  {path.stem} cells", leave=False, disable=not cell_bar,
               unit="cell")
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel,
                            resources={"metadata": {"path": str(path.parent)}},
                            on_cell_executed=lambda **kw: bar.update(1))
    start = time.perf_counter()
    problem = ""
    try:
        client.execute()
    except CellTimeoutError as error:
        problem = f"timeout: a cell ran longer than {timeout} s ({str(error).strip().splitlines()[0]})"
    except DeadKernelError as error:
        problem = f"the kernel died ({error})"
    except CellExecutionError:
        pass                               # the error is in the cell's outputs: found below
    except Exception as error:             # the kernel could not start, a broken notebook, ...
        problem = f"{type(error).__name__}: {error}"
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    index, cell_error, trace, source = _first_error(nb)
    if problem and index is None:
        index = next((i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
                      and cell.get("execution_count") is None and cell.source.strip()), None)
        source = nb.cells[index].source if index is not None else ""
    written = time.perf_counter()
    executed = out / path.name
    nbformat.write(nb, executed)
    html: Path | None                       # None: the HTML copy could not be written
    html = out / (path.stem + ".html")
    try:
        _write_html(nb, html)
    except Exception as html_error:        # an HTML failure must not hide the notebook's result
        print(f"could not write the HTML copy of {path.name}: {html_error}", file=sys.stderr)
        html = None
    return Outcome(notebook=path.stem, ok=not problem and index is None, seconds=round(seconds, 1),
                   executed=str(executed), html=str(html) if html else "", failed_cell=index,
                   error=problem or cell_error, traceback=trace, cell_source=source,
                   write_seconds=round(time.perf_counter() - written, 1))


def Report(outcome: Outcome) -> str:
    """The failure of one notebook in words: which cell, its first lines, and the error."""
    lines = [f"FAILED {outcome.notebook}: {outcome.error}"]
    if outcome.failed_cell is not None:
        lines.append(f"  in cell {outcome.failed_cell}:")
        source = outcome.cell_source.splitlines()
        lines += [f"    | {line}" for line in source[:12]]
        if len(source) > 12:
            lines.append(f"    | ... ({len(source) - 12} more lines)")
    if outcome.traceback:
        trace = outcome.traceback.splitlines()
        lines.append("  traceback (last lines):")
        lines += [f"    {line}" for line in trace[-15:]]
    lines.append(f"  executed notebook: {outcome.executed}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        notebooks = FindNotebooks(args.notebooks, args.solutions, args.config)
    except ValueError as error:
        print(f"course solutions: {error}", file=sys.stderr)
        return 2
    if not notebooks:
        print(f"course solutions: no solution notebooks (NN_name.ipynb) in {args.solutions}",
              file=sys.stderr)
        return 2

    saved = {name: os.environ.get(name) for name in (QUICK_ENV, "PYTHONPATH")}
    if args.quick:
        os.environ[QUICK_ENV] = "1"
    quick = Quick()
    timeout = args.timeout if args.timeout is not None else (900 if quick else None)
    # the kernel must import this checkout's `course`, wherever it is started from
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved["PYTHONPATH"]]))

    print(f"Running {len(notebooks)} solution notebook(s){' in quick mode' if quick else ''}; "
          f"output in {args.out}")
    start = time.perf_counter()
    try:
        outcomes = _run_all(notebooks, args, timeout)
    finally:
        _restore(saved)             # the caller's environment, however the runs ended
    total = time.perf_counter() - start
    failed = [o for o in outcomes if not o.ok]
    summary = {"quick": quick, "seconds": round(total, 1), "ok": not failed,
               "notebooks": [asdict(o) for o in outcomes]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{len(outcomes) - len(failed)} of {len(notebooks)} ran without error in {total:.0f} s"
          + (f"; failed: {', '.join(o.notebook for o in failed)}" if failed else ""))
    return 1 if failed else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course solutions",
        description="Run the solution notebooks headless, in order; executed copies and HTML go "
                    "to runs/solutions/.")
    parser.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                        help="which ones (e.g. 03_attention, 03, attention); default: all")
    parser.add_argument("--quick", action="store_true",
                        help=f"a few hundred training steps per run (also {QUICK_ENV}=1)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    parser.add_argument("--solutions", type=Path, default=SOLUTIONS, help="the master notebooks' folder")
    parser.add_argument("--config", type=Path, default=None,
                        help="the course.toml listing the notebooks (default: the repository's)")
    parser.add_argument("--timeout", type=int, default=None,
                        help="seconds allowed per cell (default: none; 900 in quick mode)")
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel (default python3)")
    parser.add_argument("--fail-fast", action="store_true", help="stop at the first notebook that fails")
    return parser


def _run_all(notebooks: list[Path], args: argparse.Namespace, timeout: int | None) -> list[Outcome]:
    """Run the notebooks in order under a progress bar, a line for each (and the report of one that
    failed); with ``--fail-fast``, none after the first that fails."""
    from tqdm.auto import tqdm

    outcomes: list[Outcome] = []
    with tqdm(notebooks, desc="solutions", unit="notebook") as bar:
        for path in bar:
            bar.set_postfix_str(path.stem)
            outcome = RunNotebook(path, args.out, timeout, args.kernel)
            outcomes.append(outcome)
            bar.write(f"{'ok    ' if outcome.ok else 'FAILED'} {outcome.notebook:20s} "
                      f"{outcome.seconds:7.1f} s  (+{outcome.write_seconds:.1f} s to save it and "
                      f"its HTML)")
            if not outcome.ok:
                bar.write(Report(outcome))
                if args.fail_fast:
                    break
    return outcomes


def _restore(saved: dict[str, str | None]) -> None:
    """Put the environment variables back as they were (unset where they were not set)."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


if __name__ == "__main__":
    sys.exit(main())
