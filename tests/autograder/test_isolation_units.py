"""Fast tests of the isolation's pieces: message checks, upload caps and names, CSV escaping, cgroups
(a real v1 or v2 hierarchy where this machine has one, and v2 against a fake tree), the user
mode's clean-up and the key rings. No notebook is executed here."""
from __future__ import annotations

import csv
import io
import os
import signal
import time
import zipfile
from pathlib import Path

import isolation_attacks as atk
import pytest

from autograder import assignment, cgroups, inputs, messages, report, sandbox

ROOT = os.geteuid() == 0
TEST_UID = sandbox.UID_BASE + 4990          # far above the uids a batch takes


# ---------------------------------------------------------------- messages

@pytest.mark.parametrize("line, reason", [
    (b"[" * 100000, "a message nested too deeply"),
    (b'{"t": "cells_done", "tamper": 1}', "a 'cells_done' message without 'errors'"),
    (b'{"t": "cells_done", "errors": [], "output": "", "tamper": 1}', "tamper is not a list of text"),
    (b'{"t": "cells_done", "errors": [{"cell": 1, "kind": "boom", "error": ""}], "output": "", "tamper": []}',
     "a malformed cell error"),
    (b'{"t": "cell", "i": -1}', "i is not a cell number"),
    (b'{"t": "cell", "i": true}', "i is not a cell number"),
    (b'{"t": "case", "q": "q1"}', "an unknown message 'case'"),
    (b'{"t": 7}', "a message without a kind"),
    (b'"ready"', "a message without a kind"),
    (b'{"t": "ready", "extra": 1}', "unknown fields in a 'ready' message"),
    (b'{"t": "cell", "i": 1', "a message that is not JSON"),
    (b"\xff\xfe", "a message that is not JSON"),
    (b'{"t": "fatal", "reason": "' + b"x" * (2**20) + b'"}', "a message too long"),
])
def test_every_malformed_message_kind_is_refused_with_a_reason(line, reason):
    with pytest.raises(messages.Malformed) as exc:
        messages.parse_submission(line)
    assert str(exc.value) == reason


def test_well_formed_messages_pass_with_their_fields_capped():
    msg = messages.parse_submission(b'{"t": "fatal", "reason": "' + b"r" * 1000 + b'"}')
    assert msg == {"t": "fatal", "reason": "r" * 300}


# ---------------------------------------------------------------- uploads

def _zip(tmp: Path, name: str, members: dict[str, bytes]) -> Path:
    path = tmp / name
    path.write_bytes(atk.zip_of(members))
    return path


def test_lms_downloads_are_recognised_and_keep_their_names():
    assert inputs.is_lms_download(["smithjohn_12345_67890_hw.ipynb", "doejane_LATE_1_2_hw-1.ipynb",
                                   "leeann_3_4_upload.zip"])
    assert inputs.is_lms_download(["John Smith_123_assignsubmission_file_/hw.ipynb",
                                   "Li Wei_5_assignsubmission_file_hw.ipynb"])
    assert not inputs.is_lms_download(["honest_correct.ipynb", "smithjohn_12345_67890_hw.ipynb"])
    assert not inputs.is_lms_download(["part1.ipynb", "part2.ipynb"])
    assert not inputs.is_lms_download([])


def test_a_students_zip_with_several_notebooks_is_prefixed_with_its_name(tmp_path):
    z = _zip(tmp_path, "bob.zip", {"hw/part1.ipynb": b"1", "smithjohn_1_2_hw.ipynb": b"2"})
    subs = inputs.collect([str(z)], tmp_path)
    assert [(s.file, s.data, s.notebook_name) for s in subs] == [
        ("bob.zip/hw/part1.ipynb", b"1", "part1.ipynb"), ("bob.zip/smithjohn_1_2_hw.ipynb", b"2",
                                                          "smithjohn_1_2_hw.ipynb")]
    assert all(s.path.parent == tmp_path and s.path.name[:5].isdigit() for s in subs)


