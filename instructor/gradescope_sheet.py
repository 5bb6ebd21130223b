"""The Gradescope set-up sheet of one notebook: ``autograder/build/NN_name-gradescope.md``, beside its zip.

Every field Gradescope's pages ask for, filled in for this notebook, so that nobody guesses:

- the *Programming Assignment* (the automatic points): its total points, the zip, the base image
  (OS, version, variant), the *Autograder Settings* (container and timeout), the one file students
  submit, and what *Publish Grades* shows;
- the *Homework / Problem Set* for the questions graded by hand (the PDFs of ``course pdfs``): its
  total points and its outline, one question per page, in notebook order.

The container and the timeout come from measurements, not from a rule of thumb:
``gradescope_limits.json`` beside this module (written by ``python -m benchmarks.gradescope_run
--limits``) holds, per notebook, the seconds and the peak memory (PSS of every process of the run)
of the solution and of the heaviest and slowest mutants through the zip's own ``run_autograder``,
namespaces refused as by Docker's seccomp, at Gradescope's default half CPU. The sheet picks the
smallest container whose memory is at least :data:`MEMORY_MARGIN` times the largest peak, and a
timeout that leaves the engine's own limit (:data:`autograder.gradescope.TIMEOUT`) room to stop a
runaway notebook and still write its results.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from autograder import gradescope
from autograder.assignment import Assignment, load

LIMITS = Path(__file__).with_name("gradescope_limits.json")
# Gradescope's Autograder Settings (the choices its page offers): (CPUs, memory in MB, its label)
CONTAINERS = [(0.5, 768, "0.5 CPU, 0.75GB RAM"), (1.0, 1536, "1.0 CPU, 1.5GB RAM"),
              (2.0, 3072, "2.0 CPU, 3.0GB RAM"), (4.0, 6144, "4.0 CPU, 6.0GB RAM")]
MEMORY_MARGIN = 1.25          # a student's notebook may hold more than the course's own answers
TIME_MARGIN = 3.0             # ... and take longer; Gradescope's machines are busier than ours
DEFAULT_TIMEOUT = 10          # minutes: Gradescope's default; at most 40
# Otter's zip sets the image up with apt and miniforge on Ubuntu (its own Docker grading uses
# ubuntu:22.04); Gradescope's default base image is Ubuntu 22.04, variant Base
BASE_IMAGE = ("Ubuntu", "22.04", "Base")


def num(points: float) -> str:
    """Points as Gradescope's fields take them: ``13``, ``1.5``."""
    return f"{points:g}"


