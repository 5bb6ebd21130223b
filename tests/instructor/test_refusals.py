"""The machine's refusals through the real commands: a full disk under the output folder, the
scratch folder or /var/tmp, a read-only output folder or lock folder, and (strace's fault injection)
an I/O error, a used-up quota and a permission refused on the output folder. Each ends with exit 1,
one sentence on stderr that names the folder and what to do, no traceback, and the output folder
byte for byte as it was (``course grade``, ``course merge``, ``course manual``).
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import hostile
import mounts
import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.e2e, mounts.needs_mount]


def course(*args: str, env: dict | None = None, wrap: list[str] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*wrap, sys.executable, "-m", "course", *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1", **(env or {})))


def grade_args(subs: Path, out: Path, *more: str) -> list[str]:
    return ["grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out), "--workers", "1",
            "--no-progress", "--no-similarity", *more]


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> dict:
    """A class of two, graded once into ``graded`` (the outputs a refused run must leave as they were)."""
    root = tmp_path_factory.mktemp("refusals")
    os.chmod(root, 0o755)
    subs = root / "class"
    subs.mkdir()
    (subs / "alice.ipynb").write_bytes(hostile.SOLUTION.read_bytes())
    (subs / "bob.ipynb").write_bytes(hostile.BLANK.read_bytes())
    graded = root / "graded"
    done = course(*grade_args(subs, graded))
    assert done.returncode == 0, done.stderr
    assert (graded / "manual.csv").exists()
    return {"root": root, "subs": subs, "graded": graded}


def refused(res: subprocess.CompletedProcess, *words: str) -> str:
    """The one sentence of a refusal (exit 1, no traceback), holding ``words``."""
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr + res.stdout, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert lines[0].endswith("the output folder was left as it was"), lines[0]
    return lines[0]


def copy_of(week: dict, where: Path) -> Path:
    out = where / "out"
    shutil.copytree(week["graded"], out)
    return out


def test_output_folder_on_a_full_disk(week):
    with mounts.tmpfs(week["root"] / "full-out") as disk:
        out = copy_of(week, disk)
        before = mounts.tree(out)
        mounts.fill(disk)
        res = course(*grade_args(week["subs"], out))
        refused(res, "no space left in the output folder", str(out), "give another --out")
        assert mounts.tree(out) == before
        assert not list(out.glob(".staging-*"))


def test_scratch_folder_on_a_full_disk(week, tmp_path):
    out = copy_of(week, tmp_path)
    before = mounts.tree(out)
    with mounts.tmpfs(week["root"] / "full-scratch", "64k") as scratch:
        res = course(*grade_args(week["subs"], out, "--scratch", str(scratch)))
        refused(res, "no space left in the scratch folder", str(scratch), "--scratch DIR")
    assert mounts.tree(out) == before


def test_var_tmp_full_names_it_and_the_scratch_option(week, tmp_path):
    """The default scratch folder, full in a mount namespace of this command's own."""
    out = copy_of(week, tmp_path)
    before = mounts.tree(out)
    mounts.check_mount()
    res = course(*grade_args(week["subs"], out), wrap=[
        "unshare", "-m", "--propagation", "private", "sh", "-c",
        'mount -t tmpfs -o size=64k tmpfs /var/tmp && exec "$@"', "sh"])
    refused(res, "no space left in the scratch folder /var/tmp", "--scratch DIR")
    assert mounts.tree(out) == before


def test_read_only_output_folder(week, tmp_path):
    out = copy_of(week, tmp_path)
    before = mounts.tree(out)
    with mounts.read_only(out):
        res = course(*grade_args(week["subs"], out))
        refused(res, f"the output folder {out} is on a read-only file system", "give another --out")
        new = tmp_path / "ro" / "new"
        new.parent.mkdir()
        with mounts.read_only(new.parent):
            refused(course(*grade_args(week["subs"], new)), f"the output folder {new}")
    assert mounts.tree(out) == before and not new.exists()


def test_read_only_lock_folder(week, tmp_path):
    out = copy_of(week, tmp_path)
    before = mounts.tree(out)
    lock = tmp_path / "lock"
    lock.mkdir()
    with mounts.read_only(lock):
        res = course(*grade_args(week["subs"], out), env={"COURSE_GRADER_LOCK_DIR": str(lock)})
        if res.returncode == 0:             # the weak mode takes no lock: nothing to refuse
            pytest.skip("this machine grades in the weak mode (no lock folder)")
        refused(res, "the grader's lock folder", "COURSE_GRADER_LOCK_DIR")
    assert mounts.tree(out) == before


@mounts.needs_strace
@pytest.mark.parametrize("error, words", [("EIO", "input/output error in the output folder"),
                                          ("EDQUOT", "the disk quota is used up in the output folder"),
                                          ("EACCES", "permission denied in the output folder")])
def test_errors_injected_on_the_output_folder(week, tmp_path, error, words):
    strace = mounts.check_strace()
    out = tmp_path / "new-out"
    res = course(*grade_args(week["subs"], out), wrap=[
        strace, "-f", "-qq", "-o", "/dev/null", "-P", str(out), "-e", "trace=mkdir,mkdirat",
        "-e", f"inject=mkdir,mkdirat:error={error}"])
    refused(res, words, str(out))
    assert not out.exists()


def test_merge_into_a_read_only_or_full_output_folder(week, tmp_path):
    out = tmp_path / "sharded"
    done = course(*grade_args(week["subs"], out, "--shard", "0/1"))
    assert done.returncode == 0, done.stderr
    before = mounts.tree(out)
    with mounts.read_only(out):
        refused(course("merge", str(out), "--no-similarity"), f"the output folder {out}", "read-only")
    assert mounts.tree(out) == before
    with mounts.tmpfs(tmp_path / "full") as disk:
        moved = disk / "sharded"
        shutil.copytree(out, moved)
        before = mounts.tree(moved)
        mounts.fill(disk)
        refused(course("merge", str(moved), "--no-similarity"), "no space left", str(moved))
        assert mounts.tree(moved) == before


def test_manual_into_a_read_only_output_folder(week, tmp_path):
    out = copy_of(week, tmp_path)
    filled = tmp_path / "filled.csv"
    with open(out / "manual.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    q = rows[0][2]
    for row in rows[1:]:
        row[rows[0].index(q)] = "1"
    with open(filled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)
    before = mounts.tree(out)
    with mounts.read_only(out):
        res = course("manual", str(out), str(filled))
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert str(out) in res.stderr and "read-only" in res.stderr.lower(), res.stderr
    assert mounts.tree(out) == before