def test_a_zip_inside_a_bulk_download_is_that_students_upload(tmp_path):
    upload = atk.zip_of({"a.ipynb": b"a", "b.ipynb": b"b"})
    z = _zip(tmp_path, "bulk.zip", {"smithjohn_1_2_up.zip": upload, "doejane_3_4_hw.ipynb": b"c"})
    assert sorted(s.file for s in inputs.collect([str(z)], tmp_path)) == [
        "doejane_3_4_hw.ipynb", "smithjohn_1_2_up.zip/a.ipynb", "smithjohn_1_2_up.zip/b.ipynb"]


def test_clash_from_an_upload_marks_both_rows(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.ipynb").write_bytes(b"real")
    (tmp_path / "class" / "evil.zip").write_bytes(atk.zip_of({"x/alice.ipynb": b"fake"}))
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "alice.ipynb").write_bytes(b"again")
    (tmp_path / "stage").mkdir()
    args = [str(tmp_path / "class"), str(tmp_path / "more" / "alice.ipynb")]
    subs = inputs.collect(args, tmp_path / "stage")
    by_file = {s.file: s for s in subs}
    assert set(by_file) == {"alice.ipynb (name clash 1 of 2)", "alice.ipynb (name clash 2 of 2)", "evil.zip"}
    assert by_file["evil.zip"].data == b"fake" and by_file["evil.zip"].problem is None
    assert all(s.path is None and s.problem.startswith("name clash") for s in subs if "clash" in s.file)


