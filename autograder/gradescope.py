"""Gradescope: the autograder zip grades with the course's own engine, and a local imitation for tests.

In the container (``python -m autograder.gradescope /autograder``, the zip's ``run_autograder``)
:func:`run` grades the one notebook in /autograder/submission exactly as ``course grade`` does (the
notebook in its own sandboxed process answering requests, the tests in a judge process, the rules
read statically: :func:`autograder.api.grade`) and writes /autograder/results/results.json in
Gradescope's format from that verdict. Otter is not on the grading path: it stays the student's
``grader.check`` (and the zip's ``setup.sh`` that installs the environment).

``course build`` (:func:`instructor.gradescope_zip.complete_autograder_zip`) puts the engine at
``/autograder/source/engine``: ``autograder/*.py``, this week's grading material
(``autograder/assignments/NN_name/``: ``assignment.json``, the tests, the blank notebook), the ``course``
package as this week's release ships it, the stories text for the notebooks that train on it, and
``gradescope.json`` (the assignment's name and course.toml's ``[gradescope]`` visibility of the
per-question results and of the public tests, written into each test of results.json).

The sandbox takes the strongest mode the container allows (:func:`autograder.sandbox.detect_mode`):
Gradescope runs ``run_autograder`` as root, and where Docker's default seccomp profile refuses new
namespaces that is the ``user`` mode: the notebook runs as an unprivileged uid with resource limits
and a private scratch folder, and the grading material, the submission folder and the results are
closed to that uid by file permissions. Before grading, :func:`run` makes the folders on the way to
Python traversable by other users (``o+x`` only, no listing; Otter's image keeps Python in
/root/miniforge3) so that the ``user`` mode can run at all, and closes the rest of
/autograder/source, the submission folder and the results to other users (all put back as they
were once the notebook is graded). results.json says which mode ran (top-level ``output`` and ``extra_data``).

:func:`grade` imitates Gradescope here (for the tests and the benchmark): it makes the layout
(/autograder/source, submission, results) in a scratch folder and runs the zip's own
``run_autograder`` there, with two changes only: /autograder is the scratch folder, and ``python``
is this interpreter (no mamba environment to activate). ``prefix`` runs it under a command (the
tests use tests/support/no_namespaces.py to refuse namespaces as Docker's seccomp does).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

CONTAINER_ONLY = ("eval ", "mamba ", "export PATH=")     # lines of run_autograder for Gradescope's image
CONFIG = "gradescope.json"                              # beside autograder/ in the engine folder
ENGINE = "engine"                                       # /autograder/source/engine
TIMEOUT = 480.0                                         # seconds for the notebook (Gradescope stops at 600)
STATUS_TEST = "Grading status"
# The stdout (the engine's log, with the container's paths) is for the instructor only, Gradescope's
# default; what students see is in results.json's "output" fields.
STDOUT_VISIBILITY = "hidden"
PUBLIC_TEST = "Public Tests"


# ---------------------------------------------------------------- results.json from the verdict

def _num(x: float) -> float:
    return float(round(x, 4))


def _case_lines(cases: list) -> list[str]:
    """One question's cases as the student may see them: public failures in full, hidden ones as a hint."""
    lines = []
    for c in cases:
        kind = "hidden test" if c.hidden else "test"
        lines.append(f"{kind} {c.name} ({_num(c.max_points)} pt): {'passed' if c.passed else 'failed'}")
        if not c.passed and c.message:
            text = c.message.strip().splitlines()        # a hidden case's message is its hint
            lines += ["    " + ("Hint: " if c.hidden and i == 0 else "") + m for i, m in enumerate(text)]
    return lines


def wrong_notebook_text(what: str, name: str) -> str:
    """What a student sees for another week's notebook (``what``: its status's detail, which week it is)."""
    return (f"Wrong notebook: {what.strip()}. Nothing was graded. Submit your {name}.ipynb to this "
            "assignment (and the other notebook to its own assignment, if it has one).")


