"""``course kubernetes``: grade one class on Kubernetes, as an Indexed Job of shards and a merge Job.

    course kubernetes OUT --shards N --assignment NN_name --image IMAGE SUBMISSION...
                      [--workers W] [--memory GB] [--timeout S] [--time MIN] [--claim PVC]
                      [--storage-class CLASS] [--size 20Gi] [--mount /grading] [--repo /course]
                      [--kubernetes-version 1.35] [--no-user-namespace] [--namespace NS]

Writes into ``OUT/kubernetes/`` (``--write-to`` elsewhere):

- ``claim.yaml``: the PersistentVolumeClaim (``ReadWriteMany``: every pod, on any node, mounts it at
  ``--mount``; ``--storage-class`` names a class that can, see docs/scaling.md) and a pod that holds
  it for ``kubectl cp`` (the submissions in, the grades out). Every path given here is a path in
  that volume as the pods see it.
- ``grade.yaml``: ``course-grade-<name>``, ``completionMode: Indexed``, ``completions: N``; pod K
  runs ``course grade ... --shard $JOB_COMPLETION_INDEX/N``; ``backoffLimitPerIndex`` retries one
  shard without re-running the others, and when a shard's last attempt fails its shell writes
  ``OUT/shards/K-of-N/failed`` (the attempt's number comes from the pod's
  ``batch.kubernetes.io/job-index-failure-count`` annotation); CPU and memory as ``course slurm``;
  ``activeDeadlineSeconds`` per attempt (``--time``) and for the Job. ``course-merge-<name>`` runs
  ``course merge OUT --shards N --wait``: it waits while shards are missing or unfinished and stops
  (exit 3, the index named) when one failed for good; a refusal (exit 2, 3) fails the Job at once
  (``podFailurePolicy``); its own ``activeDeadlineSeconds`` outlasts the grade Job's.

The image (``--image``) holds this repository at ``--repo`` with its ``.venv``: ``Containerfile``
at the repository's root builds it (see :data:`BUILD`).

The sandbox's privileges, written into the pod spec (see PRIVILEGES): the grader must be root in
the container (``runAsUser: 0``) to run each submission as another uid; with ``hostUsers: false``
that root is an unprivileged user on the node (a user namespace), and ``CAP_SYS_ADMIN`` inside it
lets the grader create the pid, mount, IPC and network namespaces of the ``isolated`` mode, which
the default seccomp and AppArmor profiles refuse: the pod asks for ``Unconfined`` for both. The
pod also sets ``COURSE_EXPECT_USER_NAMESPACE``: a runtime that ignores ``hostUsers`` would leave
the grader the node's root with ``SYS_ADMIN``, so it checks (:mod:`autograder.userns`) and drops
the capability (mode ``user``, said in the report). ``--no-user-namespace`` asks for none of
this (storage without idmapped mounts, such as NFS): mode ``user``. Fields newer than
``--kubernetes-version`` are left out (``appArmorProfile`` is 1.30's; earlier versions take an annotation).
"""
from __future__ import annotations

import argparse
import math
import secrets
import shlex
import sys
from pathlib import Path

from autograder.shards import RUN_ENV

from .slurm import merge_memory_mb, task_memory_mb

# Kubernetes keeps the three newest minor versions supported (about 14 months each): on the
# day of this release 1.35, 1.36 and 1.37. The manifests are checked against each of them.
SUPPORTED = ("1.35", "1.36", "1.37")
OLDEST = "1.25"               # hostUsers appears; older schemas are not checked
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
BUILD = ("podman build -t IMAGE -f Containerfile .  (in this repository; docker build works too), "
         "then podman push IMAGE")

