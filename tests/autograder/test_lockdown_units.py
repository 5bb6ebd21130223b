"""User mode's closed folders are shared by the batches of one machine (autograder/lockdown.py): the
first batch to finish never reopens them while another still runs student code, the last one puts
back the folders' own modes, and a killed batch's closed modes are never taken for the folders' own.
Two batches in one process hold separate open files, so their locks meet as two processes' would."""
from __future__ import annotations

import json
import os
import stat

import pytest

from autograder import lockdown, sandbox


@pytest.fixture
def folders(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "LOCK_DIR", tmp_path / "locks")
    (tmp_path / "locks").mkdir()
    made = {}
    for name, mode in (("tests", 0o755), ("solutions", 0o750), ("later_weeks.py", 0o644)):
        p = tmp_path / name
        p.mkdir() if "." not in name else p.write_text("answers")
        os.chmod(p, mode)
        made[str(p)] = mode
    return made


def _modes(paths) -> dict[str, int]:
    return {p: stat.S_IMODE(os.stat(p).st_mode) for p in paths}


def test_the_first_batch_to_finish_leaves_the_folders_closed_for_the_other(folders):
    paths = list(folders)
    a, b = lockdown.Lockdown(paths), lockdown.Lockdown(paths[:2])
    a.close_folders()
    b.close_folders()             # finds them closed: their own modes are the ones a wrote down
    assert all(m & 0o077 == 0 for m in _modes(paths).values())
    a.release()
    assert all(m & 0o077 == 0 for m in _modes(paths).values()), "reopened while b still runs"
    b.release()
    assert _modes(paths) == folders
    assert lockdown.Lockdown.modes_written() == {}


def test_a_killed_batchs_closed_modes_are_not_taken_for_the_folders_own(folders):
    paths = list(folders)
    killed = lockdown.Lockdown(paths)
    killed.close_folders()
    os.close(killed._active)      # what the kernel does for a killed process: its lock is gone
    assert all(m & 0o077 == 0 for m in _modes(paths).values())
    later = lockdown.Lockdown(paths[:1])
    later.close_folders()
    later.release()
    assert _modes(paths) == folders


def test_a_batch_alone_puts_its_folders_back(folders):
    paths = list(folders)
    only = lockdown.Lockdown(paths)
    only.close_folders()
    assert lockdown.Lockdown.modes_written() == folders
    only.release()
    only.release()                # twice is harmless
    assert _modes(paths) == folders


def test_a_registry_folder_someone_else_could_write_is_refused(folders):
    home = sandbox.LOCK_DIR / "course-grader"
    home.mkdir(mode=0o777)
    os.chmod(home, 0o777)
    with pytest.raises(sandbox.SandboxError, match="not the grader's own folder"):
        lockdown.Lockdown(list(folders))
    assert _modes(folders) == folders


def test_a_link_in_place_of_the_graders_folder_is_refused(folders, tmp_path):
    """Student code (it may write /tmp while it runs) can plant links under the names of the uid
    lock files, which the next batch's open would follow to the registry's guard lock and hang on.
    Nothing of the grader's lies in /tmp itself, and its own folder is never a link."""
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (sandbox.LOCK_DIR / "course-grader").symlink_to(target)
    with pytest.raises(sandbox.SandboxError, match="not the grader's own folder"):
        sandbox.private_dir()
    with pytest.raises(sandbox.SandboxError):
        sandbox.UidPool(1)
    assert list(target.iterdir()) == []


def test_a_registry_that_is_not_the_graders_is_refused_and_changes_nothing(folders):
    home = sandbox.LOCK_DIR / "course-grader"
    home.mkdir(mode=0o700)
    (home / lockdown.REGISTRY).write_text(json.dumps({"/etc": 0o777, "x": "rwx"}))
    with pytest.raises(sandbox.SandboxError, match="not what the grader writes"):
        lockdown.Lockdown(list(folders)).close_folders()
    assert _modes(folders) == folders