def results_json(asg, r, mode: str, visibility: str = "after_published", notes: Sequence[str] = (),
                 public_visibility: str = "visible") -> dict:
    """Gradescope's results.json for one graded row ``r`` (:class:`autograder.results.Result`) of
    assignment ``asg``: one test per automatically graded question with its cases (hidden ones as
    pass/fail and the hint, never their code) at ``visibility``, a summary of the public tests at
    ``public_visibility``, a visible test for a row whose status is not ``ok``, the total, and the
    sandbox mode. The stdout (the engine's log, paths of the container) stays the instructor's."""
    from . import report, sandbox
    from .status import Status
    said = r.grading
    mode_line = (f"Graded by the course's engine: your notebook ran in a sandboxed process of its own "
                 f"(sandbox mode: {mode}) and the tests ran in a separate judge process.")
    extra: dict = {"sandbox": mode, "grading_status": r.status, "engine": "course"}
    if r.mistakes:
        extra["mistakes"] = [m.as_dict() for m in r.mistakes]
    if said.kind is Status.WRONG_NOTEBOOK:
        text = wrong_notebook_text(said.detail, asg.name)
        return {"score": 0.0, "output": "\n\n".join([text, *notes]), "extra_data": extra,
                "stdout_visibility": STDOUT_VISIBILITY,
                "tests": [{"name": "Wrong notebook", "score": 0.0, "max_score": 0.0, "status": "failed",
                           "visibility": "visible", "output": text}]}
    tests = []
    total = _num(r.total)
    held = held_text(total, sum(_num(q.max_points) for q in asg.auto)) if said.kind.flagged else ""
    if not said.ok:
        # always visible: a 0-point test students see at once (Gradescope's spec suggests exactly
        # this for pre-submission checks), so a held row says so whatever the scored tests' setting
        lines = [held] if held else []
        lines.append(r.status)
        lines += [f"cell {e.get('cell')}: {str(e.get('error', e.get('kind', 'error')))[:300]}"
                  for e in r.cell_errors[:report.CELL_ERRORS_SHOWN] if isinstance(e, dict)]
        tests.append({"name": STATUS_TEST, "score": 0.0, "max_score": 0.0, "status": "failed",
                      "visibility": "visible", "output": "\n".join(lines)})
    public = [c for c in r.cases if not c.hidden]
    tests.append({"name": PUBLIC_TEST, "score": 0.0, "max_score": 0.0,
                  "status": "passed" if all(c.passed for c in public) else "failed",
                  "visibility": public_visibility, "output": "\n".join(_case_lines(public))})
    for q in asg.auto:
        cases = [c for c in r.cases if c.question == q.name]
        score = _num(r.question_points.get(q.name, 0.0))
        named = [f"The mistake, named: {m.sentence}." for m in r.mistakes if m.question == q.name]
        tests.append({"name": q.name, "score": score, "max_score": _num(q.max_points),
                      "status": "passed" if score >= _num(q.max_points) else "failed",
                      "visibility": visibility, "output": "\n".join([*named, *_case_lines(cases)])})
    output = [mode_line, sandbox.MODE_NOTES[mode], *notes]
    if not said.ok:
        output.insert(0, f"Grading note: {r.status}")
    score = total
    if held:
        # results.json's score is the total Gradescope shows and puts in its gradebook, with no one
        # to review the flag first as `course grade`'s report asks; a score cannot say "held", so it
        # is 0 and the text says that this 0 is not the student's grade.
        output.insert(0, held)
        extra["held_points"] = score
        score = 0.0
    return {"score": score, "output": "\n\n".join(output), "stdout_visibility": STDOUT_VISIBILITY,
            "tests": tests, "extra_data": extra}


