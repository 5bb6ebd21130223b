"""Two batches with private /tmp in namespaces: batches that share nothing but the kernel (and the
host's cgroup tree) grade side by side, every row as when alone.

systemd's ``PrivateTmp`` and Slurm's ``job_container/tmpfs`` give each job a /tmp (and /var/tmp or
/dev/shm) of its own; containers that share the host's uids share nothing else of it; a grader in a
PID namespace of its own still sees the host's cgroup tree. Here each batch runs in a mount
namespace whose /tmp and /var/tmp are empty tmpfs of its own (``unshare --mount``), with the
default lock folder or one of its own, in the host's PID namespace or in one of its own
(``unshare --pid``). The checks: the batches hold different uids, and neither one's clean-up (the
uids' processes killed, the stale cgroups swept, at its start and at its end) touches the other's
processes or cgroup.

They need root, mounts and ``unshare`` (util-linux): elsewhere they skip, under CI they fail.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import mounts
import psutil
import pytest
from hostile import with_cells

from autograder import cgroups, sandbox

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = Path(__file__).resolve().parents[1] / "support" / "fixtures" / "00_toy"
SANDBOX_UIDS = range(sandbox.UID_BASE, sandbox.UID_BASE + 5001)
ROOT = os.geteuid() == 0
FAR = 70000                     # far from the uids of real batches (test_lockdown_units uses it too)

# ---------------------------------------------------------------- the uid claim, in one process

@pytest.fixture
def far(tmp_path, monkeypatch):
    """Uids from 70000 up; two lock folders, as two containers would have."""
    if not ROOT:
        pytest.skip("claims uids (root only)")
    monkeypatch.setattr(sandbox, "UID_BASE", FAR)
    folders = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        folders.append(tmp_path / name)
    return folders


def _as(uid: int) -> int:
    """A process sleeping as ``uid``, in a session of its own (the test's child), returned once it
    runs as ``uid`` (on a loaded machine a fork takes its time)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.setsid()
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        time.sleep(60)
        os._exit(0)
    deadline = time.monotonic() + 30
    while psutil.Process(pid).uids().real != uid and time.monotonic() < deadline:
        time.sleep(0.01)
    return pid


def _gone(pid: int, wait: float = 5.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
        time.sleep(0.02)
    return False


def test_batches_with_lock_folders_of_their_own_never_share_a_uid(far, monkeypatch):
    """The lock folder is no help between them: the kernel's count of the uid's processes is."""
    monkeypatch.setattr(sandbox, "LOCK_DIR", far[0])
    one = sandbox.UidPool(2)
    monkeypatch.setattr(sandbox, "LOCK_DIR", far[1])
    two = sandbox.UidPool(2)
    try:
        assert one.uids == [FAR, FAR + 1] and two.uids == [FAR + 2, FAR + 3]
        # each uid's holder runs as it, and is its only process
        holders = {c.uid: psutil.Process(c.pid).uids().real for c in sandbox._CLAIMS.values()}
        assert holders == {u: u for u in one.uids + two.uids}
    finally:
        one.release()
        two.release()
    assert not sandbox._CLAIMS
    for folder in far:
        assert os.listdir(folder / "course-grader") == []     # given back: no lock file left


def test_a_uid_some_process_runs_as_is_never_taken(far, monkeypatch):
    """Another batch's student (or its leftover) runs as it: seen or not, the kernel counts it."""
    monkeypatch.setattr(sandbox, "LOCK_DIR", far[0])
    sleeper = _as(FAR)
    try:
        pool = sandbox.UidPool(1)
        assert pool.uids == [FAR + 1]
        pool.release()
        assert os.listdir(far[0] / "course-grader") == []     # the file made for FAR is gone too
    finally:
        os.kill(sleeper, 9)
        os.waitpid(sleeper, 0)


def test_kill_uid_ends_every_process_of_the_uid_but_its_holder(far, monkeypatch):
    monkeypatch.setattr(sandbox, "LOCK_DIR", far[0])
    pool = sandbox.UidPool(1)
    try:
        uid = pool.uids[0]
        holder = sandbox._CLAIMS[uid].pid
        sleepers = [_as(uid) for _ in range(3)]
        time.sleep(0.2)
        assert sandbox.kill_uid(uid) == 3
        assert all(_gone(p) for p in sleepers)
        assert sandbox._CLAIMS[uid].alive() and sandbox._CLAIMS[uid].pid == holder
    finally:
        pool.release()


def test_a_stopped_holder_holds_nothing_and_its_uid_is_still_killed(far, monkeypatch):
    """Student code (user mode) may stop its uid's holder: the grader never waits for it for long,
    ends it, and kills the uid's processes as the uid itself."""
    import signal
    monkeypatch.setattr(sandbox, "LOCK_DIR", far[0])
    monkeypatch.setattr(sandbox, "ANSWER_TIMEOUT", 0.5)
    pool = sandbox.UidPool(1)
    try:
        uid = pool.uids[0]
        sleeper = _as(uid)
        os.kill(sandbox._CLAIMS[uid].pid, signal.SIGSTOP)
        time.sleep(0.2)
        started = time.monotonic()
        assert sandbox.kill_uid(uid) == 1
        assert _gone(sleeper) and time.monotonic() - started < 5
        assert not sandbox._CLAIMS[uid].alive()
        assert pool.ensure(uid) == uid and sandbox._CLAIMS[uid].alive()
    finally:
        pool.release()


def test_a_holder_ended_by_student_code_is_replaced_before_the_next_submission(far, monkeypatch):
    """In the user mode student code runs as the uid in the grader's PID namespace and can end its
    holder. The worker slot gets the uid claimed again, or, where a process of it runs (it may be
    another batch's by then), another uid; the one given up is never killed by this batch again."""
    monkeypatch.setattr(sandbox, "LOCK_DIR", far[0])
    pool = sandbox.UidPool(2)
    try:
        first, second = pool.uids
        os.kill(sandbox._CLAIMS[first].pid, 9)
        assert pool.ensure(first) == first and sandbox._CLAIMS[first].alive()
        os.kill(sandbox._CLAIMS[second].pid, 9)
        other = _as(second)                          # someone else's, now
        try:
            time.sleep(0.2)
            new = pool.ensure(second)
            assert new not in (first, second) and pool.uids == [first, new]
            assert second not in sandbox._CLAIMS and sandbox._CLAIMS[new].alive()
            pool.release()
            assert os.waitpid(other, os.WNOHANG) == (0, 0), "another batch's process was killed"
        finally:
            os.kill(other, 9)
            os.waitpid(other, 0)
    finally:
        pool.release()


# One batch's pieces, as `course grade` uses them (autograder/workspace.py): its uids, its cgroup
# (sweeping the stale ones first); told "run", a submission's process as each of its uids, each in a
# cgroup of its own; told "clean", the clean-up a batch does at its start and at its end. Each step
# answers with a line of JSON.
BATCH = r"""
import json, os, sys
from autograder import cgroups, sandbox
mark = sys.argv[1]
pool = sandbox.UidPool(2)
cg, why = cgroups.Batch.opened(cgroups.batch_name(), locks=sandbox.private_dir())
print(json.dumps({"uids": pool.uids, "cgroup": [str(f) for f in cg.folders.values()] if cg else [],
                  "why": why}), flush=True)
pids = []
for line in sys.stdin:
    if line.strip() == "run":
        for i, uid in enumerate(pool.uids):
            group = cg.create(f"s0000{i}-side", memory_bytes=256 * 2**20, max_tasks=64) if cg else None
            pid = os.fork()
            if pid == 0:
                if group:
                    cgroups.join(group.procs_files)
                os.setsid()
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.execvp("sleep", ["sleep", mark])
            pids.append(pid)
    else:
        sandbox.kill_orphans()
        for uid in pool.uids:
            sandbox.kill_uid(uid)
        pool.release()
        if cg:
            cg.close()
        for pid in pids:
            os.waitpid(pid, 0)
    print(json.dumps({"done": line.strip()}), flush=True)
"""


def _sleepers(mark: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if p.info["cmdline"] == ["sleep", mark] and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            continue
    return found


def _count_soon(mark: str, expected: int, wait: float = 10.0) -> int:
    """How many processes sleep ``mark`` once ``expected`` of them do (or ``wait`` seconds passed)."""
    deadline = time.monotonic() + wait
    while len(_sleepers(mark)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(_sleepers(mark))


def _start(argv: list[str]) -> subprocess.Popen:
    # a session of its own: a grader that kills "pid 0" (a member it cannot see) ends its own group,
    # never the tests'
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                            start_new_session=True)


def _tell(proc: subprocess.Popen, what: str | None = None) -> dict:
    """Tell a batch ``what`` (if anything) and read its answer."""
    if what is not None and proc.stdin:
        proc.stdin.write(what + "\n")
        proc.stdin.flush()
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"the batch ended without a word: {err[-2000:]}")
    return json.loads(line)


@mounts.needs_mount
@pytest.mark.parametrize("own_locks, pid_namespaces", [(False, False), (True, True)],
                         ids=["private-tmp-one-pid-namespace", "private-tmp-and-locks-own-pid-namespaces"])
def test_two_batches_with_private_tmp_in_namespaces_hold_their_own_uids_and_cgroups(tmp_path, own_locks,
                                                                                     pid_namespaces):
    """(a) the two batches hold different uids; (b) the second one's start (its sweep of stale
    cgroups) and its whole clean-up leave the first one's processes and cgroups alone, though they
    started after the second batch took its uids; then the first one's clean-up ends them all."""
    os.chmod(tmp_path, 0o755)
    stamp = f"{os.getpid() % 1000}.{time.time_ns() % 10**6}"
    marks = {"first": stamp + "1", "second": stamp + "2"}         # unusual sleeps, to find them
    env = ["env", "COURSE_GRADER_LOCK_DIR=/tmp"] if own_locks else []     # a lock folder of its own

    def batch(name: str, first: str = "") -> subprocess.Popen:
        return _start(mounts.private_tmp([*env, sys.executable, "-c", BATCH, marks[name]], tmp_path,
                                         pid_namespace=pid_namespaces, first=first))

    # in PID namespaces of their own the two graders have different pids (the first one a higher
    # one): a grader that took another's cgroup for stale by its pid would sweep it
    first = batch("first", first="/bin/true && ")
    problems = []
    try:
        a = _tell(first)
        second = batch("second")
        try:
            b = _tell(second)
            if set(a["uids"]) & set(b["uids"]):
                problems.append(f"both batches hold uids {sorted(set(a['uids']) & set(b['uids']))}")
            _tell(first, "run")
            alive = _count_soon(marks["first"], 2)
            _tell(second, "run")
            _tell(second, "clean")
        finally:
            if second.poll() is None:
                second.kill()
            second.wait(timeout=30)
        if len(_sleepers(marks["first"])) < alive or alive < 2:
            problems.append(f"the first batch's processes: {alive} started, "
                            f"{len(_sleepers(marks['first']))} left after the second batch's clean-up")
        if a["cgroup"] and not all(os.path.isdir(f) for f in a["cgroup"]):
            problems.append(f"the second batch removed the first one's cgroup {a['cgroup']}")
        if b["cgroup"] and any(os.path.isdir(f) for f in b["cgroup"]):
            problems.append(f"the second batch left its cgroup {b['cgroup']}")
        _tell(first, "clean")
    finally:
        if first.poll() is None:
            first.kill()
        first.wait(timeout=30)
    assert problems == []
    assert not _sleepers(marks["first"]) and not _sleepers(marks["second"])
    assert not any(os.path.isdir(f) for f in a["cgroup"])
    if not a["cgroup"]:
        if mounts.CI:
            pytest.fail(f"no cgroups here ({a['why']}), and CI needs them")
        pytest.skip(f"uids checked; no cgroups here: {a['why']}")


# ---------------------------------------------------------------- two `course grade` runs


def _grade(name: str, root: Path, files: dict[str, bytes], pid_namespace: bool) -> subprocess.Popen:
    (root / name / "class").mkdir(parents=True)
    for f, data in files.items():
        (root / name / "class" / f).write_bytes(data)
    locks = root / name / "locks"                  # shared by nothing: a container's of its own
    locks.mkdir(mode=0o700)
    argv = ["env", f"COURSE_GRADER_LOCK_DIR={locks}", sys.executable, "-m", "autograder",
            str(root / name / "class"), "--assignment", str(ASSIGNMENT), "--out", str(root / name / "out"),
            "--workers", "2", "--no-progress", "--no-similarity"]
    return subprocess.Popen(mounts.private_tmp(argv, root, pid_namespace=pid_namespace),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env=dict(os.environ, OMP_NUM_THREADS="1"), start_new_session=True)


def _batch_of(p: psutil.Process, tops: dict[int, str]) -> str | None:
    """Which batch a process belongs to, by its ancestors (the host's PID namespace shows all)."""
    try:
        for q in [p, *p.parents()]:
            if q.pid in tops:
                return tops[q.pid]
    except psutil.Error:
        pass
    return None


def _rows(out: Path) -> dict[str, tuple[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["file"]: (r["total_points_earned"], r["grading_status"]) for r in csv.DictReader(f)}


@mounts.needs_mount
@pytest.mark.e2e
def test_two_batches_with_private_tmp_in_namespaces_grade_every_row_as_alone(tmp_path):
    """Two `course grade` runs at once, each with /tmp, /var/tmp and a lock folder of its own (they
    share the kernel, the host's uids and its cgroup tree), the second in a PID namespace of its
    own, started while the first one's notebooks run: every row of both gets full marks, no uid is
    ever held by both, and nothing of either is left (no cgroup, no process, no lock file)."""
    os.chmod(tmp_path, 0o755)
    first_files = {f"a{i}.ipynb": with_cells(after=["import time\ntime.sleep(2)"]) for i in range(4)}
    second_files = {f"b{i}.ipynb": with_cells(after=["import time\ntime.sleep(5)"]) for i in range(3)}
    first = _grade("first", tmp_path, first_files, pid_namespace=False)
    tops = {first.pid: "first"}
    seen: dict[int, set[str]] = {}
    ours: set[int] = set()                          # the processes seen in either batch
    groups: set[str] = set()                       # the cgroups their notebooks ran in
    second = None
    deadline = time.monotonic() + 240
    while (first.poll() is None or (second and second.poll() is None)) and time.monotonic() < deadline:
        for p in psutil.process_iter(["uids"]):
            try:
                uid = p.info["uids"].real
            except (AttributeError, TypeError, psutil.Error):
                continue
            if uid not in SANDBOX_UIDS:
                continue
            batch = _batch_of(p, tops)
            if batch is None:
                continue
            seen.setdefault(uid, set()).add(batch)
            ours.add(p.pid)
            try:
                with open(f"/proc/{p.pid}/cgroup") as f:
                    for line in f:
                        path = line.split(":", 2)[2].strip()
                        if "course-grade-" in path:       # the submission's, and its batch's
                            groups |= {path, path.rsplit("/", 1)[0]}
            except OSError:
                pass
            # the first one's notebooks run (a process of its uid in a cgroup of its own): start the other
            if second is None and batch == "first" and groups:
                second = _grade("second", tmp_path, second_files, pid_namespace=True)
                tops[second.pid] = "second"
        time.sleep(0.05)
    if second is None:
        first.kill()
        pytest.fail(f"the first batch's notebooks were never seen running: {first.communicate()[1][-3000:]}")
    outs = {}
    for name, proc in (("first", first), ("second", second)):
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        outs[name] = proc.communicate()
        assert proc.returncode == 0, (name, outs[name][1][-3000:])
    assert _rows(tmp_path / "first" / "out") == {f: ("5.0", "ok") for f in first_files}
    assert _rows(tmp_path / "second" / "out") == {f: ("5.0", "ok") for f in second_files}
    shared = {uid for uid, batches in seen.items() if len(batches) > 1}
    assert not shared, f"uids held by both batches: {sorted(shared)}"
    assert {"first", "second"} <= set().union(*seen.values())
    # another batch on this machine (the rest of the test suite) may hold one of these uids now
    left = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in seen
            and p.pid in ours]
    assert not [p for p in left if p.status() != psutil.STATUS_ZOMBIE], left
    for name in ("first", "second"):
        assert os.listdir(tmp_path / name / "locks" / "course-grader") == []
    mounted = {m[2].rstrip("/") for m in cgroups.mounts()}
    assert not [f"{m}{g}" for g in groups for m in mounted if os.path.isdir(f"{m}{g}")]
