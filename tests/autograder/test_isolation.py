"""Attacks on the grader's isolation, each through the real ``course grade`` command, beside honest rows.

Three batches of the toy assignment (module fixtures): the honest rows alone; the attack batch
(malformed messages, uploads that take over a row, zip bombs, the fork server's descriptors,
memory and processor hogs, other students' names, long and formula names) with the same honest
rows in it; and a one-worker batch in which a submission leaves things behind for the next one.
Each test checks that the batch finished, that the honest rows graded exactly as alone, what the
attacker's row got, and that nothing is left afterwards.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import isolation_attacks as atk
import psutil
import pytest

from autograder import sandbox

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = Path(__file__).resolve().parents[1] / "support" / "fixtures" / "00_toy"
HONEST = sorted(atk.class_files())
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
SANDBOX_UIDS = range(sandbox.UID_BASE, sandbox.UID_BASE + 32)
pytestmark = pytest.mark.e2e


def grade(subs: list[Path], out: Path, *extra: str) -> dict:
    """Run ``course grade`` and watch the grader's own peak memory (VmHWM) while it runs."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "autograder", *map(str, subs), "--assignment", str(ASSIGNMENT),
           "--out", str(out), "--no-progress", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    hwm = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                hwm = max([hwm] + [int(line.split()[1]) for line in f if line.startswith("VmHWM:")])
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    rows = {}
    if (out / "grades.csv").exists():
        with open(out / "grades.csv", newline="", encoding="utf-8") as f:
            rows = {r["file"]: r for r in csv.DictReader(f)}
    timings = json.loads((out / "timings.json").read_text()) if (out / "timings.json").exists() else {}
    return {"code": proc.returncode, "stdout": stdout, "stderr": stderr, "rows": rows, "out": out,
            "pid": proc.pid, "vmhwm_mb": hwm / 1024, "timings": timings,
            "seconds": {t["file"]: t for t in timings.get("submissions", [])}}


def result(batch: dict, stem: str) -> dict:
    return json.loads((batch["out"] / "results" / f"{stem}.json").read_text(encoding="utf-8"))


def score(row: dict) -> list[str]:
    return [row[k] for k in ("q1", "q2", "q3", "total_points_earned", "grading_status")]


def leftovers(grader_pid: int) -> list:
    """What a batch may have left on the machine: processes started by the attacks, SysV IPC
    objects, files in the shared temporary folders, keys in the sandbox uids' key rings, cgroups."""
    left: list = []
    markers = (atk.SLEEPER, "time.time() + 15.25", "bytearray(900")   # what the attacks start
    for p in psutil.process_iter(["cmdline"]):
        try:
            cmdline = " ".join(p.info["cmdline"] or [])
            if any(m in cmdline for m in markers):
                left.append(("process", p.pid, cmdline[:80]))
        except psutil.Error:
            pass
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as f:
            header, *lines = f.read().splitlines()
        cols = header.split()
        for line in lines:
            row = dict(zip(cols, line.split(), strict=False))
            ours = int(row["key"]) in (atk.IPC_KEY, atk.IPC_KEY + 1, atk.IPC_KEY + 2)
            if ours or int(row["uid"]) in SANDBOX_UIDS:
                left.append(("ipc", kind, row["key"]))
    for d in SHARED_DIRS:
        for e in os.scandir(d):
            try:
                if atk.MARK in e.name or e.stat(follow_symlinks=False).st_uid in SANDBOX_UIDS:
                    left.append(("file", e.path))
            except OSError:
                pass
    for uid in SANDBOX_UIDS[:8]:
        if key_in_rings(uid, atk.KEY_NAME):
            left.append(("key", uid))
    for dirpath, dirnames, _ in os.walk("/sys/fs/cgroup"):
        if dirpath.count("/") > 8:
            dirnames[:] = []
        left += [("cgroup", os.path.join(dirpath, d)) for d in dirnames if f"course-grade-{grader_pid}" in d]
    return left


