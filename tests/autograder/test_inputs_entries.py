"""Every entry among the submissions is a row or a named skip, never a silent absence: links
(dangling, looping, to outside the submissions), FIFOs, sockets, devices, folders named like a
notebook, unreadable and empty files, names that are not UTF-8; given as a folder, as a list of
paths, or inside a zip. And the machine's refusals as one sentence (:mod:`autograder.refusal`)."""
from __future__ import annotations

import errno
import os
import socket
import sqlite3
import threading
import zipfile
from pathlib import Path

import hostile
import pytest

from autograder import inputs, refusal, report
from autograder.status import kind_of

LINK = "unreadable file: a link"
ROWS = {
    "dangling.ipynb": "unreadable file: a link to nothing (what it names does not exist)",
    "loop1.ipynb": "unreadable file: a link that loops (not followed)",
    "loop2.ipynb": "unreadable file: a link that loops (not followed)",
    "out.ipynb": "unreadable file: a link to outside the submissions (not followed: give what it points "
                 "to instead)",
    "mem.ipynb": "unreadable file: a link to outside the submissions (not followed: give what it points "
                 "to instead)",
    "fifo.ipynb": "unreadable file: a FIFO (named pipe), not a file; not read",
    "sock.ipynb": "unreadable file: a socket, not a file",
    "x.ipynb": "unreadable file: a folder named like a notebook, not a file",
}


def _class(tmp_path: Path) -> Path:
    """A folder of 8 notebooks and every kind of entry that is not one."""
    d = tmp_path / "class"
    d.mkdir()
    for name in "abcdefgh":
        (d / f"{name}.ipynb").write_bytes(b"{}")
    (d / "dangling.ipynb").symlink_to(d / "nothing.ipynb")
    os.mkfifo(d / "fifo.ipynb")
    (d / "x.ipynb").mkdir()
    (d / "loop1.ipynb").symlink_to("loop2.ipynb")
    (d / "loop2.ipynb").symlink_to("loop1.ipynb")
    (tmp_path / "secret.ipynb").write_bytes(b"the grader's")
    (d / "out.ipynb").symlink_to(tmp_path / "secret.ipynb")
    (d / "mem.ipynb").symlink_to("/proc/self/mem")
    (d / "alias.ipynb").symlink_to("a.ipynb")                # inside the submissions: followed
    (d / "linked").symlink_to(tmp_path)                      # a folder: not followed, named
    (d / ".ipynb_checkpoints").mkdir()
    (d / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_bytes(b"{}")
    (d / "notes.txt").write_text("not a notebook")
    (d / "empty.ipynb").write_bytes(b"")
    (d / os.fsdecode(b"ren\xe9.ipynb")).write_bytes(b"{}")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(d / "sock.ipynb"))
    s.close()
    return d


def _collect(args: list[str], tmp_path: Path) -> tuple[list[inputs.Submission], list[inputs.Skipped]]:
    skipped: list[inputs.Skipped] = []
    stage = tmp_path / "stage"
    stage.mkdir(exist_ok=True)
    done: list = []
    # a FIFO opened for reading would block: collect in a thread, so that a hang fails the test
    t = threading.Thread(target=lambda: done.append(inputs.collect(args, stage, skipped)), daemon=True)
    t.start()
    t.join(30)
    assert done, "collect() blocked (a FIFO opened for reading?)"
    return done[0], skipped


