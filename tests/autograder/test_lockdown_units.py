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
    home = sandbox.LOCK_DIR / "course-grader-modes"
    home.mkdir(mode=0o777)
    os.chmod(home, 0o777)
    with pytest.raises(sandbox.SandboxError, match="not the grader's own folder"):
        lockdown.Lockdown(list(folders))
    assert _modes(folders) == folders


def test_a_registry_that_is_not_the_graders_is_refused_and_changes_nothing(folders):
    home = sandbox.LOCK_DIR / "course-grader-modes"
    home.mkdir(mode=0o700)
    (home / "modes.json").write_text(json.dumps({"/etc": 0o777, "x": "rwx"}))
    with pytest.raises(sandbox.SandboxError, match="not what the grader writes"):
        lockdown.Lockdown(list(folders)).close_folders()
    assert _modes(folders) == folders