def _crafted_zip(sizes: list[tuple[int, int]]) -> bytes:
    """A zip whose directory claims members of (uncompressed, compressed) sizes; no data needed:
    the caps are checked on the directory before anything is read."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, _ in enumerate(sizes):
            zf.writestr(f"m{k}.ipynb", b"")
    data = bytearray(buf.getvalue())
    pos = 0
    for size, packed in sizes:
        pos = data.index(b"PK\x01\x02", pos)
        data[pos + 20:pos + 28] = packed.to_bytes(4, "little") + size.to_bytes(4, "little")
        pos += 4
    return bytes(data)


@pytest.mark.parametrize("sizes, status", [
    ([(200 * 2**20, 200 * 2**20)] * 3, "rejected upload: the zip would unpack to 600 MB (at most 512 MB)"),
    ([(100 * 2**20, 2**18)], "rejected file: it unpacks to 100 MB from 256 KB (a zip bomb?)"),
])
def test_upload_caps_are_checked_on_the_directory_before_reading(tmp_path, sizes, status):
    (tmp_path / "up.zip").write_bytes(_crafted_zip(sizes))
    (sub,) = inputs.collect([str(tmp_path / "up.zip")], tmp_path)
    assert (sub.file, sub.path, sub.problem) == ("up.zip", None, status)


def test_a_zip_bomb_is_refused_without_unpacking_it(tmp_path):
    import tracemalloc
    (tmp_path / "bomb.zip").write_bytes(atk.bomb(members=3, size=96 * 2**20))
    tracemalloc.start()
    subs = inputs.collect([str(tmp_path / "bomb.zip")], tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [s.file for s in subs] == [f"bomb.zip/part{k}.ipynb" for k in range(3)]   # each on its own row
    assert all(s.path is None and s.problem.startswith("rejected file: it unpacks to 96 MB from")
               for s in subs)
    assert peak < 16 * 2**20


def test_one_bomb_in_a_bulk_download_costs_only_its_own_row(tmp_path):
    """Eve's member is refused alone; an honest notebook of repeated output under RATIO_FLOOR
    (9 MB of spaces: it deflates over 600 times) is no bomb."""
    padded = atk.SOLUTION.read_bytes().rstrip() + b" " * (9 * 2**20)
    big = b'{"cells": [], "x": "' + b"y" * (inputs.RATIO_FLOOR + 2**20) + b'"}'
    with zipfile.ZipFile(tmp_path / "bulk.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("alice_101_1_hw.ipynb", atk.SOLUTION.read_bytes())
        zf.writestr("eve_103_3_hw.ipynb", big)
        zf.writestr("padded_104_4_hw.ipynb", padded)
    (tmp_path / "stage").mkdir()
    subs = {s.file: s for s in inputs.collect([str(tmp_path / "bulk.zip")], tmp_path / "stage")}
    assert subs["alice_101_1_hw.ipynb"].problem is None and subs["padded_104_4_hw.ipynb"].problem is None
    assert subs["padded_104_4_hw.ipynb"].path.stat().st_size == len(padded)
    assert subs["eve_103_3_hw.ipynb"].problem.startswith("rejected file: it unpacks to 65 MB from")


def test_members_are_streamed_to_staging_in_pieces(tmp_path):
    import tracemalloc
    big = b'{"cells": [], "x": "' + b"y" * (40 * 2**20) + b'"}'
    (tmp_path / "big.zip").write_bytes(atk.zip_of({"a/big.ipynb": big}))
    tracemalloc.start()
    (sub,) = inputs.collect([str(tmp_path / "big.zip")], tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sub.problem is None and sub.path.stat().st_size == len(big)
    assert peak < 8 * 2**20, peak


def test_long_names_get_short_scratch_names_and_short_stems():
    long = "ü" * 200 + ".ipynb"
    assert inputs.short_name(long).endswith(".ipynb") and len(inputs.short_name(long).encode()) <= 100
    assert inputs.short_name("../..") == "submission.ipynb"
    assert inputs.short_name("a/b\\c.ipynb") == "c.ipynb"
    stem = inputs.safe_stem("x" * 10 + "/" + "😀" * 200 + ".ipynb")
    assert len(stem.encode()) <= inputs.STEM_BYTES and stem.startswith("xxxxxxxxxx__😀")


def test_a_name_that_is_not_utf8_becomes_one_display_name_everywhere(tmp_path):
    """A Latin-1 file name (a lone surrogate in Python) is collected, under a display name."""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / os.fsdecode(b"ren\xe9.ipynb")).write_bytes(b"1")
    (tmp_path / "stage").mkdir()
    (sub,) = inputs.collect([str(tmp_path / "class")], tmp_path / "stage")
    assert (sub.file, sub.notebook_name, sub.data) == ("ren\ufffd.ipynb", "ren\ufffd.ipynb", b"1")
    assert "\udce9" not in sub.source and sub.source.endswith("ren\ufffd.ipynb")
    assert inputs.display_name(os.fsdecode(b"caf\xc3\xa9\x85.ipynb")) == "caf\u00e9\ufffd.ipynb"
    assert inputs.display_name("a\ud800b\u2028.ipynb") == "a\ufffdb?.ipynb"


def test_at_most_three_notebooks_of_one_student_are_run(tmp_path):
    """Two uploads of 20 notebooks by one Canvas student must not be 40 rows, 40 time limits."""
    uploads = {f"eve_333_100{k}_{k}.zip": atk.zip_of({f"part{j:02d}.ipynb": b"e" for j in range(20)})
               for k in (3, 4)}
    z = _zip(tmp_path, "bulk.zip",
             {"alice_111_1001_hw.ipynb": b"a", "bob_222_1002_hw.ipynb": b"b", **uploads})
    (tmp_path / "folder").mkdir()      # a zip found in a folder is one student's upload
    (tmp_path / "folder" / "own.zip").write_bytes(atk.zip_of({f"p{j}.ipynb": b"o" for j in range(5)}))
    # a zip the instructor gives that is not an LMS download is the instructor's own collection
    (tmp_path / "class.zip").write_bytes(atk.zip_of({f"s{j}.ipynb": b"c" for j in range(5)}))
    (tmp_path / "stage").mkdir()
    subs = inputs.collect([str(z), str(tmp_path / "folder"), str(tmp_path / "class.zip")], tmp_path / "stage")
    run = [s.file for s in subs if s.path is not None]
    assert run == ["alice_111_1001_hw.ipynb", "bob_222_1002_hw.ipynb", "eve_333_1003_3.zip/part00.ipynb",
                   "eve_333_1003_3.zip/part01.ipynb", "eve_333_1003_3.zip/part02.ipynb",
                   "own.zip/p0.ipynb", "own.zip/p1.ipynb", "own.zip/p2.ipynb",
                   *[f"class.zip/s{j}.ipynb" for j in range(5)]]
    held = [s for s in subs if s.path is None]
    assert len(held) == 37 + 2 and len(subs) == 52
    assert {s.problem for s in held} == {inputs.over_cap_status(40), inputs.over_cap_status(5)}
    assert inputs.over_cap_status(40).startswith("not graded: more than 3 notebooks from one student")
    assert len(list((tmp_path / "stage").glob("*.ipynb"))) == 13


# ---------------------------------------------------------------- grades.csv

def test_cells_a_spreadsheet_would_run_are_escaped():
    asg = assignment.load(str(atk.SOLUTION.parent))
    rows = [report.Result(file=f, stem=str(i), status="ok") for i, f in enumerate(
        ["=HYPERLINK(\"x\")", "+1.ipynb", "-2.ipynb", "@SUM(A1).ipynb", "\tt.ipynb", "plain.ipynb"])]
    text = report.grades_csv(asg, rows)
    files = [r["file"] for r in csv.DictReader(io.StringIO(text))]
    assert files == ["'\tt.ipynb", "'+1.ipynb", "'-2.ipynb", "'=HYPERLINK(\"x\")", "'@SUM(A1).ipynb",
                     "plain.ipynb"]
    assert not [line for line in text.splitlines() if line.startswith(report.FORMULA_START)]


# ---------------------------------------------------------------- cgroups

def test_cgroup_v2_files_are_written_as_the_kernel_expects(tmp_path, monkeypatch):
    here = tmp_path / "grader.scope"
    here.mkdir()
    (here / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (here / "cgroup.subtree_control").write_text("")
    (here / "cgroup.procs").write_text(f"{os.getpid()}\n")
    monkeypatch.setattr(cgroups, "mounts", lambda: [("cgroup2", "/", str(tmp_path), set())])
    monkeypatch.setattr(cgroups, "own_cgroups", lambda: {"": "/grader.scope"})
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    batch, why = cgroups.Batch.opened("course-grade-1", prefer="v2", workers=2)
    assert batch is not None and batch.kind == "v2", why
    assert (here / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (here / "course-grade-1" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    # two workers weigh as two processes against the rest of the machine, not as one
    assert (here / "course-grade-1" / "cpu.weight").read_text() == "200"
    group = batch.create("s00001-abc", memory_bytes=2**30, max_tasks=512)
    g = here / "course-grade-1" / "s00001-abc"
    written = [(g / f).read_text() for f in ("memory.max", "pids.max", "cpu.weight")]
    assert written == [str(2**30), "512", "100"]
    assert group.procs_files == [str(g / "cgroup.procs")]
    (g / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    (g / "memory.peak").write_text("12345\n")
    assert (group.oom_kills(), group.peak_memory()) == (1, 12345)


def test_a_batch_cgroup_is_swept_only_when_its_lock_proves_its_grader_gone(tmp_path):
    """Graders in PID namespaces of their own share the host's cgroup tree without seeing each
    other's pids (and may have the same one): a batch's cgroup is another's to sweep only when its
    lock file in the sweeper's lock folder is there and free, whatever its name says."""
    from autograder import locks as lockfiles
    here, folder = tmp_path / "grader.scope", tmp_path / "locks"
    here.mkdir()
    folder.mkdir()
    names = {"alive": "course-grade-2-aaaaaaaaaaaa", "dead": "course-grade-2-bbbbbbbbbbbb",
             "other_folder": "course-grade-1", "dead_leaf": "course-grade-7-cccccccccccc-grader"}
    for name in names.values():
        (here / name / "s00001-x").mkdir(parents=True)
    held = lockfiles.take(folder / f"cgroup-{names['alive']}.lock")
    assert held is not None
    for dead in ("course-grade-2-bbbbbbbbbbbb", "course-grade-7-cccccccccccc"):
        os.close(lockfiles.take(folder / f"cgroup-{dead}.lock")[0])    # its grader died: free
    try:
        cgroups._sweep_stale([here], folder)
        assert sorted(p.name for p in here.iterdir()) == [names["other_folder"], names["alive"]]
        # what was swept took its lock file along; the live batch's stays
        assert [p.name for p in folder.iterdir()] == [f"cgroup-{names['alive']}.lock"]
        cgroups._sweep_stale([here], None)              # no lock folder: nothing is anyone's to sweep
        assert len(list(here.iterdir())) == 2
    finally:
        os.close(held[0])
    assert cgroups.batch_name() != cgroups.batch_name()
    assert cgroups.batch_name().startswith(f"course-grade-{os.getpid()}-")


