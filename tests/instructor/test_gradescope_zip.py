"""The autograder zip that `course build` writes grades with the course's engine, the way Gradescope runs it.

Gradescope unpacks the zip into /autograder/source, puts the submission in /autograder/submission
and runs `run_autograder` as root. Here that layout is made in a temporary folder and the zip's own
run_autograder is run (autograder.gradescope.grade): the engine grades the notebook (its own
sandboxed process, the tests in a judge) and writes results.json. One class of three goes through
it: the 03 solution copied into a new notebook (its otter metadata lost), the blank notebook, and
an attack from inside the notebook (the first answer cell replaces `course.handles.close` and
returns constants, which would earn 7 of 8 on q1 if the tests ran in the student's process). The
blank and the attack are graded under a seccomp filter that
refuses new namespaces as Docker's default profile does (tests/support/no_namespaces.py), so the sandbox's
fallback (`user` mode) is what runs them; the same three notebooks go through `course grade`, and
every question's points must be the same. Notebook 02 is refused, saying so.
"""
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import forgery
import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from autograder import gradescope, shipped
from autograder.assignment import load
from instructor import build, gradescope_zip, publish

NAME = "03_attention"
NO_NAMESPACES = [sys.executable, str(Path(__file__).resolve().parents[1] / "support" / "no_namespaces.py")]

# The first answer cell replaces `course.handles.close` and returns constant weights.
ATTACK = {"base": "blank", "replaces": "Attention", "cells": [forgery.CLOSE_AND_CONSTANTS]}


@pytest.fixture(scope="module")
def autograder_zip() -> Path:
    path = build.BUILD / f"{NAME}-autograder.zip"
    if not path.exists() or f"engine/{gradescope.CONFIG}" not in zipfile.ZipFile(path).namelist():
        build.assign(NAME)                             # missing, or made by an older build
    return path


def copied_into_new_notebook(path: Path, dest: Path) -> Path:
    """What a student gets by copying every cell into a fresh notebook: no otter metadata, new ids."""
    nb = nbformat.read(path, as_version=4)
    fresh = nbformat.v4.new_notebook()
    fresh.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    for i, cell in enumerate(nb.cells):
        cell = nbformat.from_dict(dict(cell))
        cell["id"] = f"copied{i:04d}"
        fresh.cells.append(cell)
    nbformat.write(fresh, dest)
    return dest


