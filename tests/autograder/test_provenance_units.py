"""Merges and caches, the parts that need no grading: the balanced split of a class into shards, the seal,
the provenance's differences, a stored row that cannot be right, the sealing key hidden from
student code, and a pod that asked for a user namespace and got none."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import hostile
import pytest

from autograder import assignment, inputs, provenance, shards, userns
from autograder.results import CaseResult, Result

REPO = Path(__file__).resolve().parents[2]


def make_class(students: int, seed: int, lms: bool = True) -> list[inputs.Submission]:
    """A class whose students upload 1 to 3 notebooks (Canvas names), and a few loose files."""
    rng = random.Random(seed)
    subs = []
    for i in range(students):
        for j in range(rng.choice((1, 1, 1, 2, 3))):
            name = f"student{i}_{10000 + i}_{20000 + 10 * i + j}_nb{j}.ipynb" if lms else f"s{i}-{j}.ipynb"
            subs.append(inputs.Submission(file=name, path=None, stem=name[:-6]))
    return subs


@pytest.mark.parametrize("students, n", [(34, 3), (34, 4), (1000, 16), (1000, 7)])
def test_the_split_keeps_students_together_and_balances_rows(students, n):
    subs = make_class(students, seed=students + n)
    where = shards.assign(subs, n)
    sizes = [sum(1 for k in where.values() if k == s) for s in range(n)]
    groups: dict[str, list[int]] = {}
    for s in subs:
        groups.setdefault(shards.owner(s), []).append(where[s.file])
    assert all(len(set(ks)) == 1 for ks in groups.values())     # a student's uploads stay together
    biggest = max(len(ks) for ks in groups.values())
    assert max(sizes) - min(sizes) <= biggest, sizes             # shards differ by one student at most
    assert sum(sizes) == len(subs)
    # every shard reads the class in its own order and computes the same split
    shuffled = subs[:]
    random.Random(1).shuffle(shuffled)
    assert shards.assign(shuffled, n) == where


def test_a_class_of_single_notebooks_splits_evenly():
    subs = [inputs.Submission(file=f"n{i:02d}.ipynb", path=None, stem=f"n{i:02d}") for i in range(34)]
    sizes = sorted(list(shards.assign(subs, 3).values()).count(k) for k in range(3))
    assert sizes == [11, 11, 12]                  # balanced, where a hashed split can give 15/4/15


def test_the_seal_covers_every_byte_and_the_key_is_private(tmp_path):
    key = provenance.key(tmp_path)
    assert provenance.key(tmp_path) == key                      # made once, then read
    assert (tmp_path / provenance.KEY_FILE).stat().st_mode & 0o077 == 0
    body = {"result": {"question_points": {"q2": 9.0}, "cell_outputs": {3: "x", 12: "y"}}, "sha256": "ab"}
    sealed = provenance.seal(key, body)
    assert provenance.verify(key, json.loads(json.dumps(body)), sealed)    # as read back from disk
    body["result"]["question_points"]["q2"] = 14.0
    assert not provenance.verify(key, body, sealed)
    assert not provenance.verify(os.urandom(32), json.loads(json.dumps(body)), sealed)
    assert not provenance.verify(None, body, sealed)


def test_provenance_names_what_changed():
    asg = assignment.load(str(hostile.FIXTURE))
    then = provenance.Provenance.of(asg, {"timeout": 600, "cell_timeout": 120, "memory": 4}, "isolated")
    same = provenance.Provenance.from_json(json.loads(json.dumps(then.to_json())))
    assert same == then and then.differences(same) == []
    other = provenance.Provenance(grader="0" * 64, setup=then.setup, tests={**then.tests, "q2": "x"},
                                  limits={**then.limits, "memory": 2.0}, mode="user")
    words = " | ".join(other.differences(then))
    assert "grader version 000000000000" in words and "the tests of q2" in words
    assert "memory 2" in words and "sandbox mode user" in words
    assert other.changed_questions(then) == ["q2"]


def test_a_row_over_its_maximum_cannot_be_right():
    asg = assignment.load(str(hostile.FIXTURE))
    q2 = next(q for q in asg.auto if q.name == "q2")
    row = Result(file="a.ipynb", stem="a", status="ok", question_points={"q2": q2.max_points})
    assert provenance.implausible(row, asg) is None
    row.question_points["q2"] = q2.max_points + 5
    assert "q2 has" in provenance.implausible(row, asg)
    row.question_points = {"q9": 1.0}
    assert "q9" in provenance.implausible(row, asg)
    row.question_points = {}
    row.cases = [CaseResult("q2", "c", 3.0, 1.0, False, True, "")]
    assert "case q2/c" in provenance.implausible(row, asg)


def test_the_sealing_keys_are_in_folders_student_code_never_sees(tmp_path):
    """The keys live in OUT/shards and OUT/cache: OUT is among the folders hidden from student
    code (user mode) and none of it is in the isolated mode's view."""
    from autograder.config import GradeConfig, Shard
    from autograder.workspace import Workspace
    out = tmp_path / "out"
    (out / "shards").mkdir(parents=True)
    provenance.key(out / "shards")
    provenance.key(out / "cache")
    config = GradeConfig(submissions=(tmp_path / "subs",), assignment=str(hostile.FIXTURE), out=out,
                         workers=1, shard=Shard(0, 2))
    shard_out = out / "shards" / "0-of-2"
    shard_out.mkdir()
    ws = Workspace(config, assignment.load(str(hostile.FIXTURE)), shard_out)
    ws.staging, ws.root, ws.mode, ws.package = tmp_path, tmp_path, "user", tmp_path / "package"
    hidden = [Path(p) for p in ws._secret_paths()]
    for key in (out / "shards" / provenance.KEY_FILE, out / "cache" / provenance.KEY_FILE):
        assert any(h == key.parent or h in key.parents for h in hidden), (key, hidden)
    ws.mode = "isolated"
    view = [Path(p) for p in ws._view_paths()]
    assert not any(v == out or out in v.parents or v in out.parents for v in view)


