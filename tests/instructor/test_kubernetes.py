"""The manifests of ``course kubernetes`` are valid Kubernetes for every minor version
still supported upstream, strictly (no field a version does not know), offline (the schemas ship in
kubernetes-validate); fields of newer versions appear only where ``--kubernetes-version`` allows
them; the claim is ReadWriteMany; both Jobs have a deadline; a shard's pod writes ``failed`` only
when its last allowed attempt failed. (The pods' commands grade a class in
tests/autograder/test_shards.py; the merge's waiting in tests/autograder/test_provenance.py.)"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from kubernetes_validate import utils as kv

from instructor import kubernetes

SCHEMAS = [v.removesuffix(".0") for v in kv.all_versions()
           if kubernetes.version(v) >= kubernetes.version_tuple(kubernetes.OLDEST)]


def render(tmp_path: Path, *extra: str) -> tuple[list[dict], list[dict]]:
    folder = tmp_path / "k8s"
    assert kubernetes.main(["/grading/week8", "/grading/submissions.zip", "--shards", "4", "--assignment",
                            "08_causal", "--image", "registry.example/course:1", "--write-to", str(folder),
                            *extra]) == 0
    load = lambda name: list(yaml.safe_load_all((folder / name).read_text()))     # noqa: E731
    return load("grade.yaml"), load("claim.yaml")


def test_every_supported_version_has_a_schema_here():
    assert set(kubernetes.SUPPORTED) <= set(SCHEMAS)


@pytest.mark.parametrize("version", SCHEMAS)
@pytest.mark.parametrize("userns", [True, False], ids=["user-namespace", "no-user-namespace"])
def test_the_manifests_validate_strictly_for_each_version(tmp_path, version, userns):
    extra = ["--kubernetes-version", version, "--storage-class", "nfs-client"]
    jobs, claim = render(tmp_path, *extra, *([] if userns else ["--no-user-namespace"]))
    for doc in jobs + claim:
        kv.validate(doc, f"{version}.0", strict=True)          # raises on any field the version lacks
    grade, merge = jobs
    pod = grade["spec"]["template"]["spec"]
    newer = kubernetes.version(version) >= (1, 30)
    if userns:
        assert ("appArmorProfile" in pod["securityContext"]) is newer       # 1.30's field
        annotations = grade["spec"]["template"]["metadata"].get("annotations", {})
        assert bool(annotations) is not newer                                # its forerunner before
    else:
        assert "hostUsers" not in pod and "securityContext" not in pod
        assert "capabilities" not in pod["containers"][0]["securityContext"]
    assert ("backoffLimitPerIndex" in grade["spec"]) is (kubernetes.version(version) >= (1, 29))
    assert ("podFailurePolicy" in merge["spec"]) is (kubernetes.version(version) >= (1, 29))


def test_the_default_is_the_oldest_supported_version(tmp_path):
    jobs, claim = render(tmp_path)
    for doc in jobs + claim:
        for version in kubernetes.SUPPORTED:
            kv.validate(doc, f"{version}.0", strict=True)
    grade, merge = jobs
    pod = grade["spec"]["template"]["spec"]
    assert pod["hostUsers"] is False and pod["securityContext"]["appArmorProfile"] == {"type": "Unconfined"}
    assert grade["spec"]["backoffLimitPerIndex"] == 1 and grade["spec"]["maxFailedIndexes"] == 4
    # deadlines: one attempt, the Job (every attempt), the merge (after the Job)
    assert pod["activeDeadlineSeconds"] == 120 * 60
    assert grade["spec"]["activeDeadlineSeconds"] >= 2 * 120 * 60
    assert merge["spec"]["activeDeadlineSeconds"] > grade["spec"]["activeDeadlineSeconds"]
    rule = merge["spec"]["podFailurePolicy"]["rules"][0]
    assert rule["action"] == "FailJob" and rule["onExitCodes"]["values"] == [2, 3]
    (box,) = merge["spec"]["template"]["spec"]["containers"]
    assert "merge /grading/week8 --shards 4 --wait" in box["command"][2]
    pvc, holder = claim
    assert pvc["kind"] == "PersistentVolumeClaim" and pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert "storageClassName" not in pvc["spec"]              # the cluster's default class
    assert holder["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]


def test_a_storage_class_and_size_reach_the_claim(tmp_path):
    _, (pvc, _) = render(tmp_path, "--storage-class", "filestore-rwx", "--size", "200Gi")
    assert pvc["spec"]["storageClassName"] == "filestore-rwx"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "200Gi"


ATTEMPTS = [("0", 137, False), ("1", 137, True), ("", 2, False), ("1", 0, False)]


@pytest.mark.parametrize("failures, exit_code, marked", ATTEMPTS)
def test_a_shard_pod_marks_its_shard_failed_only_after_its_last_attempt(tmp_path, failures, exit_code,
                                                                        marked):
    """The pod's own script, run here with a stand-in for Python that exits as a grader would."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexit {exit_code}\n")
    fake.chmod(0o755)
    out = tmp_path / "out"
    folder = tmp_path / "k8s"
    kubernetes.main([str(out), "/x.zip", "--shards", "3", "--assignment", "08_causal", "--image", "i",
                     "--python", str(fake), "--repo", str(tmp_path), "--write-to", str(folder)])
    (grade, _) = list(yaml.safe_load_all((folder / "grade.yaml").read_text()))
    (box,) = grade["spec"]["template"]["spec"]["containers"]
    env = dict(os.environ, JOB_COMPLETION_INDEX="2", COURSE_INDEX_FAILURES=failures)
    res = subprocess.run(box["command"], env=env, capture_output=True, text=True)
    assert res.returncode == exit_code
    marker = out / "shards" / "2-of-3" / "failed"
    assert marker.exists() is marked
    if marked:
        assert marker.read_text().strip() == str(exit_code)