PRIVILEGES = [
    "runAsUser 0: the grader runs each submission as another uid (else sandbox mode 'weak')",
    "hostUsers false: the container's root is an unprivileged user on the node (a user namespace); "
    "every volume's file system must support idmapped mounts (docs/scaling.md)",
    "CAP_SYS_ADMIN (inside that user namespace), seccomp and AppArmor Unconfined: unshare() and "
    "mount() for the 'isolated' mode's namespaces (without them: mode 'user')",
    "COURSE_EXPECT_USER_NAMESPACE=1: where the runtime ignored hostUsers, the grader drops "
    "CAP_SYS_ADMIN before grading and runs in mode 'user' (the report says so)",
    "no writable cgroup v2 subtree is delegated to a pod by default: rlimits per process and the "
    "pod's memory limit per shard instead of a cgroup per submission (the report says 'No cgroups')",
]
NO_USERNS = [
    "runAsUser 0: the grader runs each submission as another uid (sandbox mode 'user')",
    "--no-user-namespace: no hostUsers false, no CAP_SYS_ADMIN, the runtime's default seccomp and "
    "AppArmor profiles: no namespaces per submission",
]


def version(text: str) -> tuple[int, int]:
    major, _, minor = text.removeprefix("v").partition(".")
    try:
        found = (int(major), int(minor.split(".")[0]))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a Kubernetes version is MAJOR.MINOR (1.35), "
                                         f"not {text!r}") from None
    if found < version_tuple(OLDEST):
        raise argparse.ArgumentTypeError(f"Kubernetes {text} is older than {OLDEST} (user namespaces)")
    return found


def version_tuple(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course kubernetes", description=(
        "Write the Kubernetes manifests that grade a class in N shards: a ReadWriteMany claim, an "
        "Indexed Job of shards and a merge Job."))
    p.add_argument("out", type=Path, help="the output folder, as the pods see it (in the volume)")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="as the pods see them")
    p.add_argument("--assignment", required=True, help="NN_name, or a folder as the pods see it")
    p.add_argument("--shards", type=int, required=True)
    p.add_argument("--image", required=True, help="the grader's image (built from Containerfile)")
    p.add_argument("--repo", default="/course", help="the repository's folder in the image")
    p.add_argument("--python", default=None, help="default: REPO/.venv/bin/python")
    p.add_argument("--claim", default="course-grading", help="the PersistentVolumeClaim's name")
    p.add_argument("--storage-class", default=None,
                   help="the claim's StorageClass; it must offer ReadWriteMany (NFS, Filestore, EFS, "
                        "CephFS; see docs/scaling.md). Default: the cluster's default class")
    p.add_argument("--size", default="20Gi", help="the claim's size (default 20Gi)")
    p.add_argument("--mount", default="/grading", help="where the volume is mounted")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory", type=float, default=4.0)
    p.add_argument("--task-memory", type=int, default=None, metavar="MB",
                   help="a shard pod's memory (default: measured, as course slurm)")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--time", type=int, default=120,
                   help="minutes one attempt of a shard may take (its pod's activeDeadlineSeconds)")
    p.add_argument("--merge-time", type=int, default=60,
                   help="minutes the merge may take once the shards are done (default 60)")
    p.add_argument("--parallelism", type=int, default=None, help="pods at once (default: N)")
    p.add_argument("--run-id", default=None, metavar="ID",
                   help="the run's id, given to every shard and to the merge (default: a new one each "
                        "time the manifests are rendered)")
    p.add_argument("--stale-after", type=float, default=600.0, metavar="S",
                   help="the merge takes a started shard whose heartbeat has not moved for S seconds as "
                        "lost (exit 3; default 600)")
    p.add_argument("--backoff-per-index", type=int, default=1, help="retries of one shard (default 1)")
    p.add_argument("--kubernetes-version", type=version, default=version(SUPPORTED[0]), metavar="MAJOR.MINOR",
                   help=f"the cluster's version: no field newer than it is used (default {SUPPORTED[0]}, "
                        "the oldest still supported upstream)")
    p.add_argument("--no-user-namespace", action="store_true",
                   help="no hostUsers: false and no CAP_SYS_ADMIN (storage without idmapped mounts): "
                        "sandbox mode 'user'")
    p.add_argument("--namespace", default=None)
    p.add_argument("--name", default=None, help="the Jobs' name suffix (default: the assignment's)")
    p.add_argument("--gradebook", default=None)
    p.add_argument("--export-partial", action="store_true", help="as for course grade")
    p.add_argument("--no-similarity", action="store_true")
    p.add_argument("--cache", action="store_true",
                   help="the shards keep and reuse OUT/cache (course grade --cache)")
    p.add_argument("--write-to", type=Path, default=None,
                   help="the folder for claim.yaml and grade.yaml (default: OUT/kubernetes on this machine)")
    return p