def test_zip_carries_the_engine_the_cpu_torch_pins_and_no_otter_grading(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        names = set(z.namelist())
        env = yaml.safe_load(z.read("environment.yml"))
        run = z.read("run_autograder").decode()
        config = json.loads(z.read(f"engine/{gradescope.CONFIG}"))
    package = {f"engine/course/{p.relative_to(build.ROOT / 'course').as_posix()}"
               for p in shipped.package_files(NAME)}
    assert {n for n in names if n.startswith("engine/course/")} == package    # the student package only
    assert "engine/course/__main__.py" not in names
    assert {"engine/autograder/judge.py", "engine/autograder/gradescope.py", "engine/autograder/sandbox.py",
            f"engine/autograder/assignments/{NAME}/assignment.json",
            f"engine/autograder/assignments/{NAME}/tests/q1.py",
            f"engine/autograder/assignments/{NAME}/{NAME}.ipynb"} <= names
    material = [n for n in names if n.startswith("engine/autograder/assignments/")]
    # the grader's answers stay out, but for the named mistakes and the right answers of their
    # pieces, which the judge runs beside a failing student's piece (autograder.mistakes)
    named = {f"engine/autograder/assignments/{NAME}/mutants/{m.name}.py"
             for ms in load(NAME).known_mistakes.values() for m in ms}
    assert {n for n in material if "/mutants/" in n} == named
    assert not any(n.endswith("/degenerate.py") or "/correct/" in n for n in material), "the grader's answers"
    assert not any(n.startswith(("tests/", "files/")) for n in names), "Otter's copy of the tests"
    assert "run_otter.py" not in names and "otter" not in run.split("mamba activate otter-env")[-1]
    assert not any("solution" in n.lower() and n.endswith(".ipynb") for n in names)
    others = {n for n in names if n.startswith("engine/autograder/assignments/") and n.count("/") > 3
              and f"/{NAME}/" not in n}
    assert others and all(n.endswith("/assignment.json") for n in others), "another week's tests"
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert any(p.startswith("otter-grader") for p in pip)          # grader.check's; it sets the image up
    assert any(p.startswith("psutil==") for p in pip)
    # torch: the CPU build, from PyTorch's CPU index (PyPI's torch 2.13.0 is the CUDA build and
    # does not satisfy the pin; the CPU wheel does)
    assert "--extra-index-url=https://download.pytorch.org/whl/cpu" in pip
    torch = [Requirement(p) for p in pip if p.startswith("torch")]
    assert len(torch) == 1 and Version("2.13.0+cpu") in torch[0].specifier
    assert Version("2.13.0") not in torch[0].specifier
    others = [p for p in gradescope_zip.pinned() if not p.startswith("torch")]
    assert set(others) <= set(pip)
    assert config == {"name": NAME, **publish.gradescope().as_json()}           # course.toml's
    assert run.index("export COURSE_QUICK=1") < run.index("cd /autograder/source/engine") \
        < run.index("python -m autograder.gradescope /autograder")


def test_later_weeks_carry_the_stories(tmp_path):
    files = {arc for _, arc in gradescope_zip.engine_files("08_causal")}
    if not (build.ROOT / "data_cache" / "tinystories-4MB.txt").is_file():
        pytest.skip("no stories in data_cache/ here")
    assert "engine/data_cache/tinystories-4MB.txt" in files
    assert not any(arc.startswith("engine/data_cache/") for _, arc in gradescope_zip.engine_files(NAME))


@pytest.fixture(scope="module")
def graded(autograder_zip, tmp_path_factory) -> dict:
    """results.json of the solution copied into a new notebook (namespaces as this machine allows),
    the blank and the attack (namespaces refused), and `course grade`'s results of the same three."""
    tmp = tmp_path_factory.mktemp("gradescope")
    notebooks = {"copied": copied_into_new_notebook(build.BUILD / f"{NAME}-solution.ipynb",
                                                    tmp / "Untitled.ipynb"),
                 "blank": build.NOTEBOOKS / f"{NAME}.ipynb"}
    attack = tmp / "attack.ipynb"
    attack.write_bytes(forgery.attack_notebook(ATTACK))
    notebooks["attack"] = attack
    assert "otter" not in nbformat.read(notebooks["copied"], as_version=4).metadata
    out = {key: gradescope.grade(autograder_zip, nb, tmp / key, name=f"{key}.ipynb",
                                 prefix=[] if key == "copied" else NO_NAMESPACES)
           for key, nb in notebooks.items()}
    folder = tmp / "class"
    folder.mkdir()
    for key, nb in notebooks.items():
        (folder / f"{key}.ipynb").write_bytes(nb.read_bytes())
    done = subprocess.run([sys.executable, "-m", "autograder", str(folder), "--assignment", NAME,
                           "--out", str(tmp / "course-grade"), "--workers", "1", "--no-progress",
                           "--no-similarity"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out["course grade"] = {key: json.loads((tmp / "course-grade" / "results" / f"{key}.json").read_text())
                           for key in notebooks}
    return out


def test_per_question_points_are_course_grades(graded):
    asg = load(NAME)
    for key in ("copied", "blank", "attack"):
        row = graded["course grade"][key]
        expected = {q["question"]: q["points"] for q in row["questions"] if not q["manual"]}
        assert gradescope.question_points(graded[key]) == expected, (key, graded[key]["_log"][-2000:])
        assert graded[key]["score"] == row["total_points_earned"]
        assert graded[key]["extra_data"]["grading_status"] == row["grading_status"]
    scores = gradescope.question_points(graded["copied"])
    assert scores == {q.name: q.max_points for q in asg.auto}           # full marks, metadata lost
    assert set(gradescope.question_points(graded["blank"]).values()) == {0.0}


def test_the_attack_scores_what_its_content_deserves(graded):
    """Through Otter's zip it got 7 of 8 on q1; here the judge's verdict: tampering, no points."""
    results = graded["attack"]
    assert results["score"] == 0.0, results["_log"][-2000:]
    assert results["extra_data"]["grading_status"].startswith("tampering detected")
    status = next(t for t in results["tests"] if t["name"] == gradescope.STATUS_TEST)
    assert status["visibility"] == "visible" and "tampering detected" in status["output"]


def test_namespaces_refused_means_the_user_mode_and_the_results_say_so(graded):
    for key in ("blank", "attack"):
        assert graded[key]["extra_data"]["sandbox"] == "user", graded[key]["_log"][-2000:]
        assert "sandbox mode: user" in graded[key]["output"]
    assert graded["copied"]["extra_data"]["sandbox"] in ("isolated", "user")
    assert f"sandbox mode: {graded['copied']['extra_data']['sandbox']}" in graded["copied"]["output"]


def test_per_question_results_shown_after_publication_with_hints_but_no_hidden_code(graded):
    for key in ("copied", "blank"):
        visibility = {t["name"]: t["visibility"] for t in graded[key]["tests"]}
        assert visibility.pop(gradescope.PUBLIC_TEST) == "visible"
        assert visibility and set(visibility.values()) == {"after_published"}, visibility
    q1 = next(t["output"] for t in graded["blank"]["tests"] if t["name"] == "q1")
    asg = load(NAME)
    cases = next(q for q in asg.auto if q.name == "q1").cases
    hidden = [c for c in cases if c.hidden]
    assert hidden and all(f"hidden test {c.name} " in q1 for c in hidden)
    assert "Hint: For random sizes" in q1 and "Is the softmax over the last index (j)?" in q1
    source = (build.ASSIGNMENTS / NAME / "tests" / "q1.py").read_text()
    for r in (graded["blank"], graded["copied"]):
        assert "def test_" not in r["output"] and all("def test_" not in t["output"] for t in r["tests"])
    for t in graded["blank"]["tests"]:
        for line in source.splitlines():
            line = line.strip()
            if line.startswith(("assert ", "torch.testing")) and len(line) > 30:
                assert line not in t["output"], line


def test_another_weeks_notebook_is_refused_saying_which_it_is(autograder_zip, tmp_path):
    expected = "this is 02_with_position, not 03_attention"
    lost = copied_into_new_notebook(build.NOTEBOOKS / "02_with_position.ipynb", tmp_path / "02.ipynb")
    results = gradescope.grade(autograder_zip, lost, tmp_path / "lost", name="my submission.ipynb")
    assert results["score"] == 0 and expected in results["output"]
    assert [t["visibility"] for t in results["tests"]] == ["visible"]
    assert expected in results["tests"][0]["output"]
    assert "Submit your 03_attention.ipynb" in results["output"]


def test_the_seccomp_filter_refuses_namespaces_for_real():
    """The fallback test's refusal comes from the kernel, not from a switch the grader reads."""
    probe = ("import ctypes; l = ctypes.CDLL(None, use_errno=True); "
             "print(l.unshare(0x00020000), ctypes.get_errno())")
    done = subprocess.run([*NO_NAMESPACES, sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["-1", "1"]                   # EPERM


def test_degenerate_answers_stay_under_their_caps_through_the_zip(autograder_zip, tmp_path):
    """A sample of the degenerate answers (autograder/assignments/NN_name/degenerate.py: uniform weights
    on q1, no mixing on q5),
    graded through the zip: at most their caps, and exactly `course grade`'s points."""
    from autograder import degenerate
    wanted = {("q1", "uniform"), ("q5", "no_mixing")}
    sample = [d for d in degenerate.degenerates(NAME) if (d.question, d.name) in wanted]
    assert len(sample) == len(wanted), [(d.question, d.name) for d in degenerate.degenerates(NAME)]
    folder = tmp_path / "class"
    folder.mkdir()
    rows, written = {}, {}
    for d in sample:
        stem = f"{NAME}__{d.question}__{d.name}"
        nbformat.write(degenerate.degenerate_notebook(d), folder / f"{stem}.ipynb")
        written[stem] = d
        results = gradescope.grade(autograder_zip, folder / f"{stem}.ipynb", tmp_path / stem)
        rows[stem] = {**gradescope.question_points(results),
                      "grading_status": results["extra_data"]["grading_status"]}
    assert not degenerate.over_cap(rows, written), degenerate.over_cap(rows, written)
    done = subprocess.run([sys.executable, "-m", "autograder", str(folder), "--assignment", NAME,
                           "--out", str(tmp_path / "course-grade"), "--workers", "2", "--no-progress",
                           "--no-similarity"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for stem in written:
        row = json.loads((tmp_path / "course-grade" / "results" / f"{stem}.json").read_text())
        assert {q: p for q, p in rows[stem].items() if q != "grading_status"} == \
            {q["question"]: q["points"] for q in row["questions"] if not q["manual"]}, stem


def _row(status: str = "ok"):
    """A graded row of NAME with full marks, one public and one hidden case per question."""
    from autograder.results import CaseResult, Result
    asg = load(NAME)
    half = {q.name: q.max_points / 2 for q in asg.auto}
    cases = [CaseResult(q.name, f"test_{kind}", half[q.name], half[q.name], True, kind == "hidden", "")
             for q in asg.auto for kind in ("public", "hidden")]
    full = {q.name: q.max_points for q in asg.auto}
    return asg, Result("a.ipynb", "a", status, cases, full, tests_ran=True)


def test_a_row_with_flagged_code_is_held_not_published():
    """Gradescope publishes the total it is given, with no one to review a `suspicious
    code` flag first; the per-question points stay (and equal course grade's), the total is held at 0
    and the student is told at once, in a visible test, that the 0 is not their grade."""
    asg, row = _row("suspicious code: scaled_dot_product_attention")
    doc = gradescope.results_json(asg, row, "user")
    assert doc["score"] == 0.0 and doc["extra_data"]["held_points"] == row.total > 0
    assert gradescope.question_points(doc) == {q.name: q.max_points for q in asg.auto}
    held = (f"Your automatic points ({row.total:g} of {asg.max_points:g}) are held for your "
            "instructor's review")
    assert doc["output"].startswith(held) and "suspicious code" in doc["output"]
    status = next(t for t in doc["tests"] if t["name"] == gradescope.STATUS_TEST)
    assert status["visibility"] == "visible" and status["output"].startswith(held)
    assert "that 0 is not your grade" in status["output"] and "held, not lost" in status["output"]
    assert "suspicious code: scaled_dot_product_attention" in status["output"]
    row.status = "ok"
    doc = gradescope.results_json(asg, row, "user")
    assert doc["score"] == row.total and "held" not in doc["output"]
    assert "held_points" not in doc["extra_data"]
    assert gradescope.STATUS_TEST not in {t["name"] for t in doc["tests"]}


@pytest.mark.parametrize("visibility", publish.VISIBILITIES)
@pytest.mark.parametrize("public", ["visible", "after_due_date"])
def test_results_json_carries_course_tomls_visibility(visibility, public):
    """Each scored test at [gradescope] visibility, the public tests' summary at public_visibility,
    the 0-point status test always visible, the stdout the instructor's, and no top-level
    visibility (it would be the default of tests that all have their own)."""
    asg, row = _row("cell timeout in cell 7")
    doc = gradescope.results_json(asg, row, "user", visibility, public_visibility=public)
    seen = {t["name"]: t["visibility"] for t in doc["tests"]}
    assert seen.pop(gradescope.STATUS_TEST) == "visible"
    assert seen.pop(gradescope.PUBLIC_TEST) == public
    assert seen == {q.name: visibility for q in asg.auto}
    assert doc["stdout_visibility"] == "hidden" and "visibility" not in doc
    assert all(v in publish.VISIBILITIES for v in seen.values())


def test_the_runner_writes_the_zips_visibility(autograder_zip, tmp_path):
    """The zip's gradescope.json (course.toml's [gradescope] at build time) is what run_autograder
    writes into results.json: packed here with other settings, graded through the zip."""
    settings = publish.Gradescope(visibility="after_due_date", public_visibility="hidden")
    other = tmp_path / "other.zip"
    gradescope_zip.complete_autograder_zip(build.BUILD / f"{NAME}-otter.zip", other, NAME, settings)
    assert json.loads(zipfile.ZipFile(other).read(f"engine/{gradescope.CONFIG}")) == \
        {"name": NAME, "visibility": "after_due_date", "public_visibility": "hidden"}
    results = gradescope.grade(other, build.NOTEBOOKS / f"{NAME}.ipynb", tmp_path / "run",
                               prefix=NO_NAMESPACES)
    seen = {t["name"]: t["visibility"] for t in results["tests"] if t["name"] != gradescope.STATUS_TEST}
    assert seen == {gradescope.PUBLIC_TEST: "hidden", **{q.name: "after_due_date" for q in load(NAME).auto}}
    assert results["stdout_visibility"] == "hidden"


# What grading never needs and Otter's setup.sh installed on every image build: a browser (Playwright's
# Chromium and its system libraries), LaTeX and pandoc (PDFs), R's build libraries, a compiler, jq,
# Jupyter kernels (the engine runs the notebook itself).
NOT_FOR_GRADING = ("playwright", "chromium", "chrome", "firefox", "webkit", "install-deps", "texlive",
                   "pandoc", "tinytex", "libgit2", "libxml2", "libcurl", "libssl", "build-essential",
                   "jq", "nb_conda_kernels", "r-base")


def test_setup_sh_installs_only_what_grading_needs(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        setup = z.read("setup.sh").decode()
        env = yaml.safe_load(z.read("environment.yml"))
        run = z.read("run_autograder").decode()
    assert setup == gradescope_zip.SETUP_SH
    words = setup.lower().replace("/", " ").split()
    for thing in NOT_FOR_GRADING:
        assert thing not in words and thing not in setup.lower(), thing
    commands = [ln.strip() for ln in setup.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    installs = [c for c in commands
                if c.startswith(("apt-get install", "pip ", "mamba install", "conda install"))]
    assert installs == ["apt-get install -y --no-install-recommends wget ca-certificates"]
    assert f"miniforge/releases/download/{gradescope_zip.MINIFORGE}/" in setup
    assert "mamba env create -f /autograder/source/environment.yml" in commands
    # the environment it creates is the one run_autograder activates, and names no browser either
    assert f"mamba activate {env['name']}" in run
    listed = [d for d in env["dependencies"] if isinstance(d, str)]
    listed += next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert not any(thing in p.lower() for p in listed for thing in ("playwright", "chromium", "pyppeteer"))
    done = subprocess.run(["bash", "-n"], input=setup, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_only_the_way_to_the_engine_stays_open_to_student_code(tmp_path):
    """Gradescope's submission_metadata.json (earlier submissions' results) and anything
    else in /autograder but the engine are closed to the sandbox's uid while the notebook runs."""
    import os
    root = tmp_path / "autograder"
    for sub in ("source/engine/autograder", "submission", "results"):
        (root / sub).mkdir(parents=True)
    for f in ("submission_metadata.json", "source/run_autograder", "source/setup.sh",
              "source/engine/autograder/test.py"):
        (root / f).write_text("secret")
        os.chmod(root / f, 0o644)
    closed = gradescope.closed_to_student(root)
    assert {p.relative_to(root).as_posix() for p in closed} == {
        "submission_metadata.json", "source/run_autograder", "source/setup.sh", "submission", "results"}
    if os.geteuid() != 0:
        return
    before = gradescope.close_to_others(closed)
    try:
        probe = ("import os, sys; os.setgid(65534); os.setuid(65534)\n"
                 "for p in sys.argv[1:]:\n"
                 "    try: open(p).read(); print('read', p)\n"
                 "    except PermissionError: pass\n")
        done = subprocess.run([sys.executable, "-c", probe, str(root / "submission_metadata.json"),
                               str(root / "source/setup.sh")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)
    finally:
        for path, mode in before.items():
            os.chmod(path, mode)


def test_only_a_regular_notebook_file_is_picked(tmp_path):
    """A folder named like a notebook, or a link (root would read what it points at,
    e.g. a test), is not a submission; exactly one file is graded."""
    sub = tmp_path / "submission"
    (sub / f"{NAME}.ipynb").mkdir(parents=True)
    (sub / f"{NAME}.ipynb" / "inner.ipynb").write_text("{}")
    (sub / "link.ipynb").symlink_to(tmp_path / "elsewhere.ipynb")
    (tmp_path / "elsewhere.ipynb").write_text("{}")
    (sub / "linked_folder").symlink_to(tmp_path)
    picked = gradescope.pick_notebook(sub, NAME)
    assert picked == sub / f"{NAME}.ipynb" / "inner.ipynb"      # a real file inside, not the folder
    (sub / f"{NAME}.ipynb" / "inner.ipynb").unlink()
    assert gradescope.pick_notebook(sub, NAME) is None
    (sub / "mine.ipynb").write_text("{}")
    assert gradescope.pick_notebook(sub, NAME) == sub / "mine.ipynb"