def test_an_old_or_malformed_version_is_refused(capsys):
    for bad in ("1.20", "one.thirty"):
        with pytest.raises(SystemExit):
            kubernetes.main(["/o", "/x.zip", "--shards", "2", "--assignment", "08_causal", "--image", "i",
                             "--kubernetes-version", bad])
        assert "--kubernetes-version" in capsys.readouterr().err


def test_a_shard_pod_stopped_by_its_deadline_passes_sigterm_on_and_marks_its_last_attempt(tmp_path):
    """The pod's script as the container's PID 1 (a new PID namespace): the kernel gives PID 1 no
    signal it has no handler for, so SIGTERM (a deadline, an eviction) must be passed on by the
    script: the stand-in grader gets it, stops through its clean-up, and the last attempt's
    ``failed`` holds its exit code."""
    import shutil
    import signal
    import time

    import psutil
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare (a PID namespace)")
    marks = tmp_path / "marks"
    marks.mkdir()
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\n"
                    'echo "$@" > "$MARKS/started"\n'
                    "trap 'echo cleaned > \"$MARKS/cleaned\"; exit 143' TERM\n"
                    "while :; do sleep 0.1; done\n")
    fake.chmod(0o755)
    out, folder = tmp_path / "out", tmp_path / "k8s"
    kubernetes.main([str(out), "/x.zip", "--shards", "3", "--assignment", "08_causal", "--image", "i",
                     "--python", str(fake), "--repo", str(tmp_path), "--write-to", str(folder),
                     "--run-id", "run-7"])
    (grade, _) = list(yaml.safe_load_all((folder / "grade.yaml").read_text()))
    (box,) = grade["spec"]["template"]["spec"]["containers"]
    run = next(e["value"] for e in box["env"] if e["name"] == "COURSE_RUN_ID")
    env = dict(os.environ, JOB_COMPLETION_INDEX="2", COURSE_INDEX_FAILURES="1", MARKS=str(marks),
               COURSE_RUN_ID=run)
    pod = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", *box["command"]], env=env)
    try:
        deadline = time.monotonic() + 30
        while not (marks / "started").exists():
            assert time.monotonic() < deadline and pod.poll() is None
            time.sleep(0.05)
        assert "--run-id run-7 --shard 2/3" in (marks / "started").read_text()
        (init,) = psutil.Process(pod.pid).children()          # PID 1 of the pod's namespace
        os.kill(init.pid, signal.SIGTERM)
        assert pod.wait(timeout=30) == 143
    finally:
        pod.kill()
    assert (marks / "cleaned").read_text().strip() == "cleaned"
    assert (out / "shards" / "2-of-3" / "failed").read_text().strip() == "143"