@pytest.mark.skipif(not ROOT, reason="cgroups need root")
def test_a_real_cgroup_counts_the_whole_tree_and_kills_it_at_once():
    batch, why = cgroups.Batch.opened(f"course-grade-{os.getpid()}-unit", workers=3)
    if batch is None:
        pytest.skip(why)
    try:
        weight = "cpu.weight" if batch.kind == "v2" else "cpu.shares"
        cpu = batch.folders["v2" if batch.kind == "v2" else "cpu"]
        assert (cpu / weight).read_text().strip() == ("300" if batch.kind == "v2" else "3072")
        group = batch.create("s1", memory_bytes=200 * 2**20, max_tasks=20)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            cgroups.join(group.procs_files)
            forked = 0
            for _ in range(40):
                try:
                    if os.fork() == 0:
                        os.setsid()
                        time.sleep(60)
                        os._exit(0)
                    forked += 1
                except OSError:
                    break
            os.write(w, bytes([forked]))
            hog = bytearray(300 * 2**20)
            for i in range(0, len(hog), 4096):
                hog[i] = 1
            time.sleep(60)
            os._exit(0)
        os.close(w)
        forked = os.read(r, 1)[0]
        _, status = os.waitpid(pid, 0)          # the memory hog dies: over 200 MB together
        assert forked < 20 and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert group.oom_kills() >= 1 and group.peak_memory() <= 200 * 2**20
        assert len(group.pids()) == forked      # its children, each in a session of its own
        group.kill()
        assert group.pids() == []
        assert group.remove()
    finally:
        batch.close()
    assert not any(os.path.exists(f) for f in batch.folders.values())


