"""A merge or a cache is never silently wrong.

A small class of the toy assignment is graded once with ``--cache`` on one machine and once in 2
shards. Then each fault, on a copy: shards of different grader versions, a shard
result edited by hand, a re-upload after its shard ran (the merge names the shard; grading it
again mends it), a stale shard folder of another N, a killed shard, a shard failed for good, the
merge waiting for a late shard (as the Kubernetes merge Job runs it); a cache entry edited over its
maximum, one re-sealed with the key, one notebook's entry under another's key. A refusal writes
nothing; an entry that does not check out is graded afresh, and said so.
"""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import hostile
import lms_samples
import pytest

from autograder import provenance

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e
SOLS = [f"alice{i}_1010{i}_2000{i}_toy.ipynb" for i in range(3)]
BLANKS = [f"bob{i}_1020{i}_2010{i}_toy.ipynb" for i in range(3)]


def course(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1"))


def grade(subs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    res = course("grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
                 "--workers", "2", "--no-progress", "--no-similarity", *extra)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res


def rows(out: Path) -> dict[str, dict]:
    text = (out / "grades.csv").read_text(encoding="utf-8")
    return {r["file"]: r for r in csv.DictReader(io.StringIO(text))}


def points(out: Path) -> dict[str, tuple]:
    keep = ("q1", "q2", "q3", "total_points_earned", "grading_status")
    return {f: tuple(r[k] for k in keep) for f, r in rows(out).items()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("prov")
    os.chmod(root, 0o755)
    subs = root / "class"
    subs.mkdir()
    for name in SOLS:
        (subs / name).write_bytes(hostile.SOLUTION.read_bytes())
    for name in BLANKS:
        (subs / name).write_bytes(hostile.BLANK.read_bytes())
    grade(subs, root / "one", "--cache")
    for k in range(2):
        grade(subs, root / "sharded", "--shard", f"{k}/2")
    return {"root": root, "subs": subs, "one": root / "one", "sharded": root / "sharded"}


def copy_class(graded: dict, tmp: Path) -> tuple[Path, Path]:
    """A copy of the class and of its shard results (the results name the class's folder: rewritten)."""
    subs = tmp / "class"
    shutil.copytree(graded["subs"], subs)
    out = tmp / "out"
    shutil.copytree(graded["sharded"] / "shards", out / "shards")
    for k in range(2):
        edit(out, k, lambda b: b.update(submissions=[str(subs.resolve())]))
    return subs, out


def edit(out: Path, k: int, change, n: int = 2, reseal: bool = True) -> None:
    """Change shard k's sealed body; sealed again with the folder's key (as a grader would) or not."""
    path = out / "shards" / f"{k}-of-{n}" / "shard.json"
    doc = json.loads(path.read_text())
    change(doc["body"])
    if reseal:
        doc["seal"] = provenance.seal(provenance.read_key(out / "shards"), doc["body"])
    path.write_text(json.dumps(doc))


def course_env(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1", **env))


def merge(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return course("merge", str(out), "--no-similarity", *extra)


def nothing_written(out: Path) -> bool:
    return sorted(p.name for p in out.iterdir()) == ["shards"]


def test_an_honest_batch_merges_as_one_machine_grades_it(graded, tmp_path):
    _, out = copy_class(graded, tmp_path)
    res = merge(out)
    assert res.returncode == 0, res.stderr
    assert points(out) == points(graded["one"])
    assert (out / "grades.csv").read_bytes() == (graded["one"] / "grades.csv").read_bytes()


def test_shards_of_different_grader_versions_are_refused_and_named(graded, tmp_path):
    _, out = copy_class(graded, tmp_path)
    edit(out, 1, lambda b: b["provenance"].update(grader="0" * 64))
    res = merge(out)
    assert res.returncode == 2 and nothing_written(out), res.stdout + res.stderr
    assert "shard 1 (" in res.stderr and "grader version 000000000000" in res.stderr
    assert "grade shard 1 again" in res.stderr and "shard 0 (" not in res.stderr
    shard1 = json.loads((out / "shards" / "1-of-2" / "shard.json").read_text())["body"]["rows"]
    assert all(f in res.stderr for f in shard1)              # its rows named


def test_a_shard_edited_by_hand_is_refused(graded, tmp_path):
    _, out = copy_class(graded, tmp_path)

    def more_points(body):
        body["results"][0]["question_points"]["q2"] = 14.0
    edit(out, 0, more_points, reseal=False)
    res = merge(out)
    assert res.returncode == 2 and nothing_written(out) and "seal does not match" in res.stderr, res.stderr
    edit(out, 0, more_points)                 # sealed again with the key: still over q2's maximum
    res = merge(out)
    assert res.returncode == 2 and nothing_written(out) and "q2 has 14.0 points" in res.stderr, res.stderr


def test_tests_changed_since_the_shards_ran_are_refused(graded, tmp_path):
    _, out = copy_class(graded, tmp_path)
    asg = tmp_path / "00_toy"
    shutil.copytree(hostile.FIXTURE, asg)
    q3 = asg / "tests" / "q3.py"
    q3.write_text(q3.read_text().replace("== 3", "== 4"))
    res = merge(out, "--assignment", str(asg))
    assert res.returncode == 2 and nothing_written(out) and "the tests of q3" in res.stderr, res.stderr


def test_a_re_upload_after_its_shard_ran_names_the_shard_and_grading_it_again_mends_it(graded, tmp_path):
    subs, out = copy_class(graded, tmp_path)
    (subs / SOLS[0]).write_bytes(hostile.BLANK.read_bytes() + b"\n")     # re-uploaded: now a blank
    res = merge(out)
    assert res.returncode == 2 and nothing_written(out), res.stdout + res.stderr
    where = next(k for k in range(2) if SOLS[0] in json.loads(
        (out / "shards" / f"{k}-of-2" / "shard.json").read_text())["body"]["rows"])
    assert f"uploaded again after shard {where} graded it: {SOLS[0]}" in res.stderr
    assert f"--shard {where}/2" in res.stderr
    grade(subs, out, "--shard", f"{where}/2")
    res = merge(out)
    assert res.returncode == 0, res.stderr
    assert rows(out)[SOLS[0]]["total_points_earned"] == "0.0"           # the new bytes' grade
    assert rows(out)[SOLS[1]]["total_points_earned"] == "5.0"


def test_a_new_row_since_the_shards_ran_is_refused(graded, tmp_path):
    subs, out = copy_class(graded, tmp_path)
    (subs / "late_10999_20999_toy.ipynb").write_bytes(hostile.SOLUTION.read_bytes())
    res = merge(out)
    assert res.returncode == 2 and nothing_written(out), res.stderr
    assert "new rows: late_10999_20999_toy.ipynb" in res.stderr and "grade every shard again" in res.stderr


def test_stale_folders_of_another_n_are_ignored_with_a_note(graded, tmp_path):
    _, out = copy_class(graded, tmp_path)
    (out / "shards" / "0-of-5").mkdir()                     # a killed shard of an earlier N
    stale = out / "shards" / "0-of-1"                       # and a whole earlier batch of N = 1
    shutil.copytree(out / "shards" / "0-of-2", stale)
    doc = json.loads((stale / "shard.json").read_text())
    doc["body"].update(shards=1, finished=0)
    doc["seal"] = provenance.seal(provenance.read_key(out / "shards"), doc["body"])
    (stale / "shard.json").write_text(json.dumps(doc))
    res = merge(out)                                          # two complete sets: which one is not guessed
    assert res.returncode == 2 and nothing_written(out), res.stdout + res.stderr
    assert "more than one set of shards" in res.stderr and "1 shards: complete" in res.stderr
    res = merge(out, "--shards", "2")
    assert res.returncode == 0, res.stderr
    assert "ignored 2 shard folders of another N (0-of-1, 0-of-5)" in res.stdout
    assert points(out) == points(graded["one"])


def without_shards(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.relative_to(out).parts[0] != "shards"}


def test_an_older_complete_set_is_not_merged_while_the_newer_is_unfinished(graded, tmp_path):
    """A set chosen by its run, not its clock: last week's 2 shards (graded
    into the wrong gradebook column), their folders' clock an hour ahead and a ``0-of-2.saved`` copy
    beside them, are complete; this run's 3 are not all done: the merge of this run waits for its own
    and never takes the other set; the gradebook then comes from the merged set's own results, and
    shards of one set that name different gradebooks are refused unless the merge names one."""
    subs, out = copy_class(graded, tmp_path)
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook([(f"Student, {f[:6]}", f.split("_")[1], "", "", "A")
                                                   for f in SOLS + BLANKS]))
    ahead = time.time() + 3600
    for k in range(2):
        edit(out, k, lambda b: b["meta"].update(gradebook=[str(book), "Quiz 1 (4702)"]) or b.update(
            run="last-week", finished=ahead))
        os.utime(out / "shards" / f"{k}-of-2", (ahead, ahead))
    shutil.copytree(out / "shards" / "0-of-2", out / "shards" / "0-of-2.saved")
    this_week = ("--export-partial", "--gradebook", str(book), "--gradebook-column", "00 Toy (4700)",
                 "--run-id", "this-week")
    grade(subs, out, "--shard", "0/3", *this_week)
    res = merge(out, "--run-id", "this-week")
    assert res.returncode == 1 and nothing_written(out), res.stdout + res.stderr
    assert "missing 2 of 3 shards: 1, 2 (run this-week)" in res.stderr
    res = merge(out)                                         # no run named: both sets named, none merged
    assert res.returncode == 2 and nothing_written(out), res.stdout + res.stderr
    assert "run last-week, 2 shards: complete" in res.stderr and "run this-week, 3 shards: missing 1, 2" \
        in res.stderr
    for k in (1, 2):
        grade(subs, out, "--shard", f"{k}/3", *this_week)
    res = course_env("merge", str(out), "--no-similarity", env={"COURSE_RUN_ID": "this-week"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ignored 2 shard folders of another N (0-of-2, 1-of-2)" in res.stdout
    assert "left aside 1 folders" in res.stdout and "0-of-2.saved" in res.stdout
    assert points(out) == points(graded["one"])
    header = (out / "canvas_import.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    assert header.endswith(",00 Toy (4700)"), header
    before = without_shards(out)
    edit(out, 2, lambda b: b["meta"].update(gradebook=[str(book), "Quiz 1 (4702)"]), n=3)
    res = merge(out, "--shards", "3")
    assert res.returncode == 2 and without_shards(out) == before, res.stdout + res.stderr
    assert "the shards were graded with different gradebooks: " in res.stderr
    assert f"shard 2: {book} column 'Quiz 1 (4702)'" in res.stderr and "nothing was written" in res.stderr
    res = merge(out, "--shards", "3",
                "--export-partial", "--gradebook", str(book), "--gradebook-column", "4700")
    assert res.returncode == 0, res.stdout + res.stderr
    assert without_shards(out)["canvas_import.csv"] == before["canvas_import.csv"]


def test_a_killed_shard_is_missing_and_one_failed_for_good_is_named(graded, tmp_path):
    _, out = copy_class(graded, tmp_path)
    (out / "shards" / "1-of-2" / "shard.json").unlink()     # killed half-way: its folder, no result
    res = merge(out)
    assert res.returncode == 1 and nothing_written(out), res.stderr
    assert "missing 1 of 2 shards: 1 (unfinished:" in res.stderr
    (out / "shards" / "1-of-2" / "failed").write_text("137\n")
    res = merge(out, "--shards", "2", "--wait", "--poll", "0.2")
    assert res.returncode == 3 and nothing_written(out), res.stderr
    assert "shard 1 of 2 failed for good (its last attempt exited 137)" in res.stderr


class Waiting:
    """A ``course merge --wait`` running in the background, its stderr read line by line."""

    def __init__(self, out: Path) -> None:
        import threading
        cmd = [sys.executable, "-m", "course", "merge", str(out), "--shards", "2", "--wait", "--poll", "0.3",
               "--no-similarity"]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, OMP_NUM_THREADS="1"))
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True).start()

    def said(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None, self.lines
            assert time.monotonic() < deadline, self.lines
            time.sleep(0.1)

    def end(self) -> int:
        try:
            return self.proc.wait(timeout=300)
        finally:
            self.proc.kill()


def test_the_merge_waits_for_a_late_shard_and_stops_on_a_failed_one(graded, tmp_path):
    """``course merge --shards N --wait``, the merge Job's command: no shard at all yet, then one,
    then the other late; and in a second batch one that fails for good while it waits."""
    _, out = copy_class(graded, tmp_path)
    held = tmp_path / "held"
    shutil.move(out / "shards", held)
    merging = Waiting(out)
    merging.said("waiting: missing 2 of 2 shards: 0, 1")        # nothing there yet: it waits
    (out / "shards").mkdir()
    shutil.copy(held / provenance.KEY_FILE, out / "shards")
    shutil.copytree(held / "0-of-2", out / "shards" / "0-of-2")
    merging.said("waiting: missing 1 of 2 shards: 1")
    assert not (out / "grades.csv").exists()
    shutil.copytree(held / "1-of-2", out / "shards" / "1-of-2")
    assert merging.end() == 0, merging.lines
    assert points(out) == points(graded["one"])
    # a second batch: shard 1 fails for good while the merge waits
    out2 = tmp_path / "out2"
    (out2 / "shards").mkdir(parents=True)
    shutil.copy(held / provenance.KEY_FILE, out2 / "shards")
    shutil.copytree(held / "0-of-2", out2 / "shards" / "0-of-2")
    merging = Waiting(out2)
    merging.said("waiting: missing 1 of 2 shards: 1")
    (out2 / "shards" / "1-of-2").mkdir()
    (out2 / "shards" / "1-of-2" / "failed").write_text("1\n")
    assert merging.end() == 3, merging.lines
    assert any("shard 1 of 2 failed for good" in line for line in merging.lines)
    assert sorted(p.name for p in out2.iterdir()) == ["shards"]


def test_a_shard_killed_without_a_word_is_named_once_its_heartbeat_is_quiet(graded, tmp_path):
    """A SIGKILL leaves no result and no ``failed``, only a heartbeat that no longer moves: ``merge
    --wait`` names the shard (exit 3) once it has been quiet for --stale-after seconds of the merge's
    own clock; a heartbeat that moves keeps it waiting, and the shard's result then merges."""
    import threading
    _, out = copy_class(graded, tmp_path)
    folder = out / "shards" / "1-of-2"
    held = tmp_path / "shard1.json"
    shutil.move(folder / "shard.json", held)
    beat = {"run": "", "shard": 1, "shards": 2, "host": "node-7", "pid": 4242, "beat": 9}
    (folder / "heartbeat").write_text(json.dumps(beat))
    os.utime(folder / "heartbeat", (time.time() + 3600,) * 2)     # its node's clock an hour ahead
    t0 = time.monotonic()
    res = merge(out, "--shards", "2", "--wait", "--poll", "0.2", "--stale-after", "2")
    assert res.returncode == 3 and nothing_written(out), res.stdout + res.stderr
    assert "shard 1 of 2 of the run without an id stopped without a word (no result, its heartbeat " \
        "unchanged for 2 s" in res.stderr and "--shard 1/2" in res.stderr
    assert time.monotonic() - t0 < 60
    # a live shard: its heartbeat moves for longer than the window, then its result lands
    stop = threading.Event()

    def beating() -> None:
        while not stop.wait(0.3):
            beat["beat"] += 1
            (folder / "heartbeat").write_text(json.dumps(beat))

    thread = threading.Thread(target=beating, daemon=True)
    thread.start()
    merging = subprocess.Popen([sys.executable, "-m", "course", "merge", str(out), "--shards", "2", "--wait",
                                "--poll", "0.2", "--stale-after", "2", "--no-similarity"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        time.sleep(5)
        assert merging.poll() is None, merging.communicate()
        stop.set()
        thread.join()
        shutil.move(held, folder / "shard.json")
        stdout, stderr = merging.communicate(timeout=300)
    finally:
        stop.set()
        merging.kill()
    assert merging.returncode == 0, stdout + stderr
    assert points(out) == points(graded["one"])


# ---------------------------------------------------------------- the cache

def cache_entry(out: Path, name: str) -> Path:
    """The folder of the cache entry of row ``name``."""
    for entry in (out / "cache").glob("*/entry.json"):
        if json.loads(entry.read_text())["body"]["result"]["file"] == name:
            return entry.parent
    raise AssertionError(f"no cache entry for {name}")


def test_cache_entries_that_do_not_check_out_are_graded_afresh_and_named(graded, tmp_path):
    one = tmp_path / "one"
    shutil.copytree(graded["one"], one)
    want = points(graded["one"])
    sha = {f: json.loads((one / "results" / f"{f[:-6]}.json").read_text())["sha256"] for f in SOLS + BLANKS}
    # an entry edited by hand (q2 from its 2.0 to 14.0) and a blank's entry put under a solution's key
    edited = cache_entry(one, SOLS[1]) / "entry.json"
    doc = json.loads(edited.read_text())
    doc["body"]["result"]["question_points"]["q2"] = 14.0
    edited.write_text(json.dumps(doc))
    blank_entry, sol_entry = cache_entry(one, BLANKS[0]), cache_entry(one, SOLS[0])
    shutil.rmtree(sol_entry)
    shutil.copytree(blank_entry, sol_entry)          # the blank's entry, under the solution's key
    res = grade(graded["subs"], one, "--cache")
    assert "cache: reused 4 rows whole (not run), re-ran 0 with only the changed questions' tests, " \
           "graded 2 afresh" in res.stdout, res.stdout
    assert "2 entries did not check out" in res.stdout
    assert f"{SOLS[1]}: its entry's seal does not match" in res.stdout
    assert f"{SOLS[0]}: its entry is another notebook's" in res.stdout
    assert points(one) == want
    for f in SOLS + BLANKS:          # the key the hand-grade ledger follows: each row's own bytes
        assert json.loads((one / "results" / f"{f[:-6]}.json").read_text())["sha256"] == sha[f]
    # an entry over its maximum, sealed again with the cache's key, is still not believed
    edited = cache_entry(one, SOLS[2]) / "entry.json"
    doc = json.loads(edited.read_text())
    doc["body"]["result"]["question_points"]["q2"] = 14.0
    doc["seal"] = provenance.seal(provenance.read_key(one / "cache"), doc["body"])
    edited.write_text(json.dumps(doc))
    res = grade(graded["subs"], one, "--cache")
    assert f"{SOLS[2]}: q2 has 14.0 points" in res.stdout and "graded 1 afresh" in res.stdout, res.stdout
    assert points(one) == want