def _python(args: argparse.Namespace) -> str:
    return args.python or f"{args.repo}/.venv/bin/python"


def shard_script(args: argparse.Namespace) -> str:
    """The shell lines pod K runs (K from the Job's JOB_COMPLETION_INDEX): the shard, then, when its
    last allowed attempt failed, OUT/shards/K-of-N/failed with the exit code (the merge stops on it).

    The shell is the container's PID 1, and the kernel gives PID 1 no signal it has no handler for:
    without the trap, the SIGTERM of a deadline or an eviction would never reach the grader, and the
    SIGKILL after the grace period would leave no ``failed``. So the grader runs as the shell's child,
    the trap passes SIGTERM on (the grader stops through its clean-up and exits 143), and the shell,
    still alive, writes ``failed`` on the last attempt. A SIGKILL of the whole pod leaves no word: the
    shard's heartbeat then goes quiet, and the merge names it (``--stale-after``)."""
    cmd = [_python(args), "-m", "course", "grade", *args.submissions, "--assignment", args.assignment,
           "--out", str(args.out), "--workers", str(args.workers), "--memory", f"{args.memory:g}",
           "--timeout", f"{args.timeout:g}", "--no-progress"]
    if args.gradebook:
        cmd += ["--gradebook", args.gradebook]
        if args.export_partial:
            cmd.append("--export-partial")
    if args.cache:
        cmd.append("--cache")
    folder = shlex.quote(str(args.out / "shards")) + f'/"$JOB_COMPLETION_INDEX-of-{args.shards}"'
    return (f"cd {shlex.quote(args.repo)} || exit 1\n"
            + " ".join(map(shlex.quote, cmd))
            + f' --run-id "${RUN_ENV}" --shard "$JOB_COMPLETION_INDEX/{args.shards}" &\n'
            "pid=$!\n"
            "trap 'kill -TERM \"$pid\" 2>/dev/null' TERM INT HUP\n"
            "while :; do\n"
            '  wait "$pid"; rc=$?\n'
            '  kill -0 "$pid" 2>/dev/null || break     # wait ended by the trap: the grader still stops\n'
            "done\n"
            f'if [ "$rc" -ne 0 ] && [ "${{COURSE_INDEX_FAILURES:-0}}" -ge {args.backoff_per_index} ]; then\n'
            f'  mkdir -p {folder} && echo "$rc" > {folder}/failed\n'
            "fi\n"
            'exit "$rc"\n')


def merge_command(args: argparse.Namespace) -> list[str]:
    """The merge Job's command; it merges the run of ``$COURSE_RUN_ID`` (both Jobs' pods have it)."""
    cmd = [_python(args), "-m", "course", "merge", str(args.out), "--shards", str(args.shards), "--wait",
           "--stale-after", f"{args.stale_after:g}"]
    return cmd + (["--no-similarity"] if args.no_similarity else [])


def merge_script(args: argparse.Namespace) -> str:
    return f"cd {shlex.quote(args.repo)} && exec " + " ".join(map(shlex.quote, merge_command(args)))


def _at_least(args: argparse.Namespace, text: str) -> bool:
    return args.kubernetes_version >= version_tuple(text)


