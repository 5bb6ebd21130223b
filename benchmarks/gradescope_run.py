"""Time and peak memory of one submission through a Gradescope zip's ``run_autograder``.

    python -m benchmarks.gradescope_run [NN_name ...] [--zips DIR] [--notebook solution|blank]
    python -m benchmarks.gradescope_run NN_name ... --degenerate
    python -m benchmarks.gradescope_run NN_name ... --parity

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
more (tests/test_gradescope_zip.py runs a sample of them). With ``--parity`` it grades the solution,
the blank and every mutant (autograder/assignments/NN_name/mutants/) through the zip and through
``course grade`` and prints every submission whose points differ on any question; exit status 1 if one does.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gradescope_run",
                                description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*", default=list(DEFAULT))
    p.add_argument("--zips", type=Path, default=BUILD, help="folder of NN_name-autograder.zip")
    p.add_argument("--notebook", choices=["solution", "blank"], default="solution")
    p.add_argument("--no-namespaces", action="store_true",
                   help="refuse new namespaces as Docker's default seccomp does (tests/no_namespaces.py)")
    p.add_argument("--parity", action="store_true",
                   help="the solution, blank and every mutant through the zip and through course grade")
    p.add_argument("--degenerate", action="store_true",
                   help="grade the notebooks' degenerate answers through the zip against their caps")
    args = p.parse_args(argv)
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
        row = measure(zip_path, notebook, [sys.executable, str(ROOT / "tests" / "no_namespaces.py")]
                      if args.no_namespaces else [])
        print(f"{name:<18} {str(zip_path)[-40:]:<40} {row['seconds']:>8} {row['peak_mb']:>7} "
              f"{row['peak_rss_mb']:>7} {row['score']!s:>6}  {row['mode']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
