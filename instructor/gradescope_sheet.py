"""The Gradescope set-up sheet of one notebook: ``autograder/build/NN_name-gradescope.md``, beside its zip.

Every field Gradescope's pages ask for, filled in for this notebook, so that nobody guesses:

- the *Programming Assignment* (the automatic points): its total points, the zip, the base image
  (OS, version, variant), the *Autograder Settings* (container and timeout), the one file students
  submit, and what students see of the results and of their total under course.toml's
  ``[gradescope]`` visibility (:func:`student_view`), a held row's included;
- the *Homework / Problem Set* for the questions graded by hand (the PDFs of ``course pdfs``): its
  total points, and its outline: the one ``course pdfs`` writes for the class's PDFs
  (``outline.csv``), here as it is when every answer fits its page, in notebook order.

The container and the timeout come from measurements, not from a rule of thumb:
``gradescope_limits.json`` beside this module (written by ``python -m benchmarks.gradescope_run
--limits``) holds, per notebook, the seconds and the peak memory (PSS of every process of the run)
of the solution and of the heaviest and slowest mutants through the zip's own ``run_autograder``,
namespaces refused as by Docker's seccomp, at Gradescope's default half CPU. The sheet picks the
smallest container whose memory is at least :data:`MEMORY_MARGIN` times the largest peak, and a
timeout that leaves the engine's own limit (:data:`autograder.gradescope.TIMEOUT`) room to stop a
runaway notebook and still write its results.

What the sheet says of Gradescope, and where Gradescope says it (checked against its own pages;
"spec" is its autograder specification, gradescope-autograders.readthedocs.io/en/latest/specs/,
the source of gradescope/autograder_samples docs/specs.md):

- the zip holds ``setup.sh`` and ``run_autograder`` at its root; setup.sh installs the dependencies
  on Gradescope's Ubuntu image: spec, first section;
- the default base image is Ubuntu 22.04, *Base* being the OS as installed plus what Gradescope's
  platform needs: .../en/latest/base_images/;
- manual grading of a programming assignment can be turned on when it is created or afterwards,
  from its settings: .../en/latest/manual_grading/;
- half a virtual CPU and 768 MB by default, more from *Autograder Settings*; a 10-minute timeout by
  default, at most 40: .../en/latest/troubleshooting/. The four container labels are the choices
  of that settings page itself; Gradescope's docs do not list them;
- results.json's top-level ``score`` overrides the sum of the tests' scores: spec, *Output format*;
- a test's ``visibility``: ``hidden`` never shown, ``after_due_date`` once the due date has passed,
  ``after_published`` once the grades are published (*Review Grades*), ``visible`` (the default) at
  once; while any test is not shown yet, students do not see their total, except that ``hidden``
  tests do not count (they are meant for tests worth no points); instructors see every test:
  spec, *Controlling Test Case Visibility*;
- the stdout is shown to instructors only unless ``stdout_visibility`` says otherwise: spec,
  *Controlling standard output visibility*.

Everything else on the sheet (the file students submit, another week's notebook, the held row, the
measurements) is the course's own engine and benchmark, not Gradescope.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from autograder import gradescope
from autograder.assignment import Assignment, load

from . import gradescope_pdf, publish

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


# When students see a test, by its visibility (the spec, "Controlling Test Case Visibility").
SHOWN = {"visible": "at once", "after_due_date": "once the due date has passed",
         "after_published": "once you publish the grades (Review Grades -> Publish Grades)",
         "hidden": "never"}
WAITS = ("after_due_date", "after_published")        # the values that hide the total while they wait


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


def total_shown(settings: publish.Gradescope) -> str:
    """When students see their total under ``settings``, as Gradescope decides it: not while a test
    they cannot see yet is not ``hidden`` (the 0-point tests count too)."""
    waits = {settings.visibility, settings.public_visibility} & set(WAITS)
    if not waits:
        return "at once"
    if len(waits) == 2:
        return "once the due date has passed and you have published the grades"
    return SHOWN[waits.pop()]


def student_view(settings: publish.Gradescope, out_of: float) -> list[str]:
    """The sheet's rows on what students see under ``settings`` (course.toml's [gradescope]), a held
    row's included (``out_of``: the automatic points), in Gradescope's terms."""
    total = total_shown(settings)
    setting = f'`visibility = "{settings.visibility}"`, `public_visibility = "{settings.public_visibility}"`'
    rows = [f"| What students see (course.toml `[gradescope]`: {setting}) | each question's test, its "
            f"points and its cases: **{SHOWN[settings.visibility]}**; the public tests' summary (0 points): "
            f"**{SHOWN[settings.public_visibility]}**; *Grading status* and *Wrong notebook* (0 points): "
            f"at once; **the total: {total}**. Gradescope hides the total while any test students cannot "
            "see yet is not `hidden`; you always see everything |"]
    if settings.visibility == "hidden":
        rows.append("| `hidden` scored tests | Gradescope means `hidden` for tests worth no points: students "
                    "see their total but never which question earned it |")
    if total == "at once":
        when = "students see the total of 0 at once, beside that sentence"
    elif "publish" in total:
        when = "read flagged rows before you publish the grades: until then students see no total"
    else:
        when = "read flagged rows before the due date: until then students see no total"
    rows.append("| A row whose code the rules flagged (`suspicious code`) | its results.json total is 0 "
                "(`score`, which overrides the tests' sum), the points are in `extra_data.held_points` "
                f"and at the top of its output (\"Your automatic points (... of {num(out_of)}) are held "
                "for your instructor's review ... that 0 is not your grade\"); its per-question points stay. "
                "Students see that sentence at once, in *Grading status*; " + when + ". To give the "
                "points, grade that submission by hand: turn on *Enable Manual Grading* (the assignment's "
                "settings, also afterwards) |")
    return rows


def sheet(asg: Assignment, limits: Path = LIMITS, settings: publish.Gradescope | None = None) -> str:
    """The sheet's text (Markdown), for course.toml's [gradescope] visibility unless ``settings``."""
    settings = settings or publish.gradescope()
    name = asg.name
    auto = asg.max_points
    by_hand = [q for q in asg.questions if q.manual]
    found = measured(name, limits)
    lines = [f"# {name} on Gradescope: the set-up sheet", "",
             "Written by `course build` (instructor/gradescope_sheet.py); the walk-through is in "
             "docs/platforms.md, *Setting it up*. Every value below is for this notebook.", "",
             "## 1. The Programming Assignment (the automatic points)", "",
             "| Gradescope asks | type or pick |", "|---|---|",
             *_assignment_rows(name, auto, by_hand),
             *(_measured_rows(found) if found else _unmeasured_rows(name)),
             f"| What students submit | one file, **`{name}.ipynb`** (on Colab: File > Download > "
             "Download .ipynb); another week's notebook gets 0 and says which to submit |",
             "| Release, due date, late submissions | yours |",
             *student_view(settings, auto), ""]
    if by_hand:
        lines += _hand_graded(by_hand)
    if found:
        lines += _measurements(found)
    return "\n".join(lines)


def _assignment_rows(name: str, auto: float, by_hand: list) -> list[str]:
    """Section 1's first rows: the assignment, its points (the automatic ones only) and its zip."""
    hand = sum(q.points for q in by_hand)
    return [
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


def _measured_rows(found: dict) -> list[str]:
    """The container and the timeout, from the largest and the slowest run measured."""
    runs = found["runs"]
    peak = max(r["peak_mb"] for r in runs.values())
    slowest = max(r["seconds"] for r in runs.values())
    cpus, memory, label = container(peak)
    return [f"| Autograder Settings: container | **{label}**"
            + (" (the default)" if cpus == 0.5 else "")
            + f": the largest run measured took {peak} MB (at most {memory / MEMORY_MARGIN:.0f} "
            f"MB fits with a quarter to spare) |",
            f"| Autograder timeout | **{timeout_minutes(slowest)} minutes**: the slowest run measured "
            f"took {slowest:g} s at half a CPU; the engine stops a notebook at "
            f"{gradescope.TIMEOUT:g} s and still reports |"]


def _unmeasured_rows(name: str) -> list[str]:
    """The container and the timeout of a notebook not measured yet: how to measure it."""
    return ["| Autograder Settings: container | not measured yet: run `python -m "
            "benchmarks.gradescope_run --limits instructor/gradescope_limits.json " + name + "` |",
            f"| Autograder timeout | {DEFAULT_TIMEOUT} minutes (the engine stops a notebook at "
            f"{gradescope.TIMEOUT:g} s) |"]


def _hand_graded(by_hand: list) -> list[str]:
    """Section 2: the assignment of the questions graded by hand, a page of the PDF each."""
    hand = sum(q.points for q in by_hand)
    return ["## 2. The Homework / Problem Set (the questions graded by hand)", "",
            f"Total points **{num(hand)}**. Upload each student's PDF from `course pdfs DIR` "
            "(*Manage Submissions -> Upload Submission*); page 1 is the cover. Outline: the one "
            "`course pdfs` writes, `outline.csv` beside the PDFs (and its last line on the terminal). "
            "Every PDF of the class has each question on the same pages: as many as the class's "
            "longest answer to it takes, at most "
            f"{gradescope_pdf.QUESTION_PAGES} (a shorter answer is followed by blank pages). When "
            "every answer fits its page, the outline is:", "",
            "| question | points | page |", "|---|---|---|",
            *[f"| {q.name} | {num(q.points)} | {page} |" for page, q in enumerate(by_hand, 2)], ""]


def _measurements(found: dict) -> list[str]:
    """The runs measured (instructor/gradescope_limits.json), one row each."""
    return ["## Measured", "",
            f"`python -m benchmarks.gradescope_run --limits` on {found.get('measured', '?')} "
            f"({found.get('machine', '?')}), at {found.get('cpus', 0.5):g} CPU (a cgroup quota), "
            "namespaces refused as by Docker's seccomp; memory is the PSS of every process of "
            "the run:", "", "| submission | seconds | peak MB | score | sandbox |",
            "|---|---|---|---|---|",
            *[f"| {role}: `{r['submission']}` | {r['seconds']:g} | {r['peak_mb']} | {r['score']:g} "
              f"| {r['sandbox']} |" for role, r in sorted(found["runs"].items())], ""]


def write(build: Path, name: str, settings: publish.Gradescope | None = None) -> Path:
    """``build/NN_name-gradescope.md`` for the notebook ``name``, beside its zip."""
    path = build / f"{name}-gradescope.md"
    path.write_text(sheet(load(name), settings=settings), encoding="utf-8")
    return path