def _pod(args: argparse.Namespace, script: str, cpus: int, mem_mb: int, env: list[dict]) -> dict:
    userns = not args.no_user_namespace
    box: dict = {
        "name": "grader", "image": args.image, "command": ["sh", "-c", script],
        "env": [{"name": "OMP_NUM_THREADS", "value": "1"}] + env,
        "securityContext": {"runAsUser": 0, "runAsGroup": 0},
        "resources": {"requests": {"cpu": str(cpus), "memory": f"{mem_mb}Mi"},
                      "limits": {"cpu": str(cpus), "memory": f"{mem_mb}Mi"}},
        "volumeMounts": [{"name": "grading", "mountPath": args.mount}],
    }
    pod: dict = {"restartPolicy": "Never", "containers": [box],
                 "volumes": [{"name": "grading", "persistentVolumeClaim": {"claimName": args.claim}}]}
    if userns:
        pod["hostUsers"] = False
        pod["securityContext"] = {"seccompProfile": {"type": "Unconfined"}}
        if _at_least(args, "1.30"):
            pod["securityContext"]["appArmorProfile"] = {"type": "Unconfined"}
        box["securityContext"].update({"allowPrivilegeEscalation": True,
                                       "capabilities": {"add": ["SYS_ADMIN"]}})
        box["env"].append({"name": "COURSE_EXPECT_USER_NAMESPACE", "value": "1"})
    return pod


def _template(args: argparse.Namespace, pod: dict) -> dict:
    meta: dict = {"labels": {"app": "course-grade"}}
    if not args.no_user_namespace and not _at_least(args, "1.30"):     # appArmorProfile's forerunner
        meta["annotations"] = {"container.apparmor.security.beta.kubernetes.io/grader": "unconfined"}
    return {"metadata": meta, "spec": pod}


def deadlines(args: argparse.Namespace) -> tuple[int, int, int]:
    """Seconds: one shard attempt, the grade Job (every attempt of every wave), the merge Job."""
    attempt = args.time * 60
    waves = math.ceil(args.shards / (args.parallelism or args.shards))
    grade = attempt * (args.backoff_per_index + 1) * waves + 600
    return attempt, grade, grade + args.merge_time * 60


def render(args: argparse.Namespace) -> list[dict]:
    """The grade Job and the merge Job."""
    name = job_name(args)
    meta = {"namespace": args.namespace} if args.namespace else {}
    attempt, grade_deadline, merge_deadline = deadlines(args)
    # one id for the shards and the merge of this rendering: the merge takes only this run's shards
    run = [{"name": RUN_ENV, "value": args.run_id or f"kubernetes-{name}-{secrets.token_hex(6)}"}]
    failures = run + [{"name": "COURSE_INDEX_FAILURES",
                       "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{FAILURE_COUNT}']"}}}]
    memory = task_memory_mb(args.workers, args.memory, args.task_memory)
    pod = _pod(args, shard_script(args), args.workers, memory, failures)
    pod["activeDeadlineSeconds"] = attempt
    spec: dict = {"completionMode": "Indexed", "completions": args.shards,
                  "parallelism": args.parallelism or args.shards, "activeDeadlineSeconds": grade_deadline,
                  "template": _template(args, pod)}
    if _at_least(args, "1.29"):      # beta and on by default from 1.29, GA in 1.33
        spec.update(backoffLimitPerIndex=args.backoff_per_index, maxFailedIndexes=args.shards)
    else:
        spec["backoffLimit"] = args.backoff_per_index * args.shards
    grade = {"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": f"course-grade-{name}", **meta, "labels": {"app": "course-grade"}},
             "spec": spec}
    merge_spec: dict = {"backoffLimit": 2, "completions": 1, "activeDeadlineSeconds": merge_deadline,
                        "template": _template(args, _pod(args, merge_script(args), 1, merge_memory_mb(),
                                                         run))}
    if _at_least(args, "1.29"):      # a refusal (2) or a shard failed for good (3) is not retried
        merge_spec["podFailurePolicy"] = {"rules": [{"action": "FailJob", "onExitCodes": {
            "containerName": "grader", "operator": "In", "values": [2, 3]}}]}
    merge = {"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": f"course-merge-{name}", **meta, "labels": {"app": "course-grade"}},
             "spec": merge_spec}
    return [grade, merge]


