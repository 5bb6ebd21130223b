"""A publish of an output folder killed (SIGKILL: no clean-up at all) at any rename, link, symlink,
unlink, rmdir and write it makes leaves OUT reading the old grading or the new one, whole, hand
grades included: through the readers' function (:func:`autograder.outdir.resolve`) and through plain
reads of OUT's documented names (what ``cp -r`` or a script sees). The next publish then succeeds and
removes what the killed one left. Every kill point, not a sample: strace's fault injection kills the
publishing process at the N-th call of each such system call, for every N.

The real commands run once, to make the two gradings: ``course grade --cache`` into a folder graded
before, with hand grades merged (the ledger holds a hand grade that the folder's files do not show
yet, and the run has no ``--gradebook`` this time: the new grading differs from the old in
grades.csv, the feedback, manual.csv and the LMS files, the import and lms.json gone). Each kill then
costs a fraction of a second: ``swap_driver.py`` (tests/support) publishes a copy of that re-grade's
grading, as its staging folder, into a copy of the folder as it was (what ``course grade`` does once
everything is written: ``autograder.api._publish``), or merges a filled-in CSV (``course manual``,
whose copy of OUT's grading and publish are ``outdir.editing``'s). The driver imports everything
first and marks where its start-up ends; strace counts each system call per process and per call,
so the N-th call after the mark is the (calls before it + N)-th. After each kill, the next run's
own steps (``outdir.begin``, then the publish) run in this process.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import hostile
import lms_samples
import mounts
import pytest
import swap_driver
from test_grade_lms import fill_by_column, with_answer

from autograder import api, outdir

pytestmark = [pytest.mark.e2e, mounts.needs_strace]

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(swap_driver.__file__)
NAMES = [f"student{k}_1010{k}_2000{k}_00_toy.ipynb" for k in range(2)]
# the system calls a kill lands on, by kind (the C library may use any of each family)
KINDS = {"rename": ["rename", "renameat", "renameat2"], "link": ["link", "linkat", "symlink", "symlinkat"],
         "unlink": ["unlink", "unlinkat", "rmdir"], "write": ["write", "pwrite64", "writev", "pwritev"]}
MARK = "access,faccessat,faccessat2"       # the driver's mark: a failing access of its MARKER
# seconds and dates in these: the same grading, the same bytes once the digits are masked
TIMED = {"report.html", "timings.json"}
counted: dict[str, dict[str, int]] = {}


def course(*args: str) -> list[str]:
    return [sys.executable, "-m", "course", *args]


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=600,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))


def masked(name: str, data: bytes) -> bytes:
    if Path(name).name in TIMED:
        return re.sub(rb"\d+", b"0", data)
    if Path(name).parent.name == "results":      # measured: differs when a row is run again
        return re.sub(rb'"peak_memory_mb": [0-9.]+', b'"peak_memory_mb": 0', data)
    return data


def plain_view(out: Path) -> dict[str, bytes]:
    """OUT by its documented names, through its links, as a script or ``cp -r`` reads it."""
    found = {}
    for folder, dirs, files in os.walk(out, followlinks=True):
        if Path(folder) == out:
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("cache", "shards")]
            files = [f for f in files if not f.startswith((".", "hand_grades")) and os.path.exists(out / f)]
        for f in files:
            rel = (Path(folder) / f).relative_to(out).as_posix()
            found[rel] = masked(rel, (Path(folder) / f).read_bytes())
    return dict(sorted(found.items()))


def reader_view(out: Path) -> dict[str, bytes]:
    """OUT's grading as every reader in the code reads it: from the folder the pointer names."""
    where = outdir.resolve(out)
    if where == out:                 # no pointer: the grading's files are OUT's own
        return plain_view(out)
    return {p.relative_to(where).as_posix(): masked(p.relative_to(where).as_posix(), p.read_bytes())
            for p in sorted(where.rglob("*")) if p.is_file()}