def held_text(points: float, out_of: float) -> str:
    """What a held row tells the student (and the instructor, who sees every test)."""
    return (f"Your automatic points ({points:g} of {out_of:g}) are held for your instructor's review: "
            "the grader found code the course's rules do not allow (see 'Grading status'). While they "
            "are held, Gradescope's total for this submission says 0: that 0 is not your grade, your "
            "points are held, not lost. Your instructor will read the code and enter your points; or "
            "remove that code and submit again to be graded automatically.")


# ---------------------------------------------------------------- in the container

def open_the_way(paths: list[Path]) -> dict[str, int]:
    """Folders on the way to ``paths`` that other users cannot enter, made enterable (``o+x``: they
    can pass through, not list them). Returns {folder: its mode before}."""
    from . import sandbox
    before = {}
    for p in sandbox.reach_plan(paths):
        before[p] = stat.S_IMODE(os.stat(p).st_mode)
        os.chmod(p, before[p] | 0o001)
    return before


def close_to_others(paths: list[Path]) -> dict[str, int]:
    """``paths`` closed to everyone but their owner (root); returns {path: its mode before}."""
    before = {}
    for p in paths:
        if p.exists() and not p.is_symlink():
            before[str(p)] = stat.S_IMODE(os.stat(p).st_mode)
            os.chmod(p, before[str(p)] & 0o700)
    return before


def closed_to_student(root: Path) -> list[Path]:
    """What in /autograder student code has no business reading: everything but the engine (the rest
    of source/, the submission folder: the grader runs a private copy, the results, and whatever else
    Gradescope puts there, e.g. submission_metadata.json with earlier submissions' results)."""
    return ([p for p in (root / "source").iterdir() if p.name != ENGINE]
            + [p for p in root.iterdir() if p.name != "source"])


def pick_notebook(folder: Path, name: str) -> Path | None:
    """The submitted notebook: ``NN_name.ipynb`` if there is one, else the first by name. Only regular
    files count, reached without a symbolic link (root reads them: a link could point at the tests),
    and exactly one is graded (a folder named like a notebook is not a notebook)."""
    found = []
    for top, dirs, files in os.walk(folder):               # does not follow links to folders
        dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
        for f in files:
            p = Path(top) / f
            if f.endswith(".ipynb") and stat.S_ISREG(os.lstat(p).st_mode):
                found.append(p)
    found.sort()
    exact = [p for p in found if p.name == f"{name}.ipynb"]
    return next(iter(exact or found), None)


def _write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _grade(notebook: Path, name: str, config: dict):
    """``course grade``'s engine on the one notebook, into a private folder of its own."""
    from . import api
    from .config import GradeConfig
    out = Path(tempfile.mkdtemp(prefix="course-gradescope-"))
    os.chmod(out, 0o700)
    return api.grade(GradeConfig(submissions=(notebook,), assignment=name, out=out, workers=1,
                                 timeout=config.get("timeout", TIMEOUT), progress=False, similarity=False))