def measured(name: str, limits: Path = LIMITS) -> dict | None:
    """The measurements of ``name`` (and the document's header), or None when it was not measured."""
    try:
        doc = json.loads(limits.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    runs = doc.get("notebooks", {}).get(name)
    return {**doc, "runs": runs} if runs else None


def container(peak_mb: float) -> tuple[float, int, str]:
    """The smallest of Gradescope's containers with MEMORY_MARGIN above ``peak_mb``."""
    for spec in CONTAINERS:
        if spec[1] >= peak_mb * MEMORY_MARGIN:
            return spec
    return CONTAINERS[-1]


def timeout_minutes(seconds: float) -> int:
    """Gradescope's timeout: the default, or more when TIME_MARGIN times the slowest run, or the
    engine's own limit on a notebook and a minute to write the results, needs it."""
    need = max(seconds * TIME_MARGIN, gradescope.TIMEOUT + 60) / 60
    return min(40, max(DEFAULT_TIMEOUT, math.ceil(need)))


def sheet(asg: Assignment, limits: Path = LIMITS) -> str:
    """The sheet's text (Markdown)."""
    name = asg.name
    auto = asg.max_points
    by_hand = [q for q in asg.questions if q.manual]
    hand = sum(q.points for q in by_hand)
    found = measured(name, limits)
    lines = [f"# {name} on Gradescope: the set-up sheet", "",
             "Written by `course build` (instructor/gradescope_sheet.py); the walk-through is in "
             "docs/platforms.md, *Setting it up*. Every value below is for this notebook.", "",
             "## 1. The Programming Assignment (the automatic points)", "",
             "| Gradescope asks | type or pick |", "|---|---|",
             "| *Create Assignment* | **Programming Assignment** |",
             f"| Title | `{name}` (or your own) |",
             f"| Total points | **{num(auto)}**: the automatic points only"
             + (f" ({num(hand)} more are graded by hand in the second assignment: "
                f"{num(auto + hand)} in all)" if by_hand else " (the notebook has no hand-graded question)")
             + " |",
             "| Enable Manual Grading | off" + (" (the hand-graded questions are the second assignment)"
                                               if by_hand else "") + " |",
             f"| Configure Autograder: zip file | `autograder/build/{name}-autograder.zip` |",
             f"| Base image OS / version / variant | **{BASE_IMAGE[0]} / {BASE_IMAGE[1]} / {BASE_IMAGE[2]}** "
             "(the zip's `setup.sh` installs miniforge and the course's pinned packages itself) |"]
    if found:
        runs = found["runs"]
        peak = max(r["peak_mb"] for r in runs.values())
        slowest = max(r["seconds"] for r in runs.values())
        cpus, memory, label = container(peak)
        lines += [f"| Autograder Settings: container | **{label}**"
                  + (" (the default)" if cpus == 0.5 else "")
                  + f": the largest run measured took {peak} MB (at most {memory / MEMORY_MARGIN:.0f} "
                  f"MB fits with a quarter to spare) |",
                  f"| Autograder timeout | **{timeout_minutes(slowest)} minutes**: the slowest run measured "
                  f"took {slowest:g} s at half a CPU; the engine stops a notebook at "
                  f"{gradescope.TIMEOUT:g} s and still reports |"]
    else:
        lines += ["| Autograder Settings: container | not measured yet: run `python -m "
                  "benchmarks.gradescope_run --limits instructor/gradescope_limits.json " + name + "` |",
                  f"| Autograder timeout | {DEFAULT_TIMEOUT} minutes (the engine stops a notebook at "
                  f"{gradescope.TIMEOUT:g} s) |"]
    lines += [f"| What students submit | one file, **`{name}.ipynb`** (on Colab: File > Download > "
              "Download .ipynb); another week's notebook gets 0 and says which to submit |",
              "| Release, due date, late submissions | yours |",
              "| Publishing | each question's result shows once you click **Publish Grades** "
              "(`after_published`); the total shows at once. A row whose code the rules flagged keeps "
              "its per-question points but its total is held at 0: read it and set the score |", ""]
    if by_hand:
        lines += ["## 2. The Homework / Problem Set (the questions graded by hand)", "",
                  f"Total points **{num(hand)}**. Upload each student's PDF from `course pdfs DIR` "
                  "(*Manage Submissions -> Upload Submission*); page 1 is the cover. Outline:", "",
                  "| question | points | page |", "|---|---|---|"]
        lines += [f"| {q.name} | {num(q.points)} | {page} |" for page, q in enumerate(by_hand, 2)]
        lines.append("")
    if found:
        lines += ["## Measured", "",
                  f"`python -m benchmarks.gradescope_run --limits` on {found.get('measured', '?')} "
                  f"({found.get('machine', '?')}), at {found.get('cpus', 0.5):g} CPU (a cgroup quota), "
                  "namespaces refused as by Docker's seccomp; memory is the PSS of every process of "
                  "the run:", "", "| submission | seconds | peak MB | score | sandbox |",
                  "|---|---|---|---|---|"]
        lines += [f"| {role}: `{r['submission']}` | {r['seconds']:g} | {r['peak_mb']} | {r['score']:g} "
                  f"| {r['sandbox']} |" for role, r in sorted(found["runs"].items())]
        lines.append("")
    return "\n".join(lines)


def write(build: Path, name: str) -> Path:
    """``build/NN_name-gradescope.md`` for the notebook ``name``, beside its zip."""
    path = build / f"{name}-gradescope.md"
    path.write_text(sheet(load(name)), encoding="utf-8")
    return path
