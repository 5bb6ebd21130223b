"""Time and peak memory of one submission through a Gradescope zip's ``run_autograder``.

    python -m benchmarks.gradescope_run [NN_name ...] [--zips DIR] [--notebook solution|blank]
    python -m benchmarks.gradescope_run NN_name ... --degenerate
    python -m benchmarks.gradescope_run NN_name ... --parity
    python -m benchmarks.gradescope_run [NN_name ...] --limits instructor/gradescope_limits.json

For each notebook (default 03_attention, 08_causal, 09_gpt) it grades the built solution (or the
blank) with ``autograder/build/NN_name-autograder.zip`` (or the zip of the same name in ``--zips``:
keep an older build's zips there to compare) as Gradescope runs it (:func:`autograder.gradescope.grade`),
and prints the wall time, the peak memory of the whole process tree (run_autograder and everything
it starts, sandboxed processes included, sampled every 50 ms) and the score. Memory is the sum of
the processes' PSS (each shared page divided among the processes that share it: the engine's
fork server imports torch once and the notebook's and judge's processes share its pages, which a
sum of RSS would count three times; a container's memory limit counts them once), and the sum of
RSS beside it.
Gradescope's defaults are 0.5 vCPU, 768 MB and 10 minutes; this machine is not throttled.

With ``--degenerate`` it grades every degenerate answer of the notebooks (:mod:`autograder.degenerate`)
through the zip instead and prints each one's points against its cap; exit status 1 if any keeps
more (tests/instructor/test_gradescope_zip.py runs a sample of them). With ``--parity`` it grades the
solution, the blank and every mutant (autograder/assignments/NN_name/mutants/) through the zip and through
``course grade`` and prints every submission whose points differ on any question; exit status 1 if one does.

With ``--limits FILE`` (default: all nine notebooks) it measures what Gradescope's *Autograder
Settings* ask for: it grades the solution and every mutant with ``course grade`` to find the
heaviest mutant (the largest peak memory of its cgroup) and the slowest, then runs the solution and
those through the zip as Gradescope does (namespaces refused, as by Docker's seccomp), **throttled
to Gradescope's default half a CPU** (a cgroup CPU quota, ``--cpus``), and writes the seconds and
peak memory of each into FILE, the data the set-up sheets of ``course build`` read
(:mod:`instructor.gradescope_sheet`). Needs root (the cgroup) and ``course build`` first.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import psutil

from autograder import gradescope

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "autograder" / "build"
DEFAULT = ("03_attention", "08_causal", "09_gpt")


class PeakMemory:
    """The largest sums of PSS and of RSS over this process's descendants, sampled in a thread."""

    def __init__(self, interval: float = 0.05) -> None:
        self.peak = 0
        self.peak_rss = 0
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            pss = rss = 0
            for p in me.children(recursive=True):
                try:
                    info = p.memory_full_info()
                except psutil.Error:
                    continue
                pss += info.pss
                rss += info.rss
            self.peak = max(self.peak, pss)
            self.peak_rss = max(self.peak_rss, rss)
            time.sleep(self.interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def measure(zip_path: Path, notebook: Path, prefix: list[str] = ()) -> dict:
    with tempfile.TemporaryDirectory(prefix="gs-bench-") as tmp, PeakMemory() as peak:
        t0 = time.monotonic()
        results = gradescope.grade(zip_path, notebook, Path(tmp), timeout=900, prefix=prefix)
        seconds = time.monotonic() - t0
    score = results.get("score", sum(gradescope.question_points(results).values()))   # Otter: no total
    return {"seconds": round(seconds, 1), "peak_mb": round(peak.peak / 2**20),
            "peak_rss_mb": round(peak.peak_rss / 2**20), "score": score,
            "mode": results.get("extra_data", {}).get("sandbox", "otter (in-process)")}


def degenerate_through_zip(name: str, zips: Path) -> list[str]:
    """Every degenerate answer of ``name`` through the zip; the lines of those over their caps."""
    import nbformat

    from autograder import degenerate

    bad = []
    with tempfile.TemporaryDirectory(prefix="gs-degenerate-") as tmp:
        for d in degenerate.degenerates(name):
            stem = f"{name}__{d.question}__{d.name}"
            path = Path(tmp) / f"{stem}.ipynb"
            nbformat.write(degenerate.degenerate_notebook(d), path)
            results = gradescope.grade(zips / f"{name}-autograder.zip", path, Path(tmp) / stem, timeout=900)
            row = {**gradescope.question_points(results),
                   "grading_status": results.get("extra_data", {}).get("grading_status", "")}
            over = degenerate.over_cap({stem: row}, {stem: d})
            bad += over
            print(f"{name} {d.question} {d.name}: {row.get(d.question, 0.0):g} (cap {d.cap:g})"
                  + (" OVER" if over else ""), flush=True)
    return bad


def parity(name: str, zips: Path) -> list[str]:
    """Solution, blank and every mutant of ``name`` through the zip and through ``course grade``;
    one line per submission whose points differ on a question."""
    import json

    import nbformat

    from autograder import mutants

    bad = []
    with tempfile.TemporaryDirectory(prefix="gs-parity-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        nbformat.write(mutants.solution_notebook(name), folder / "solution.ipynb")
        (folder / "blank.ipynb").write_bytes((ROOT / "notebooks" / f"{name}.ipynb").read_bytes())
        for m in mutants.load_mutants(name):
            nbformat.write(mutants.mutant_notebook(m), folder / f"mutant-{m.name}.ipynb")
        mutants.grade_folder(name, folder, Path(tmp) / "course-grade", workers=2)
        for path in sorted(folder.glob("*.ipynb")):
            row = json.loads((Path(tmp) / "course-grade" / "results" / f"{path.stem}.json").read_text())
            expected = {q["question"]: q["points"] for q in row["questions"] if not q["manual"]}
            got = gradescope.question_points(gradescope.grade(zips / f"{name}-autograder.zip", path,
                                                              Path(tmp) / path.stem, timeout=900))
            same = got == expected
            print(f"{name} {path.stem}: {sum(got.values()):g} through the zip, "
                  f"{sum(expected.values()):g} under course grade" + ("" if same else "  DIFFERENT"),
                  flush=True)
            if not same:
                bad.append(f"{name} {path.stem}: zip {got}, course grade {expected}")
    return bad


@contextlib.contextmanager
def cpu_limit(cpus: float):
    """This process (and whatever it starts) limited to ``cpus`` processors, as Gradescope allots
    them: a CPU quota of ``cpus`` x 100 ms per 100 ms in a cgroup of its own (v1 or v2)."""
    from autograder import cgroups

    own = cgroups.own_cgroups()
    quota, period = int(cpus * 100_000), 100_000
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists():
        parent = v1 / own.get("cpu", "/").lstrip("/")
        group = parent / f"gradescope-bench-{os.getpid()}"
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text(str(period))
        (group / "cpu.cfs_quota_us").write_text(str(quota))
    else:
        parent = Path("/sys/fs/cgroup") / own.get("", "/").lstrip("/")
        group = parent / f"gradescope-bench-{os.getpid()}"
        group.mkdir()
        (group / "cpu.max").write_text(f"{quota} {period}")
    (group / "cgroup.procs").write_text(str(os.getpid()))
    try:
        yield
    finally:
        (parent / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def heaviest(name: str, folder: Path, workers: int = 2) -> tuple[str, str, dict]:
    """Every mutant of ``name`` written into ``folder`` and graded with ``course grade``: the stems
    of the one with the largest peak memory (its cgroup's, timings.json) and of the slowest, and
    every row of timings.json by stem."""
    from autograder import mutants

    mutants.write_submissions(name, folder / "class")
    mutants.grade_folder(name, folder / "class", folder / "out", workers=workers)
    timings = json.loads((folder / "out" / "timings.json").read_text())
    rows = {Path(r["file"]).stem: r for r in timings["submissions"]}
    by_memory = max(rows, key=lambda k: (rows[k]["peak_memory_mb"] or 0, rows[k]["seconds"]))
    return by_memory, max(rows, key=lambda k: rows[k]["seconds"]), rows


def limits(names: list[str], zips: Path, dest: Path, cpus: float) -> None:
    """Measure every notebook's solution, heaviest and slowest mutant through its zip at ``cpus``
    processors, namespaces refused; write them into ``dest`` (keeping the other notebooks')."""
    doc = json.loads(dest.read_text()) if dest.exists() else {"notebooks": {}}
    prefix = [sys.executable, str(ROOT / "tests" / "support" / "no_namespaces.py")]
    for name in names:
        with tempfile.TemporaryDirectory(prefix="gs-limits-") as tmp:
            memory, slow, rows = heaviest(name, Path(tmp))
            print(f"{name}: {len(rows)} mutants under course grade; heaviest {memory} "
                  f"({rows[memory]['peak_memory_mb']} MB), slowest {slow} ({rows[slow]['seconds']} s)",
                  flush=True)
            books = {"solution": BUILD / f"{name}-solution.ipynb",
                     "heaviest mutant": Path(tmp) / "class" / f"{memory}.ipynb"}
            if slow != memory:
                books["slowest mutant"] = Path(tmp) / "class" / f"{slow}.ipynb"
            entry = {}
            for role, path in books.items():
                with cpu_limit(cpus):
                    row = measure(zips / f"{name}-autograder.zip", path, prefix)
                entry[role] = {"submission": path.stem, "seconds": row["seconds"],
                               "peak_mb": row["peak_mb"], "score": row["score"], "sandbox": row["mode"]}
                print(f"  {role:<16} {path.stem:<48} {row['seconds']:>7} s {row['peak_mb']:>6} MB "
                      f"score {row['score']}  ({row['mode']})", flush=True)
        doc["notebooks"][name] = entry
        doc.update({"about": "Gradescope's autograder settings, measured by python -m "
                             "benchmarks.gradescope_run --limits: each notebook's solution and its "
                             "heaviest and slowest mutants through the zip's run_autograder, namespaces "
                             "refused (Docker's seccomp), at Gradescope's default CPU share",
                    "cpus": cpus, "measured": date.today().isoformat(),
                    "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared"})
        dest.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gradescope_run",
                                description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*", default=[],
                   help=f"notebooks (default: {', '.join(DEFAULT)}; every notebook with --limits)")
    p.add_argument("--zips", type=Path, default=BUILD, help="folder of NN_name-autograder.zip")
    p.add_argument("--notebook", choices=["solution", "blank"], default="solution")
    p.add_argument("--no-namespaces", action="store_true",
                   help="refuse new namespaces as Docker's default seccomp does "
                        "(tests/support/no_namespaces.py)")
    p.add_argument("--parity", action="store_true",
                   help="the solution, blank and every mutant through the zip and through course grade")
    p.add_argument("--degenerate", action="store_true",
                   help="grade the notebooks' degenerate answers through the zip against their caps")
    p.add_argument("--limits", type=Path, default=None, metavar="FILE",
                   help="measure the solution, heaviest and slowest mutant at --cpus processors into FILE")
    p.add_argument("--cpus", type=float, default=0.5, help="the CPU share for --limits (Gradescope: 0.5)")
    args = p.parse_args(argv)
    if args.limits is not None:
        from instructor import registry
        limits(args.names or registry.notebooks(), args.zips, args.limits, args.cpus)
        return 0
    args.names = args.names or list(DEFAULT)
    if args.parity:
        bad = [line for name in args.names for line in parity(name, args.zips)]
        print("\n".join(bad) if bad else "every submission got the same points per question")
        return 1 if bad else 0
    if args.degenerate:
        bad = [line for name in args.names for line in degenerate_through_zip(name, args.zips)]
        print("\n".join(bad) if bad else "every degenerate answer stayed under its cap")
        return 1 if bad else 0
    print(f"{'notebook':<18} {'zip':<40} {'seconds':>8} {'PSS MB':>7} {'RSS MB':>7} {'score':>6}  sandbox")
    for name in args.names:
        notebook = BUILD / f"{name}-solution.ipynb" if args.notebook == "solution" \
            else ROOT / "notebooks" / f"{name}.ipynb"
        zip_path = args.zips / f"{name}-autograder.zip"
        seccomp = [sys.executable, str(ROOT / "tests" / "support" / "no_namespaces.py")]
        row = measure(zip_path, notebook, seccomp if args.no_namespaces else [])
        print(f"{name:<18} {str(zip_path)[-40:]:<40} {row['seconds']:>8} {row['peak_mb']:>7} "
              f"{row['peak_rss_mb']:>7} {row['score']!s:>6}  {row['mode']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
