"""One class graded in shards and merged gives what one machine gives.

A Canvas bulk download of the toy assignment (one student with two uploads of five notebooks in all:
over the per-student cap and held; one with two guesses whose points differ: held; another week's
notebook: held; one with two identical uploads: exported; a solution with a figure; a blank) is
graded once on one machine, then in 3 shards as a Kubernetes Indexed Job would grade it: the
rendered Job's pod command (``course grade --shard $JOB_COMPLETION_INDEX/3``) run here once per
index, then the merge Job's command (``course merge``). Checked: the same grades.csv, Canvas import,
feedback, results (but for the measured memory), hand-grading CSV and pages, figures, and the same
HELD lines; a missing shard is named and nothing is written; a second merge writes the same bytes;
hand grades merged by ``course manual`` come back after a merge; the rendered Jobs' fields. Then
the same class through a real single-node Slurm (``course slurm --submit``: a job array and an
afterok merge job), started and stopped by the test. Through the real commands, on the real grader.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import hostile
import lms_samples
import pytest

from autograder import outdir

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e

ALICE = "smithalice_10101_20001_00_toy.ipynb"
BOB = "jonesbob_10202_20002_00_toy.ipynb"
CAROL_A, CAROL_B = "leecarol_10303_20003_a.zip", "leecarol_10303_20013_b.zip"
WRONG = "weekwrong_55555_20005_03_attention.ipynb"
DAVE = "kimdave_10404_20004_guesses.zip"
ERIN, ERIN_LATE = "parkerin_10606_20006_00_toy.ipynb", "parkerin_LATE_10606_20016_00_toy.ipynb"
STUDENTS = lms_samples.STUDENTS + [("Kim, Dave", "10404", "", "", "B"), ("Park, Erin", "10606", "", "", "B")]


def run(*args: str, timeout: float = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1", **(env or {})))


def zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def with_plot() -> bytes:
    nb = hostile.load()
    nb["cells"][14] = hostile.code_cell("import matplotlib.pyplot as plt\n"
                                        "fig, ax = plt.subplots(figsize=(2, 1))\n"
                                        "ax.plot([0, 1], [1, 0])\nplt.show()\n")
    return hostile.dump(nb)


def write_class(root: Path) -> tuple[Path, Path]:
    sol, blank = hostile.SOLUTION.read_bytes(), hostile.BLANK.read_bytes()
    bulk = root / "submissions.zip"
    bulk.write_bytes(zip_bytes([
        (ALICE, with_plot()), (BOB, blank),
        (CAROL_A, zip_bytes([(f"part{k}.ipynb", blank) for k in range(3)])),
        (CAROL_B, zip_bytes([(f"part{k}.ipynb", sol) for k in range(2)])),
        (WRONG, (REPO / "notebooks" / "03_attention.ipynb").read_bytes()),
        (DAVE, zip_bytes([("guess1.ipynb", sol), ("guess2.ipynb", blank)])),
        (ERIN, sol), (ERIN_LATE, sol)]))
    book = root / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(STUDENTS))
    return bulk, book


def grade(bulk: Path, book: Path, out: Path, *extra: str, workers: int = 2,
          **kw) -> subprocess.CompletedProcess:
    return run("-m", "course", "grade", str(bulk), "--assignment", str(hostile.FIXTURE), "--out", str(out),
               "--workers", str(workers), "--no-progress",
                                "--export-partial", "--gradebook", str(book), *extra, **kw)


def files_of(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """OUT as its readers see it: the current grading at OUT's documented names, and the files kept
    beside it (the ledger, earlier manual.csv copies); not the versions' own folder names."""
    current = outdir.resolve(folder)
    found = {p.relative_to(current).as_posix(): p.read_bytes() for p in sorted(current.rglob("*"))
             if p.is_file()}
    found.update({p.name: p.read_bytes() for p in folder.iterdir()
                  if p.is_file() and not p.is_symlink() and not p.name.startswith(".")})
    return {k: v for k, v in sorted(found.items()) if not k.startswith(skip)}