def test_every_entry_of_a_folder_is_a_row_or_a_named_skip(tmp_path):
    d = _class(tmp_path)
    subs, skipped = _collect([str(d)], tmp_path)
    by = {s.file: s for s in subs}
    for name, status in ROWS.items():
        assert by[name].problem == status and by[name].path is None, name
        assert kind_of(by[name].problem).unreadable              # held from the LMS import
    graded = {"a.ipynb", "b.ipynb", "c.ipynb", "d.ipynb", "e.ipynb", "f.ipynb", "g.ipynb", "h.ipynb",
              "alias.ipynb", "empty.ipynb", "ren\ufffd.ipynb"}
    assert {f for f, s in by.items() if s.path is not None} == graded
    assert by["alias.ipynb"].data == b"{}" and by["empty.ipynb"].data == b""
    assert set(by) == graded | set(ROWS)
    assert {(s.name, s.rule) for s in skipped} == {
        (".ipynb_checkpoints/", inputs.SKIP_CHECKPOINTS), ("linked/", inputs.SKIP_LINKED_FOLDER),
        ("notes.txt", inputs.SKIP_NOT_NOTEBOOK)}
    entries = len(list(os.scandir(d)))
    assert len(subs) + len(skipped) == entries == 22
    assert inputs.entries_line(len(subs), skipped).startswith("22 entries found: 19 rows, 3 skipped (")
    assert not any(b"the grader's" == p.read_bytes() for p in (tmp_path / "stage").iterdir())


def test_every_path_given_is_a_row(tmp_path):
    """A list of paths (a shell's glob over the folder) and /proc/self/mem itself."""
    d = _class(tmp_path)
    args = sorted(str(p) for p in d.iterdir() if not p.name.startswith(".")) + ["/proc/self/mem"]
    subs, skipped = _collect(args, tmp_path)
    by = {s.file: s for s in subs}
    assert len(subs) == len(args) and skipped == []
    for name, status in ROWS.items():
        assert by[name].problem == status, name
    assert by["linked"].problem.startswith("unreadable file: a link to outside the submissions")
    assert by["mem"].problem == "unreadable file: Input/output error"
    assert by["alias.ipynb"].data == b"{}" and by["notes.txt"].data == b"not a notebook"


def test_a_folder_that_cannot_be_listed_is_a_row(tmp_path, monkeypatch):
    d = tmp_path / "class"
    (d / "locked").mkdir(parents=True)
    (d / "a.ipynb").write_bytes(b"{}")
    real = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)
    monkeypatch.setattr(inputs.os, "scandir", scandir)
    subs, _ = _collect([str(d)], tmp_path)
    assert [(s.file, s.problem) for s in subs] == [
        ("a.ipynb", None),
        ("locked/", "unreadable file: a folder that cannot be listed (Permission denied): the notebooks "
                    "in it were not seen")]


def test_what_a_zip_holds_besides_notebooks_is_named(tmp_path):
    z = tmp_path / "bulk.zip"
    z.write_bytes(hostile.zip_of({"alice_1_2_hw.ipynb": b"{}", "__MACOSX/x/._hw.ipynb": b"j",
                                  "__MACOSX/y/._hw.ipynb": b"j", "bob_3_4_hw.ipynb": b"{}",
                                  "bob_3_4_notes.pdf": b"%PDF"}))
    subs, skipped = _collect([str(z)], tmp_path)
    assert [s.file for s in subs] == ["alice_1_2_hw.ipynb", "bob_3_4_hw.ipynb"]
    assert [(s.name, s.rule) for s in skipped] == [("bulk.zip/__MACOSX/", inputs.SKIP_MACOS),
                                                   ("bulk.zip/bob_3_4_notes.pdf", inputs.SKIP_NOT_NOTEBOOK)]