def render_claim(args: argparse.Namespace) -> list[dict]:
    """The ReadWriteMany claim and a pod that holds it for ``kubectl cp``."""
    meta = {"namespace": args.namespace} if args.namespace else {}
    spec: dict = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": args.size}}}
    if args.storage_class:
        spec["storageClassName"] = args.storage_class
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": args.claim, **meta, "labels": {"app": "course-grade"}}, "spec": spec}
    pod: dict = {"restartPolicy": "Never", "activeDeadlineSeconds": 7 * 24 * 3600,
                 "containers": [{"name": "files", "image": args.image, "command": ["sleep", "infinity"],
                                 "volumeMounts": [{"name": "grading", "mountPath": args.mount}]}],
                 "volumes": [{"name": "grading", "persistentVolumeClaim": {"claimName": args.claim}}]}
    if not args.no_user_namespace:
        pod["hostUsers"] = False        # the files' owners as the grading pods see them
    files = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{args.claim}-files", **meta, "labels": {"app": "course-grade"}},
             "spec": pod}
    return [claim, files]


def to_yaml(docs: list[dict], head: list[str]) -> str:
    """The documents, after ``head`` as comments; a script of several lines as a block, as written."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)

    Dumper.add_representer(str, text)
    return "\n".join("# " + line for line in head) + "\n" + "---\n".join(
        yaml.dump(d, Dumper=Dumper, sort_keys=False) for d in docs)


def job_name(args: argparse.Namespace) -> str:
    return (args.name or Path(args.assignment).name).lower().replace("_", "-")


def heads(args: argparse.Namespace, folder: Path) -> tuple[list[str], list[str]]:
    claim = [f"course kubernetes: the claim {args.claim} (ReadWriteMany) and a pod that holds it.",
             f"1. kubectl apply -f {folder / 'claim.yaml'}",
             f"2. kubectl cp SUBMISSIONS {args.claim}-files:{args.mount}/...   (the paths grade.yaml names)",
             f"3. kubectl apply -f {folder / 'grade.yaml'}; kubectl wait --for=condition=complete "
             f"job/course-merge-{job_name(args)} --timeout=-1s",
             f"4. kubectl cp {args.claim}-files:{args.out} ./grades"]
    grade = ["course kubernetes: an Indexed Job of shards and a merge Job (kubectl apply -f this file, "
             "once claim.yaml's volume holds the submissions).",
             f"The image: {BUILD.replace('IMAGE', args.image)}.",
             "What the sandbox needs from the pod, and what happens without it:"]
    grade += [f" - {line}" for line in (NO_USERNS if args.no_user_namespace else PRIVILEGES)]
    return claim, grade


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.shards < 1 or args.workers < 1:
        p.error("--shards and --workers must be at least 1")
    folder = args.write_to or (args.out / "kubernetes")
    folder.mkdir(parents=True, exist_ok=True)
    claim_head, grade_head = heads(args, folder)
    (folder / "claim.yaml").write_text(to_yaml(render_claim(args), claim_head), encoding="utf-8")
    (folder / "grade.yaml").write_text(to_yaml(render(args), grade_head), encoding="utf-8")
    mem = task_memory_mb(args.workers, args.memory, args.task_memory)
    print(f"wrote {folder / 'claim.yaml'} (the claim {args.claim}, ReadWriteMany) and "
          f"{folder / 'grade.yaml'} "
          f"(an Indexed Job of {args.shards} shards, {args.workers} CPUs and {mem} Mi each, and a merge "
          f"Job), for Kubernetes {'.'.join(map(str, args.kubernetes_version))}+")
    print(f"the image: {BUILD.replace('IMAGE', args.image)}")
    print("then: " + "; ".join(claim_head[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