UID_MAPS = [("         0          0 4294967295\n", False), ("0 100000 65536\n", True),
            ("0 1000 1\n1 100000 65535\n", True)]


@pytest.mark.parametrize("text, inside", UID_MAPS)
def test_the_node_own_user_namespace_is_told_apart(text, inside):
    assert userns.in_user_namespace(text) is inside


def test_a_pod_without_its_user_namespace_drops_sys_admin_and_grades_in_user_mode(tmp_path):
    """Here the grader is the machine's own root (uid_map 0 0 4294967295), as in a pod whose
    runtime ignored hostUsers: false. Asked for a user namespace, it gives up CAP_SYS_ADMIN before
    anything starts, and the sandbox can prove no more than mode 'user'."""
    if os.geteuid() != 0 or userns.in_user_namespace(Path(userns.UID_MAP).read_text()):
        pytest.skip("needs the node's own root (this machine runs in a user namespace)")
    code = ("import json, subprocess, tempfile\n"
            "from autograder import sandbox, userns\n"
            "notes = userns.enforce()\n"
            "child = subprocess.run(['grep', 'CapBnd', '/proc/self/status'],\n"
            "                       capture_output=True, text=True)\n"
            "print(json.dumps({'notes': notes, 'held': userns.has_sys_admin(), 'child': child.stdout,\n"
            "                  'mode': sandbox.detect_mode(None, tempfile.mkdtemp())}))\n")
    env = dict(os.environ, COURSE_EXPECT_USER_NAMESPACE="1")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["held"] is False and got["mode"] == "user"
    assert int(got["child"].split()[1], 16) >> userns.CAP_SYS_ADMIN & 1 == 0    # nor anything it starts
    assert "hostUsers: false" in got["notes"][0] and "dropped CAP_SYS_ADMIN" in got["notes"][0]
    # not asked: nothing changes
    env.pop("COURSE_EXPECT_USER_NAMESPACE")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    got = json.loads(res.stdout)
    assert got["notes"] == [] and got["held"] is True and got["mode"] == "isolated"