def test_a_full_staging_folder_is_the_grader_s_refusal_not_a_row(tmp_path, monkeypatch):
    """The copy's write failing is the grader's disk: collect raises it (a sentence follows)."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "a.ipynb").write_bytes(b"{}")

    class Full:
        def __init__(self, *a, **k):
            pass

        def write(self, _data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            pass
    real_open = open
    (tmp_path / "stage").mkdir()
    monkeypatch.setattr("builtins.open", lambda p, m="r", *a, **k:
                        Full() if m == "wb" and "stage" in str(p) else real_open(p, m, *a, **k))
    with pytest.raises(OSError) as caught:
        inputs.collect([str(tmp_path / "class")], tmp_path / "stage")
    assert caught.value.errno == errno.ENOSPC


def test_the_report_lists_the_skips(tmp_path):
    from autograder import assignment
    asg = assignment.load(str(hostile.FIXTURE))
    skipped = [{"name": ".ipynb_checkpoints/", "rule": inputs.SKIP_CHECKPOINTS},
               {"name": "notes<b>.txt", "rule": inputs.SKIP_NOT_NOTEBOOK}]
    page = report.report_html(asg, [], {"skipped": skipped})
    assert "Skipped entries (2)" in page and "notes&lt;b&gt;.txt" in page
    assert "2 entries found: 0 rows, 2 skipped" in page
    assert "Skipped entries (0)" in report.report_html(asg, [], {})


# ---------------------------------------------------------------- refusals as one sentence

@pytest.mark.parametrize("code, words", [
    (errno.ENOSPC, "no space left in the scratch folder /var/tmp (at /var/tmp/course-grade-x/a): free "
                   "space on its disk, or give another with --scratch DIR"),
    (errno.EDQUOT, "the disk quota is used up in the scratch folder /var/tmp"),
    (errno.EROFS, "the scratch folder /var/tmp is on a read-only file system"),
    (errno.EACCES, "permission denied in the scratch folder /var/tmp"),
    (errno.EIO, "input/output error in the scratch folder /var/tmp"),
])
def test_each_refusal_is_one_sentence_naming_the_folder(code, words):
    err = OSError(code, os.strerror(code), "/var/tmp/course-grade-x/a")
    said = refusal.sentence("course grade", err, ["subs", "--out", "g"])
    assert said.startswith(f"course grade: {words}"), said
    assert "\n" not in said and said.endswith("the output folder was left as it was")


def test_refusals_name_the_output_folder_and_lock_folder():
    out = os.path.abspath("g")
    said = refusal.sentence("course grade", OSError(errno.EROFS, "x", f"{out}/.staging-12/grades.csv"),
                            ["subs", "--out", "g"])
    assert f"the output folder {out} is on a read-only file system" in said and "another --out" in said
    said = refusal.sentence("course merge", OSError(errno.ENOSPC, "x", f"{out}/x"), ["g"])
    assert "no space left in the output folder g" in said and "--scratch" not in said
    from autograder.sandbox import LOCK_DIR
    said = refusal.sentence("course grade", OSError(errno.EACCES, "x", str(LOCK_DIR / "course-grader")))
    assert "the grader's lock folder" in said and "COURSE_GRADER_LOCK_DIR" in said
    # a copy's destination, not its source, is where the disk is full
    said = refusal.sentence("course grade", OSError(errno.ENOSPC, "x", "/repo/course/nets.py",
                                                    None, "/scratch/course-grade-1/package/nets.py"))
    assert "the scratch folder /scratch" in said


def test_other_errors_keep_their_traceback():
    assert refusal.sentence("course grade", OSError(errno.ENOENT, "x", "/nope")) is None
    assert refusal.sentence("course grade", ValueError("a bug")) is None
    with pytest.raises(FileNotFoundError):
        refusal.run("course grade", lambda argv: open("/nope/x"), [])
    said = refusal.sentence("course manual", sqlite3.OperationalError("database or disk is full"))
    assert said.startswith("course manual: no space left in ")


def test_run_prints_the_sentence_and_exits_1(capsys):
    def full(argv):
        raise OSError(errno.ENOSPC, "No space left on device", "/var/tmp/course-grade-1/x")
    assert refusal.run("course grade", full, []) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "--scratch DIR" in err


def test_zip_members_are_never_links(tmp_path):
    """A zip's member is streamed, never extracted: a member that is a link is its text, a row."""
    z = tmp_path / "up.zip"
    with zipfile.ZipFile(z, "w") as zf:
        info = zipfile.ZipInfo("hw.ipynb")
        info.external_attr = 0o120777 << 16          # a symbolic link, as Info-ZIP stores one
        zf.writestr(info, "/etc/shadow")
    subs, _ = _collect([str(z)], tmp_path)
    assert [s.data for s in subs] == [b"/etc/shadow"]