def key_in_rings(uid: int, name: str) -> bool:
    """Does ``uid``'s user or user-session key ring hold a key called ``name``? (Asked as that uid.)"""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            found = any(sandbox.keyctl(10, ring, b"user", name.encode(), 0) > 0      # KEYCTL_SEARCH
                        for ring in (sandbox.KEY_SPEC_USER_KEYRING, sandbox.KEY_SPEC_USER_SESSION_KEYRING))
        except BaseException:
            os._exit(2)
        os._exit(1 if found else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 1


# ---------------------------------------------------------------- the batches

@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("alone")
    atk.write(root / "class", atk.class_files())
    return grade([root / "class"], root / "out", "--workers", "1")


ATTACK_ARGS = ("--workers", "2", "--timeout", "90", "--cell-timeout", "30", "--memory", "2")
LONG = "longname_1_2_" + "ü" * 287 + ".ipynb"           # 306 characters, 593 bytes


def attack_class(folder: Path) -> dict[str, bytes]:
    sol, blank = atk.SOLUTION.read_bytes(), atk.BLANK.read_bytes()
    files = dict(atk.class_files())
    files["a0_cpu_hog.ipynb"] = atk.with_cells(after=[atk.CPU_HOG, atk.SLEEP.format(s=12)])
    for name in atk.MALFORMED:
        files[f"{name}.ipynb"] = atk.malformed(name)
    files["m_truncated_at_exit.ipynb"] = atk.with_cells([atk.TRUNCATED_AT_EXIT])
    files["m_garbage_answers.ipynb"] = atk.with_cells([atk.GARBAGE_ANSWERS])
    files["s_epoll.ipynb"] = atk.with_cells(after=[atk.EPOLL])
    files["s_memory.ipynb"] = atk.with_cells(after=[atk.MEMORY])
    files["=SUM(1+1).ipynb"] = sol
    files["@cmd.ipynb"] = blank
    files["a9_clash.ipynb"] = sol
    files["takeover.zip"] = atk.zip_of({"a1_honest_correct.ipynb": blank, "filler.ipynb": blank})
    files["many.zip"] = atk.zip_of({f"nb{k:03d}.ipynb": blank for k in range(200)})
    bomb = atk.bomb()
    files["bomb.zip"] = bomb
    files["entries.zip"] = atk.many_entries()
    others = sorted(n.removesuffix(".ipynb") for n in files if not n.endswith(".zip"))
    files["s_names.ipynb"] = atk.names_probe(others)
    atk.write(folder, files)
    return files


def bulk_downloads(folder: Path) -> list[Path]:
    """Canvas bulk downloads, given on the command line as an instructor gives them (a zip found in
    a folder is one student's upload): a bomb inside a student's zip, a long name, and (A6) one
    student's notebook compressed too well beside an honest padded one and two honest ones."""
    sol, blank = atk.SOLUTION.read_bytes(), atk.BLANK.read_bytes()
    atk.write(folder, {"canvas_bomb.zip": atk.zip_of({"evilstudent_1_2_upload.zip": atk.bomb(),
                                                      "goodstudent_3_4_hw.ipynb": sol}),
                       "canvas_long.zip": atk.zip_of({LONG: sol, "short_3_4_hw.ipynb": blank}),
                       "canvas_ratio.zip": atk.deflated_zip_of({
                           "ratiogood_5_6_hw.ipynb": sol, "ratioblank_7_8_hw.ipynb": blank,
                           "ratiopadded_9_10_hw.ipynb": blank.rstrip() + b" " * (9 * 2**20),
                           "ratiobomb_11_12_hw.ipynb": blank.rstrip() + b" " * (80 * 2**20)})})
    return [folder / n for n in ("canvas_bomb.zip", "canvas_long.zip", "canvas_ratio.zip")]


@pytest.fixture(scope="module")
def attack(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("attack")
    os.chmod(root, 0o755)
    attack_class(root / "class")
    atk.write(root / "extra", {"a9_clash.ipynb": atk.BLANK.read_bytes()})
    bulk = bulk_downloads(root / "bulk")
    batch = grade([root / "class", root / "extra" / "a9_clash.ipynb", *bulk], root / "out", *ATTACK_ARGS)
    batch["left"] = leftovers(batch["pid"])
    return batch


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> dict:
    """One worker: the submission that leaves things is graded first, the one that looks for them next."""
    root = tmp_path_factory.mktemp("shared")
    files = {"a1_honest_correct.ipynb": atk.SOLUTION.read_bytes(),
             "b1_leave.ipynb": atk.with_cells(after=[atk.LEAVE]),
             "b2_find.ipynb": atk.with_cells(after=[atk.FIND])}
    atk.write(root / "class", files)
    batch = grade([root / "class"], root / "out", "--workers", "1")
    batch["left"] = leftovers(batch["pid"])
    return batch


# ---------------------------------------------------------------- every batch

def test_the_attack_batch_finishes_and_honest_rows_grade_as_alone(attack, alone):
    assert attack["code"] == 0, attack["stderr"][-3000:]
    assert alone["code"] == 0, alone["stderr"][-3000:]
    for name in HONEST:
        assert score(attack["rows"][name]) == score(alone["rows"][name]), name
    assert [score(alone["rows"][n])[3:] for n in HONEST] == [["5.0", "ok"], ["0.0", "ok"], ["4.0", "ok"]]


def test_nothing_is_left_after_the_attack_batch(attack):
    assert attack["left"] == []


# ---------------------------------------------------------------- malformed messages

@pytest.mark.parametrize("name", sorted(atk.MALFORMED))
def test_a_malformed_message_fails_only_its_row(attack, name):
    row = attack["rows"][f"{name}.ipynb"]
    assert row["grading_status"] == atk.MALFORMED_STATUS.format(atk.MALFORMED[name][1]), row
    assert row["total_points_earned"] == "0.0"


def test_a_message_cut_off_by_exit_or_garbage_on_the_answer_pipe_fails_only_its_row(attack):
    cut = attack["rows"]["m_truncated_at_exit.ipynb"]
    assert cut["grading_status"].startswith("process exited in cell"), cut
    assert cut["total_points_earned"] == "0.0"
    garbage = attack["rows"]["m_garbage_answers.ipynb"]
    assert garbage["grading_status"] != "ok" and garbage["total_points_earned"] == "0.0", garbage


# ---------------------------------------------------------------- uploads and names

def test_an_upload_cannot_take_over_a_classmates_row(attack):
    rows = attack["rows"]
    assert score(rows["a1_honest_correct.ipynb"])[3:] == ["5.0", "ok"]
    assert score(rows["takeover.zip/a1_honest_correct.ipynb"])[3:] == ["0.0", "ok"]
    assert score(rows["takeover.zip/filler.ipynb"])[3:] == ["0.0", "ok"]
    assert not [r for r in rows if r.startswith("a1_honest_correct.ipynb (")]


def test_two_rows_with_one_name_are_a_clash_on_both(attack):
    rows = attack["rows"]
    for k in (1, 2):
        row = rows[f"a9_clash.ipynb (name clash {k} of 2)"]
        assert row["grading_status"] == ("name clash: 2 submissions are named 'a9_clash.ipynb'; none of them "
                                         "was graded (grade them apart)")
        assert row["total_points_earned"] == "0.0"
    assert "a9_clash.ipynb" not in rows
    assert "name clash" in (attack["out"] / "report.html").read_text(encoding="utf-8")


def test_zip_bombs_and_oversized_uploads_are_refused_and_the_rest_is_graded(attack):
    rows = attack["rows"]
    assert rows["many.zip"]["grading_status"] == \
        "rejected upload: the zip holds 200 notebooks (at most 20 in one upload)"
    for zipname in ("bomb.zip", "evilstudent_1_2_upload.zip"):       # each member refused on its own row
        for k in range(6):
            assert rows[f"{zipname}/part{k}.ipynb"]["grading_status"].startswith(
                "rejected file: it unpacks to 256 MB from"), (zipname, k)
    assert rows["entries.zip"]["grading_status"] == \
        "rejected upload: the zip has 25000 entries (at most 20000)"
    assert score(rows["goodstudent_3_4_hw.ipynb"])[3:] == ["5.0", "ok"]
    assert not [r for r in rows if r.startswith(("many.zip/", "entries.zip/"))]


def test_a6_one_bomb_in_a_bulk_download_costs_only_its_own_row(attack, alone):
    """A zip bomb in a bulk download costs only its own row, not the whole download."""
    rows = attack["rows"]
    assert score(rows["ratiogood_5_6_hw.ipynb"]) == score(alone["rows"]["a1_honest_correct.ipynb"])
    assert score(rows["ratioblank_7_8_hw.ipynb"]) == score(alone["rows"]["a2_honest_blank.ipynb"])
    assert score(rows["ratiopadded_9_10_hw.ipynb"])[3:] == ["0.0", "ok"]       # 9 MB of spaces: no bomb
    assert rows["ratiobomb_11_12_hw.ipynb"]["grading_status"].startswith(
        "rejected file: it unpacks to 80 MB from")
    assert "canvas_ratio.zip" not in rows


def test_the_graders_peak_memory_stays_under_200_mb_with_zip_bombs_in_the_batch(attack):
    assert attack["timings"]["grader_peak_memory_mb"] < 200, attack["timings"]["grader_peak_memory_mb"]
    assert 0 < attack["vmhwm_mb"] < 200, attack["vmhwm_mb"]


def test_long_names_grade_and_formula_names_are_escaped_in_grades_csv(attack):
    rows = attack["rows"]
    assert score(rows[LONG])[3:] == ["5.0", "ok"]
    assert score(rows["short_3_4_hw.ipynb"])[3:] == ["0.0", "ok"]
    assert score(rows["'=SUM(1+1).ipynb"])[3:] == ["5.0", "ok"]
    assert score(rows["'@cmd.ipynb"])[3:] == ["0.0", "ok"]
    text = (attack["out"] / "grades.csv").read_text(encoding="utf-8")
    assert not [line for line in text.splitlines() if line.startswith(("=", "+", "-", "@"))]
    stems = [p.name for p in (attack["out"] / "results").iterdir()]
    assert max(len(s.encode()) for s in stems) <= 190


# ---------------------------------------------------------------- the process tree

def test_the_fork_server_leaves_no_descriptor_to_a_child_and_cannot_be_stalled(attack):
    out = result(attack, "s_epoll")["output"]
    line = [ln for ln in out.splitlines() if ln.startswith("DESCRIPTORS")][0]
    assert line == "DESCRIPTORS ['/dev/null', '/dev/null', '/dev/null', 'pipe:', 'pipe:', 'pipe:']", line
    assert float(attack["rows"]["s_epoll.ipynb"]["total_points_earned"]) <= 5.0
    # a stalled fork server would have held every later submission until its --timeout (90 s)
    assert not [r for r in attack["rows"].values() if r["grading_status"].startswith("timeout")]
    assert max(t["seconds"] for t in attack["seconds"].values()) < 60


def test_memory_is_limited_for_all_of_a_submissions_processes_together(attack):
    res = result(attack, "s_memory")
    held = [ln for ln in res["output"].splitlines() if ln.startswith("HELD")][0]
    assert held in ("HELD 0 OF 3", "HELD 1 OF 3", "HELD 2 OF 3"), held   # 3 x 900 MB > --memory 2
    assert res["peak_memory_mb"] is not None and res["peak_memory_mb"] <= 2048, res["peak_memory_mb"]


def test_forty_busy_processes_do_not_slow_honest_rows_much(attack, alone):
    hog = attack["seconds"]["a0_cpu_hog.ipynb"]
    assert hog["seconds"] > 12                                  # it was running beside them
    for name in HONEST:
        slow, fast = attack["seconds"][name]["exec_seconds"], alone["seconds"][name]["exec_seconds"]
        assert slow < 3 * fast + 3, (name, slow, fast)          # without cgroups: 10x, and cell timeouts
        assert attack["rows"][name]["grading_status"] == "ok"


def test_a_submission_sees_no_other_process_nor_any_other_submissions_name(attack):
    out = result(attack, "s_names")["output"]
    lines = {ln.split(" ", 1)[0]: ln for ln in out.splitlines()
             if ln.startswith(("PROCESSES", "LEAKED", "JOBS"))}
    assert lines["LEAKED"] == "LEAKED []", out[-3000:]
    assert lines["PROCESSES"] == "PROCESSES ['2']", lines["PROCESSES"]      # itself, pid 2 of its namespace


# ---------------------------------------------------------------- nothing shared between submissions

def test_nothing_a_submission_leaves_reaches_the_next_one(shared, alone):
    assert shared["code"] == 0, shared["stderr"][-3000:]
    left = [ln for ln in result(shared, "b1_leave")["output"].splitlines() if ln.startswith("LEFT")][0]
    for what in ("'shm'", "'msg'", "'sem'", "'/var/tmp'", "'/run/lock'", "('key', -4)"):
        assert what in left, left                               # the attack did leave them
    found = [ln for ln in result(shared, "b2_find")["output"].splitlines() if ln.startswith("FOUND")][0]
    assert found == "FOUND []", found
    assert score(shared["rows"]["a1_honest_correct.ipynb"]) == score(alone["rows"]["a1_honest_correct.ipynb"])


def test_nothing_is_left_on_the_machine_after_the_batch(shared):
    assert shared["left"] == []