# ---------------------------------------------------------------- what outlives a uid's processes

def _as_uid_wait(uid: int, code: str) -> None:
    sandbox._as_uid(uid, lambda: exec(code, {"sandbox": sandbox, "os": os}))


@pytest.mark.skipif(not ROOT, reason="needs root")
def test_clear_keys_empties_the_user_key_rings():
    from test_isolation import key_in_rings
    _as_uid_wait(TEST_UID, "sandbox.keyctl(0, -4, 1)\n"
                           "import ctypes\n"
                           "sandbox._libc.syscall(ctypes.c_long(248), b'user', b'unit-key', b'v',"
                           " ctypes.c_long(1), ctypes.c_long(-4))")
    assert key_in_rings(TEST_UID, "unit-key")
    sandbox.clear_keys(TEST_UID)
    assert not key_in_rings(TEST_UID, "unit-key")


@pytest.mark.skipif(not ROOT, reason="needs root")
def test_user_mode_sweeps_files_and_sysv_ipc_of_its_uid():
    key = 0x1C0FFE0
    _as_uid_wait(TEST_UID, f"import ctypes\nlibc = ctypes.CDLL(None)\nlibc.shmget({key}, 4096, 0o1600)\n"
                           f"libc.msgget({key + 1}, 0o1600)\n"
                           "open('/dev/shm/unit-sweep', 'w').write('x')\nos.mkdir('/tmp/unit-sweep-dir')")
    removed = sandbox.sweep_uid_files(TEST_UID)
    assert "/dev/shm/unit-sweep" in removed and "/tmp/unit-sweep-dir" in removed
    assert sum(r.startswith(("shm ", "msg ")) for r in removed) >= 2
    assert not os.path.exists("/dev/shm/unit-sweep") and not os.path.exists("/tmp/unit-sweep-dir")
    for kind in ("shm", "msg"):
        with open(f"/proc/sysvipc/{kind}") as f:
            assert not [ln for ln in f.read().splitlines()[1:] if int(ln.split()[0]) in (key, key + 1)]