def test_a_link_under_a_lock_files_name_is_not_followed(folders, tmp_path):
    victim = tmp_path / "victim"
    home = sandbox.private_dir()
    os.symlink(victim, home / "uid-70000.lock")
    with pytest.raises(OSError):
        sandbox.open_lock("uid-70000.lock")
    assert not victim.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a process as another uid (root only)")
def test_what_a_killed_batch_left_running_is_killed_before_the_folders_reopen(folders, monkeypatch):
    """A batch killed (SIGKILL, or SIGTERM before it handled it) can leave a student's daemon
    running as its uid, which would read the tests and the solutions once the next batch, the last
    to finish, reopens the folders. The last batch kills every process of a uid that a batch was
    handed and no running batch holds, before it reopens them; a uid a running batch holds is left."""
    import signal
    import time

    monkeypatch.setattr(sandbox, "UID_BASE", 70000)          # far from the uids of real batches
    orphan, held = 70001, 70002
    for uid in (orphan, held):
        os.close(sandbox.open_lock(f"uid-{uid}.lock"))        # both were handed to a batch once
    holder = sandbox.open_lock(f"uid-{held}.lock")
    import fcntl
    fcntl.flock(holder, fcntl.LOCK_EX)                        # ... and a running batch holds this one
    pids = []
    for uid in (orphan, held):
        pid = os.fork()
        if pid == 0:                                          # pragma: no cover - child
            os.setsid()
            os.setgid(uid)
            os.setuid(uid)
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    try:
        time.sleep(0.3)
        batch = lockdown.Lockdown(list(folders))
        batch.close_folders()
        batch.release()
        assert _modes(folders) == folders
        time.sleep(0.3)
        assert os.waitpid(pids[0], os.WNOHANG)[0] == pids[0], "the orphan still runs"
        assert os.waitpid(pids[1], os.WNOHANG) == (0, 0), "a running batch's process was killed"
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        os.close(holder)


def test_sigterm_and_sighup_stop_a_batch_through_its_clean_up():
    """`timeout`, Slurm and Kubernetes stop a job with SIGTERM: the grader leaves as Ctrl-C does,
    through every `finally`, so its clean-up (processes killed, folders' modes put back) runs."""
    import signal
    import time

    from autograder import api
    for sig in (signal.SIGTERM, signal.SIGHUP):
        before = signal.getsignal(sig)
        cleaned = []
        with pytest.raises(SystemExit) as stopped:
            with api._stopped_cleanly():
                try:
                    os.kill(os.getpid(), sig)
                    time.sleep(5)             # the handler stops it at once
                finally:
                    cleaned.append(sig)
        assert stopped.value.code == 128 + sig and cleaned == [sig]
        assert signal.getsignal(sig) == before


def test_a_killed_batchs_private_folder_is_removed_by_the_next_batch(tmp_path):
    """A batch killed before its clean-up left its private folder in /var/tmp (the staging copies of
    the submissions among it). The next batch removes every such folder whose lock no batch holds,
    and leaves a running batch's, and a folder it did not make."""
    import fcntl

    from autograder import workspace

    def batch_folder(name: str, held: bool) -> tuple[object, int]:
        d = tmp_path / name
        (d / "staging").mkdir(parents=True)
        (d / "staging" / "student.ipynb").write_text("{}")
        fd = os.open(d / workspace.ROOT_LOCK, os.O_CREAT | os.O_RDWR, 0o600)
        if held:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            os.close(fd)
        return d, fd

    killed, _ = batch_folder("course-grade-killed", held=False)
    running, fd = batch_folder("course-grade-running", held=True)
    other = tmp_path / "course-grade-not-ours"
    other.mkdir()
    mine = tmp_path / "course-grade-mine"
    mine.mkdir()
    try:
        assert workspace.remove_stale_roots(tmp_path, keep=mine) == [killed]
        assert not killed.exists() and running.exists() and other.exists() and mine.exists()
    finally:
        os.close(fd)