def run(root: Path) -> int:
    """Grade /autograder/submission with the engine and write /autograder/results/results.json."""
    from . import api, assignment
    from .config import GradingError
    engine = Path(__file__).resolve().parent.parent
    config = json.loads((engine / CONFIG).read_text())
    name = config["name"]
    results = root / "results" / "results.json"
    notebook = pick_notebook(root / "submission", name)
    if notebook is None:
        text = f"No notebook was submitted: upload your {name}.ipynb."
        _write(results, {"score": 0.0, "output": text, "tests": [
            {"name": STATUS_TEST, "score": 0.0, "max_score": 0.0, "status": "failed",
             "visibility": "visible", "output": text}]})
        return 0
    restore: dict[str, int] = {}
    try:
        if os.geteuid() == 0:
            needed = [Path(p) for p in sys.path if p and os.path.exists(p)]
            needed += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve(), engine]
            restore = open_the_way(needed)
            if restore:
                print("gradescope: made enterable by other users (o+x) while grading: " + ", ".join(restore))
            restore.update(close_to_others(closed_to_student(root)))
        try:
            outcome = _grade(notebook, name, config)
            api.say(outcome)
        except GradingError as exc:                  # the notebook could not be read
            print(f"gradescope: {exc}", file=sys.stderr)
            outcome = None
    finally:
        for path, mode in restore.items():           # as it was (this matters only outside a container)
            os.chmod(path, mode)
    asg = assignment.load(name)
    if outcome is None or not outcome.results:
        text = "The notebook could not be read: upload the .ipynb file that Jupyter or Colab saved."
        _write(results, {"score": 0.0, "output": text, "tests": [
            {"name": STATUS_TEST, "score": 0.0, "max_score": 0.0, "status": "failed",
             "visibility": "visible", "output": text}]})
        return 0
    api.warn(outcome)
    doc = results_json(asg, outcome.results[0], outcome.mode, config.get("visibility", "after_published"),
                       public_visibility=config.get("public_visibility", "visible"))
    doc["extra_data"]["cgroups"] = outcome.meta.get("cgroups", "none")
    _write(results, doc)
    print(f"gradescope: {doc['score']} points, sandbox {outcome.mode}, status {outcome.results[0].status}")
    shutil.rmtree(outcome.out, ignore_errors=True)
    return 0


# ---------------------------------------------------------------- Gradescope imitated here

def local_script(text: str, root: Path) -> str:
    """The zip's ``run_autograder`` made to run here: /autograder -> ``root``, this Python, and no
    lines that set up Gradescope's mamba environment."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(CONTAINER_ONLY)]
    text = "\n".join(lines).replace("/autograder", str(root)) + "\n"
    return re.sub(r"(?m)^(\s*)python ", lambda m: m.group(1) + shlex.quote(sys.executable) + " ", text)


def layout(autograder_zip: Path, notebook: Path, scratch: Path, name: str | None = None) -> Path:
    """Gradescope's /autograder (source, submission, results) in ``scratch``; returns it."""
    root = scratch / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    (root / "submission" / (name or notebook.name)).write_bytes(notebook.read_bytes())
    # Gradescope's record of the submission and the earlier ones (their results among them)
    (root / "submission_metadata.json").write_text(json.dumps(
        {"id": 1, "assignment": {"title": notebook.stem}, "previous_submissions": []}))
    runner = root / "source" / "run_otter.py"          # Otter's own zip (the benchmarks compare with it)
    if runner.exists():
        runner.write_text(runner.read_text().replace('"/autograder"', repr(str(root))))
    return root


def grade(autograder_zip: Path, notebook: Path, scratch: Path, timeout: float = 600,
          name: str | None = None, prefix: Sequence[str] = ()) -> dict:
    """Gradescope's results.json for ``notebook`` (submitted as ``name``, default its file name)
    graded with ``autograder_zip``, run through the zip's ``run_autograder`` (under ``prefix``)."""
    root = layout(autograder_zip, notebook, scratch, name)
    script = local_script((root / "source" / "run_autograder").read_text(), root)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COURSE_STORIES_FILE")}
    done = subprocess.run([*prefix, "bash", "-c", script], cwd=scratch, capture_output=True,
                          text=True, timeout=timeout, env=env)
    results = root / "results" / "results.json"
    if not results.exists():
        raise RuntimeError(f"run_autograder wrote no results.json (exit {done.returncode}):\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    out = json.loads(results.read_text())
    out["_log"] = done.stdout[-4000:] + done.stderr[-4000:]
    return out


def question_points(results: dict) -> dict[str, float]:
    """{question: points earned} from results.json (one test per question, besides the summaries)."""
    return {t["name"]: float(t["score"]) for t in results["tests"]
            if t["name"] not in (PUBLIC_TEST, STATUS_TEST, "Wrong notebook")}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m autograder.gradescope AUTOGRADER_DIR", file=sys.stderr)
        return 2
    return run(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