def views(out: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    return plain_view(out), reader_view(out)


def differing(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def place(state: Path, work: Path) -> Path:
    """A fresh copy of a prepared folder (real copies: the ledger is written in place), always at
    the same path, so that a file naming OUT reads the same in every copy."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(state, work, symlinks=True)
    return work


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    """The real commands, once: a folder graded (with --gradebook) and hand-graded, then graded
    again; from them the driver's two prepared folders, and each case's old and new views."""
    tmp = tmp_path_factory.mktemp("kill")
    os.chmod(tmp, 0o755)
    subs = tmp / "class"
    subs.mkdir()
    for k, name in enumerate(NAMES):
        (subs / name).write_bytes(with_answer(f"The loss falls ({k}).", "plt.show()"))
    book = tmp / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook([(f"S, {k}", f"1010{k}", "", "", "A") for k in range(2)]))
    out = tmp / "out"
    grade = course("grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
                   "--workers", "1", "--no-progress", "--no-similarity", "--cache")
    first = run([*grade, "--gradebook", str(book)])
    assert first.returncode == 0, first.stderr[-3000:]
    merged = run(course("manual", str(out), str(fill_by_column(out / "manual.csv", tmp / "f1.csv",
                                                                {n: "1" for n in NAMES}))))
    assert merged.returncode == 0, merged.stderr[-3000:]
    # a hand grade changed in the ledger only (merged into a copy): the re-grade gives it back
    shutil.copytree(out, tmp / "copy", symlinks=True)
    changed = run(course("manual", str(tmp / "copy"), str(fill_by_column(out / "manual.csv", tmp / "f2.csv",
                                                                          {NAMES[0]: "0.5"})), "--force"))
    assert changed.returncode == 0, changed.stderr[-3000:]
    for p in (tmp / "copy").glob("hand_grades.sqlite*"):
        shutil.copy2(p, out / p.name)
    graded = tmp / "graded"                      # the old grading's folder, as it was
    shutil.copytree(out, graded, symlinks=True)
    old = views(out)
    assert "canvas_import.csv" in old[0] and "results/student0_10100_20000_00_toy.json" in old[0]
    again = run(grade)
    assert again.returncode == 0, again.stderr[-3000:]
    new = views(out)
    assert new[0] != old[0] and "canvas_import.csv" not in new[0]
    assert b"0.5" in new[0]["manual.csv"] and b"0.5" not in old[0]["manual.csv"]
    cases = {}
    # course grade's publish: the re-grade's grading as the staging folder of the folder as it was
    state = tmp / "grade-state"
    shutil.copytree(graded, state, symlinks=True)
    shutil.copytree(outdir.resolve(out), state / swap_driver.PREPARED, symlinks=True)
    cases["grade"] = {"state": state, "args": [], "old": old, "new": new,
                      "next": outdir.resolve(out), "next_views": new}
    # course manual's: a hand grade merged into the re-graded folder
    state = tmp / "manual-state"
    shutil.copytree(out, state, symlinks=True)
    filled = fill_by_column(out / "manual.csv", tmp / "f3.csv", {NAMES[0]: "0.5", NAMES[1]: "0.25"})
    cases["manual"] = {"state": state, "args": [str(filled)], "old": new}
    work = tmp / "work" / "out"
    for case, c in cases.items():                # each publish not killed: its new grading
        done = run([sys.executable, str(DRIVER), case, str(place(c["state"], work)), *c["args"]])
        assert done.returncode == 0, (case, done.stdout[-2000:], done.stderr[-3000:])
        if case == "grade":
            assert views(work) == new, differing(views(work)[0], new[0])
        else:
            c["new"] = views(work)
            assert c["new"] != c["old"] and b"0.25" in c["new"][0]["grades.csv"]
            c["next"] = tmp / "manual-grading"
            shutil.copytree(outdir.resolve(work), c["next"], symlinks=True)
            c["next_views"] = c["new"]
    return {"tmp": tmp, "work": work, "grade": grade, "cases": cases}


def traced(week: dict, case: str, calls: str, *inject: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """The driver run under strace on a fresh copy of the case's folder: its result and the calls
    it made, by name, the mark included."""
    c = week["cases"][case]
    out = place(c["state"], week["work"])
    log = week["tmp"] / "calls.log"
    done = run([mounts.check_strace(), "-f", "-qq", "-o", str(log), "-e", f"trace={calls},{MARK}", *inject,
                sys.executable, str(DRIVER), case, str(out), *c["args"]])
    names = []
    lines = log.read_text().splitlines()
    assert len({ln.split()[0] for ln in lines if re.match(r"\d+ ", ln)}) <= 1, \
        "the driver started a process: strace counts its calls apart"
    for line in lines:
        m = re.match(r"(\d+ +)?(\w+)\((\"[^\"]*\")?", line)
        if m is None:
            continue
        if m.group(2) in MARK.split(","):
            if m.group(3) == f'"{swap_driver.MARKER}"':
                names.append("MARK")
            continue
        names.append(m.group(2))
    return done, names


@pytest.fixture(scope="module")
def calls(week):
    """Per case: how many times the driver calls each system call before its mark and after it."""
    every = ",".join(c for family in KINDS.values() for c in family)
    found = {}
    for case in week["cases"]:
        done, names = traced(week, case, every)
        assert done.returncode == 0, (case, done.stderr[-3000:])
        assert names.count("MARK") == 1, case
        cut = names.index("MARK")
        found[case] = {s: (names[:cut].count(s), names[cut + 1:].count(s)) for s in set(names) - {"MARK"}}
    return found


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("case", ["grade", "manual"])
def test_a_publish_killed_at_any_step_leaves_the_old_grading_or_the_new_one(week, calls, case, kind):
    c = week["cases"][case]
    seen = {"old": 0, "new": 0}
    points = 0
    for call in KINDS[kind]:
        before, after = calls[case].get(call, (0, 0))
        for k in range(1, after + 1):
            points += 1
            killed, names = traced(week, case, call,
                                   "-e", f"inject={call}:signal=SIGKILL:when={before + k}")
            where = (case, kind, call, k)
            assert killed.returncode in (-9, 137), (where, killed.returncode, killed.stderr[-2000:])
            # the kill landed on the k-th call after the driver's start-up, and on nothing before
            assert names.index("MARK") == before and names[-1] == call and names.count(call) == before + k, \
                (where, names[-5:])
            out = week["work"]
            plain, read = views(out)
            side = "old" if plain == c["old"][0] else "new" if plain == c["new"][0] else None
            assert side is not None, (where, differing(plain, c["old"][0]), differing(plain, c["new"][0]))
            assert read == c[side][1], (where, side, differing(read, c[side][1]))
            seen[side] += 1
            # the next publish (what the next run does: begin, then publish) is whole and leaves
            # nothing of the killed one
            staging = outdir.begin(out)
            shutil.copytree(c["next"], staging, symlinks=True, dirs_exist_ok=True)
            api._publish(staging, out, None, None)  # type: ignore[arg-type]
            after_views = views(out)
            assert after_views == c["next_views"], (where, [differing(a, b) for a, b in
                                                            zip(after_views, c["next_views"], strict=True)])
            left = [p.name for p in out.iterdir()
                    if p.name.startswith((outdir.STAGING_PREFIX, outdir.LINK_PREFIX, outdir.PART_PREFIX))]
            assert not left and len(list((out / outdir.VERSIONS).iterdir())) <= 2, (where, left)
    counted.setdefault(case, {})[kind] = points
    print(f"{case} {kind}: {points} kill points ({seen['old']} left the old grading, "
          f"{seen['new']} the new one)")
    if points:
        assert seen["old"] > 0
    if kind == "unlink":            # after the pointer's rename, links and old versions go
        assert seen["new"] > 0