def results_without_memory(folder: Path) -> dict[str, dict]:
    found = {}
    for p in sorted((folder / "results").glob("*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        doc.pop("peak_memory_mb")                     # measured, not graded: differs run to run
        found[p.name] = doc
    return found


def held_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("HELD:"))
    return [line for line in lines[start:] if line.startswith(("HELD:", "  "))]


def without_seconds(page: bytes) -> bytes:
    return re.sub(rb"compared in [0-9.]+ s", b"compared in ... s", page)


SAME_FILES = ("grades.csv", "canvas_import.csv", "manual.csv", "questions.json", "similarity.csv")


def assert_same_grading(one: Path, merged: Path) -> None:
    for name in SAME_FILES:
        assert (merged / name).read_bytes() == (one / name).read_bytes(), name
    for sub in ("feedback", "manual", "figures"):
        assert files_of(merged / sub) == files_of(one / sub), sub
    assert results_without_memory(merged) == results_without_memory(one)
    assert zip_members(merged / "canvas_feedback.zip") == zip_members(one / "canvas_feedback.zip")


def zip_members(path: Path) -> dict[str, bytes]:
    """The feedback zip's members (its own bytes hold the time it was written)."""
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    """One machine's grading, and the same class in 3 shards as a Kubernetes Indexed Job runs it: the
    rendered Job's pod command run here once per index (JOB_COMPLETION_INDEX), then the merge Job's."""
    import yaml
    root = tmp_path_factory.mktemp("shards")
    os.chmod(root, 0o755)
    bulk, book = write_class(root)
    one = grade(bulk, book, root / "one")
    sharded = root / "sharded"
    rendered = run("-m", "course", "kubernetes", str(sharded), str(bulk), "--shards", "3", "--assignment",
                   str(hostile.FIXTURE), "--image", "registry.example/course:1", "--repo", str(REPO),
                   "--python", sys.executable, "--workers", "1", "--memory", "1.5", "--mount", str(root),
                   "--export-partial", "--gradebook", str(book), "--claim", "grading-pvc")
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    text = (sharded / "kubernetes" / "grade.yaml").read_text()
    grade_job, merge_job = list(yaml.safe_load_all(text))
    (box,) = grade_job["spec"]["template"]["spec"]["containers"]
    procs = [subprocess.Popen(box["command"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, JOB_COMPLETION_INDEX=str(k), OMP_NUM_THREADS="1"))
             for k in range(3)]
    done = [p.communicate(timeout=900) for p in procs]
    shard_runs = [(p.returncode, out, err) for p, (out, err) in zip(procs, done, strict=True)]
    (merge_box,) = merge_job["spec"]["template"]["spec"]["containers"]
    merged = subprocess.run(merge_box["command"], capture_output=True, text=True, timeout=600)
    return {"root": root, "bulk": bulk, "book": book, "one": one, "shard_runs": shard_runs,
            "merged": merged, "sharded": sharded, "yaml": text, "jobs": (grade_job, merge_job)}


def test_three_shards_merged_write_what_one_machine_writes(graded):
    one, merged = graded["one"], graded["merged"]
    assert one.returncode == 0, one.stdout[-3000:] + one.stderr[-3000:]
    for rc, out, err in graded["shard_runs"]:
        assert rc == 0, out[-2000:] + err[-2000:]
    assert merged.returncode == 0, merged.stdout[-3000:] + merged.stderr[-3000:]
    root, sharded = graded["root"], graded["sharded"]
    assert_same_grading(root / "one", sharded)
    rows = list(csv.DictReader(io.StringIO((sharded / "grades.csv").read_text(encoding="utf-8"))))
    assert len(rows) == 12
    # the class-wide LMS rules held across shards: the same students held, for the same reasons
    assert held_lines(merged.stdout) == held_lines(one.stdout)
    assert "HELD: 3 students" in merged.stdout
    got = lms_samples.canvas_import((sharded / "canvas_import.csv").read_bytes())
    assert got["grades"] == {("10101", "4700"): "5", ("10202", "4700"): "0", ("10606", "4700"): "5"}
    caps = [r for r in rows if r["grading_status"].startswith("not graded: more than 3")]
    assert len(caps) == 2
    assert "merged 3 shards" in merged.stdout


def test_a_students_uploads_land_in_one_shard_and_every_shard_has_rows(graded):
    folder = graded["sharded"] / "shards"
    docs = [json.loads((folder / f"{k}-of-3" / "shard.json").read_text())["body"] for k in range(3)]
    assert all(d["rows"] for d in docs)
    where = {}
    for d in docs:
        for f in d["rows"]:
            sid = f.split("_")[1] if "_LATE_" not in f else f.split("_")[2]
            where.setdefault(sid, set()).add(d["shard"])
    assert all(len(s) == 1 for s in where.values()), where
    assert sum(len(d["rows"]) for d in docs) == 12
    assert len({d["batch"] for d in docs}) == 1 and all(d["meta"]["mode"] for d in docs)
    # balanced: shards differ by at most one student's rows (Carol's 5 are the most)
    sizes = [len(d["rows"]) for d in docs]
    assert max(sizes) - min(sizes) <= 5, sizes


def test_a_missing_shard_is_named_and_nothing_is_written(graded, tmp_path):
    partial = tmp_path / "partial"
    shutil.copytree(graded["sharded"] / "shards", partial / "shards")
    shutil.rmtree(partial / "shards" / "1-of-3")
    res = run("-m", "course", "merge", str(partial))
    assert res.returncode == 1, res.stdout + res.stderr
    assert "missing 1 of 3 shards: 1" in res.stderr and "nothing was written" in res.stderr
    assert sorted(p.name for p in partial.iterdir()) == ["shards"]


def test_shards_of_another_batch_are_refused(graded, tmp_path):
    """A shard graded on another class (its batch differs; sealed with the key as a grader seals it)
    is not merged with the others; one edited without the key is not believed at all."""
    from autograder import provenance
    mixed = tmp_path / "mixed"
    shutil.copytree(graded["sharded"] / "shards", mixed / "shards")
    path = mixed / "shards" / "2-of-3" / "shard.json"
    doc = json.loads(path.read_text())
    doc["body"]["batch"] = "0" * 64
    path.write_text(json.dumps(doc))
    res = run("-m", "course", "merge", str(mixed))
    assert res.returncode == 2 and "seal does not match" in res.stderr, res.stdout + res.stderr
    doc["seal"] = provenance.seal(provenance.read_key(mixed / "shards"), doc["body"])
    path.write_text(json.dumps(doc))
    res = run("-m", "course", "merge", str(mixed))
    assert res.returncode == 2 and "the class changed since shards 2 were graded" in res.stderr, res.stderr
    assert sorted(p.name for p in mixed.iterdir()) == ["shards"]


def test_merging_again_writes_the_same_bytes_and_keeps_the_hand_grades(graded, tmp_path):
    sharded, one = graded["sharded"], tmp_path / "one"
    shutil.copytree(graded["root"] / "one", one)       # the other tests compare with it as graded
    before = files_of(sharded, skip=("shards/",))
    again = run("-m", "course", "merge", str(sharded))
    assert again.returncode == 0, again.stdout + again.stderr
    after = files_of(sharded, skip=("shards/",))
    # the report says how long the similarity pass took this time; every other byte is the same
    page_after, page_before = after.pop("report.html"), before.pop("report.html")
    assert without_seconds(page_after) == without_seconds(page_before)
    assert after == before
    # hand grades through course manual, in both folders; then the shards are merged once more
    for folder in (sharded, one):
        with open(folder / "manual.csv", newline="", encoding="utf-8") as f:
            table = list(csv.reader(f))
        col = table[0].index("q4")
        for r in table[1:]:
            r[col] = "1" if r[0] in (ALICE, BOB) else "0"
        filled = tmp_path / f"filled-{folder.name}.csv"
        with open(filled, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(table)
        res = run("-m", "course", "manual", str(folder), str(filled))
        assert res.returncode == 0, res.stdout + res.stderr
    third = run("-m", "course", "merge", str(sharded))
    assert third.returncode == 0, third.stdout + third.stderr
    assert "kept " in third.stdout and "hand grades" in third.stdout
    assert (sharded / "hand_grades.sqlite").exists()
    assert (sharded / "grades.csv").read_bytes() == (one / "grades.csv").read_bytes()
    assert (sharded / "canvas_import.csv").read_bytes() == (one / "canvas_import.csv").read_bytes()
    rows = {r["file"]: r for r in csv.DictReader(io.StringIO((sharded / "grades.csv").read_text()))}
    assert (rows[ALICE]["q4"], rows[ALICE]["final_points_earned"]) == ("1.0", "6.0")


def test_shard_arguments_are_checked():
    res = run("-m", "course", "grade", "x.ipynb", "--assignment", str(hostile.FIXTURE), "--out", "o",
              "--shard", "3/3")
    assert res.returncode == 2 and "K must be from 0 to N-1" in res.stderr


# ---------------------------------------------------------------- a real single-node Slurm

SLURM_CONF = """ClusterName=coursetest
SlurmctldHost={host}
SlurmUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmdSpoolDir={d}/spool
StateSaveLocation={d}/state
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
NodeName={host} CPUs=2 RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """slurmctld and slurmd from the distribution's packages (.ci/run installs them), with a
    minimal slurm.conf, and munged where none runs; all stopped at the end."""
    needed = ("slurmctld", "slurmd", "sbatch", "munged")
    if not all(shutil.which(t) or os.path.exists(f"/usr/sbin/{t}") for t in needed) or os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("Slurm (slurmctld slurmd slurm-client munge) and root are needed under CI")
        pytest.skip("no Slurm here (apt-get install slurmctld slurmd slurm-client munge), or not root")
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("spool", "state"):
        (d / sub).mkdir()
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()
    conf = d / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=host, d=d, ctld_port=free_port(), d_port=free_port()))
    env = dict(os.environ, SLURM_CONF=str(conf))
    started: list[subprocess.Popen] = []
    if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
        if not os.path.exists("/etc/munge/munge.key"):
            subprocess.run(["runuser", "-u", "munge", "--", "mungekey", "-c"], check=True)
        os.makedirs("/run/munge", exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        started.append(subprocess.Popen(["runuser", "-u", "munge", "--", "/usr/sbin/munged", "-F"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        for daemon in (["slurmctld", "-D", "-i"], ["slurmd", "-D"]):
            started.append(subprocess.Popen(daemon, env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))
        import time
        for _ in range(60):
            res = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True)
            if res.stdout.strip() == "idle":
                break
            time.sleep(0.5)
        else:
            pytest.fail("the Slurm node did not come up: " + res.stdout + res.stderr
                        + (d / "slurmctld.log").read_text(errors="replace")[-2000:])
        yield env
    finally:
        for p in reversed(started):
            p.terminate()
        for p in reversed(started):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_slurm_job_array_and_afterok_merge_grade_as_one_machine(graded, slurm):
    import time
    root = graded["root"]
    out = root / "slurm-out"
    res = run("-m", "course", "slurm", str(out), str(graded["bulk"]), "--shards", "2", "--assignment",
              str(hostile.FIXTURE), "--workers", "1", "--memory", "1.5",
                  "--export-partial", "--gradebook", str(graded["book"]),
              "--submit", env={"SLURM_CONF": slurm["SLURM_CONF"]})
    assert res.returncode == 0, res.stdout + res.stderr
    script = (out / "slurm" / "grade.sbatch").read_text()
    assert "#SBATCH --array=0-1" in script and "#SBATCH --cpus-per-task=1" in script
    assert "#SBATCH --mem=1152M" in script and '--shard "${SLURM_ARRAY_TASK_ID}/2"' in script
    jobs = dict(line.split() for line in (out / "slurm" / "jobs.txt").read_text().splitlines())
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        queue = subprocess.run(["squeue", "-h", "-o", "%i %T %r"], env=slurm, capture_output=True, text=True)
        if not queue.stdout.strip():
            break
        time.sleep(2)
    logs = {p.name: p.read_text(errors="replace")[-8000:] for p in (out / "slurm" / "logs").glob("*.out")}
    merge_log = logs.get("merge.out", "")
    assert (out / "grades.csv").exists(), logs
    assert_same_grading(root / "one", out)
    assert held_lines(merge_log) == held_lines(graded["one"].stdout)
    for k in range(2):
        doc = json.loads((out / "shards" / f"{k}-of-2" / "shard.json").read_text())["body"]
        assert doc["meta"]["slurm"]["slurm_array_job_id"] == jobs["array"]
        assert doc["meta"]["slurm"]["slurm_array_task_id"] == str(k)
        assert doc["meta"]["mode"] in ("isolated", "user", "weak")
    assert "merged 2 shards" in merge_log
    # the merge job started only once both array tasks had ended (afterok), and all three completed
    times = {}
    for job in (jobs["array"], jobs["merge"]):
        shown = subprocess.run(["scontrol", "-o", "show", "job", job], env=slurm, capture_output=True,
                               text=True).stdout
        times[job] = [dict(f.split("=", 1) for f in line.split() if "=" in f) for line in shown.splitlines()]
    tasks, (merge_job,) = times[jobs["array"]], times[jobs["merge"]]
    assert len(tasks) == 2 and {t["JobState"] for t in tasks + [merge_job]} == {"COMPLETED"}
    assert merge_job["StartTime"] >= max(t["EndTime"] for t in tasks)


# ---------------------------------------------------------------- Kubernetes: the Indexed Job, run here

def test_kubernetes_indexed_job_renders_with_the_sandboxs_privileges(graded):
    """The fields of the rendered Jobs (their pods' commands graded the class of the test above)."""
    text, (grade_job, merge_job) = graded["yaml"], graded["jobs"]
    assert "hostUsers false" in text and "mode 'user'" in text          # the privileges, written beside it
    spec = grade_job["spec"]
    assert (grade_job["kind"], spec["completionMode"], spec["completions"], spec["backoffLimitPerIndex"]) == \
        ("Job", "Indexed", 3, 1)
    pod = spec["template"]["spec"]
    (box,) = pod["containers"]
    assert pod["hostUsers"] is False and pod["restartPolicy"] == "Never"
    assert pod["securityContext"]["seccompProfile"]["type"] == "Unconfined"
    assert box["securityContext"]["runAsUser"] == 0
    assert "SYS_ADMIN" in box["securityContext"]["capabilities"]["add"]
    assert box["resources"]["limits"] == {"cpu": "1", "memory": "1152Mi"}
    assert pod["activeDeadlineSeconds"] == 120 * 60 and spec["activeDeadlineSeconds"] > 2 * 120 * 60
    assert {"name": "COURSE_EXPECT_USER_NAMESPACE", "value": "1"} in box["env"]
    assert box["image"] == "registry.example/course:1"
    assert pod["volumes"] == [{"name": "grading", "persistentVolumeClaim": {"claimName": "grading-pvc"}}]
    assert box["volumeMounts"] == [{"name": "grading", "mountPath": str(graded["root"])}]
    assert '--shard "$JOB_COMPLETION_INDEX/3"' in box["command"][2]
    (merge_box,) = merge_job["spec"]["template"]["spec"]["containers"]
    assert merge_job["kind"] == "Job" and " merge " in merge_box["command"][2]
    assert "--shards 3 --wait" in merge_box["command"][2]
    assert merge_job["spec"]["activeDeadlineSeconds"] > spec["activeDeadlineSeconds"]
    assert sorted(p.name for p in (graded["sharded"] / "shards").iterdir()) == \
        [".seal-key", "0-of-3", "1-of-3", "2-of-3"]


def test_slurm_a_cancelled_task_requeued_lets_the_merge_run(slurm, tmp_path):
    """One task of the array cancelled while it grades, then requeued: it completes, and the merge
    (afterany, its run's shards only, waiting while the task is back in the queue) runs and merges;
    with afterok it stayed PENDING (DependencyNeverSatisfied) for ever."""
    import time
    os.chmod(tmp_path, 0o755)
    subs = tmp_path / "class"
    subs.mkdir()
    for i in range(2):
        (subs / f"sol{i}_1010{i}_2000{i}_toy.ipynb").write_bytes(hostile.SOLUTION.read_bytes())
        (subs / f"blank{i}_1020{i}_2010{i}_toy.ipynb").write_bytes(hostile.BLANK.read_bytes())
    out = tmp_path / "out"
    res = run("-m", "course", "slurm", str(out), str(subs), "--shards", "2", "--assignment",
              str(hostile.FIXTURE),
              "--workers", "1", "--memory", "1.5", "--no-similarity", "--stale-after", "300", "--submit",
              env={"SLURM_CONF": slurm["SLURM_CONF"]})
    assert res.returncode == 0, res.stdout + res.stderr
    jobs = dict(line.split() for line in (out / "slurm" / "jobs.txt").read_text().splitlines())
    task = f"{jobs['array']}_1"

    def slurm_cmd(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), env=slurm, capture_output=True, text=True)

    deadline = time.monotonic() + 300          # task 1 grading: running, its heartbeat written
    while not (slurm_cmd("squeue", "-h", "-j", task, "-o", "%T").stdout.strip() == "RUNNING"
               and (out / "shards" / "1-of-2" / "heartbeat").exists()):
        assert time.monotonic() < deadline, slurm_cmd("squeue", "-h").stdout
        time.sleep(0.5)
    assert slurm_cmd("scancel", task).returncode == 0
    while slurm_cmd("squeue", "-h", "-j", task, "-o", "%T").stdout.strip():
        assert time.monotonic() < deadline
        time.sleep(0.5)
    requeued = slurm_cmd("scontrol", "requeue", task)
    assert requeued.returncode == 0, requeued.stdout + requeued.stderr
    deadline = time.monotonic() + 900
    while slurm_cmd("squeue", "-h").stdout.strip():
        assert time.monotonic() < deadline, slurm_cmd("squeue", "-h", "-o", "%i %T %r").stdout
        time.sleep(2)
    logs = {p.name: p.read_text(errors="replace")[-4000:] for p in (out / "slurm" / "logs").glob("*.out")}
    shown = slurm_cmd("scontrol", "-o", "show", "job", jobs["merge"]).stdout
    assert "JobState=COMPLETED" in shown, (shown, logs)
    assert "merged 2 shards" in logs["merge.out"], logs
    rows = {r["file"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert {f: float(r["total_points_earned"]) for f, r in rows.items()} == {
        f.name: (5.0 if f.name.startswith("sol") else 0.0) for f in subs.iterdir()}
    for k in range(2):
        body = json.loads((out / "shards" / f"{k}-of-2" / "shard.json").read_text())["body"]
        assert body["run"] == f"slurm-{jobs['array']}"
