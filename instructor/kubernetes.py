"""``course kubernetes``: grade one class on Kubernetes, as an Indexed Job of shards and a merge Job.

    course kubernetes OUT --shards N --assignment NN_name --image IMAGE SUBMISSION...
                      [--workers W] [--memory GB] [--timeout S] [--claim PVC] [--mount /grading]
                      [--repo /course] [--parallelism P] [--namespace NS]

Writes ``OUT/kubernetes/grade.yaml``: two Jobs sharing one volume (a PersistentVolumeClaim that
holds the submissions and OUT, mounted at ``--mount``; the paths given here are paths in that
volume as the pods see it):

- ``course-grade-<name>``: ``completionMode: Indexed``, ``completions: N``; pod K runs
  ``course grade ... --out OUT --shard $JOB_COMPLETION_INDEX/N``; ``backoffLimitPerIndex``
  retries one shard without re-running the others; CPU and memory requests and limits from
  ``--workers`` and ``--memory`` (as ``course slurm``).
- ``course-merge-<name>``: runs ``course merge OUT`` until every shard's result is there (exit 1:
  a shard is missing, try again; 0: merged; 2: the shards do not fit, fail).

Apply with ``kubectl apply -f OUT/kubernetes/grade.yaml``.

The sandbox's privileges, written into the pod spec (see PRIVILEGES): the grader must be root in
the container (``runAsUser: 0``) to run each submission as another uid; with ``hostUsers: false``
that root is an unprivileged user on the node (a user namespace), and ``CAP_SYS_ADMIN`` inside it
lets the grader create the pid, mount, IPC and network namespaces of the ``isolated`` mode, which
the default seccomp and AppArmor profiles refuse (``unshare``, ``mount``): the pod asks for
``Unconfined`` for both (or a Localhost profile that allows them). Without them the grader falls
back and says so in the results and report: without namespaces, ``user`` mode (a separate uid per
submission, grading material hidden by file permissions); not as root, ``weak``. Without a
writable cgroup v2 subtree (most clusters do not delegate one to a pod) there are no per-submission
cgroups: each process is held by its rlimits and the pod's own memory limit bounds the shard.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from .slurm import GRADER_MB, task_memory_mb

PRIVILEGES = [
    "runAsUser 0: the grader runs each submission as another uid (else sandbox mode 'weak')",
    "hostUsers false: the container's root is an unprivileged user on the node (a user namespace)",
    "CAP_SYS_ADMIN (inside that user namespace), seccomp and AppArmor Unconfined: unshare() and "
    "mount() for the 'isolated' mode's namespaces (without them: mode 'user')",
    "no writable cgroup v2 subtree is delegated to a pod by default: rlimits per process and the "
    "pod's memory limit per shard instead of a cgroup per submission (the report says 'No cgroups')",
]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course kubernetes", description=(
        "Write a Kubernetes Indexed Job that grades a class in N shards, and a merge Job."))
    p.add_argument("out", type=Path, help="the output folder, as the pods see it (in the volume)")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="as the pods see them")
    p.add_argument("--assignment", required=True, help="NN_name, or a folder as the pods see it")
    p.add_argument("--shards", type=int, required=True)
    p.add_argument("--image", required=True, help="an image with this repository and its .venv")
    p.add_argument("--repo", default="/course", help="the repository's folder in the image")
    p.add_argument("--python", default=None, help="default: REPO/.venv/bin/python")
    p.add_argument("--claim", default="course-grading", help="the PersistentVolumeClaim's name")
    p.add_argument("--mount", default="/grading", help="where the volume is mounted")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory", type=float, default=4.0)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--parallelism", type=int, default=None, help="pods at once (default: N)")
    p.add_argument("--backoff-per-index", type=int, default=1)
    p.add_argument("--namespace", default=None)
    p.add_argument("--name", default=None, help="the Jobs' name suffix (default: the assignment's)")
    p.add_argument("--gradebook", default=None)
    p.add_argument("--no-similarity", action="store_true")
    p.add_argument("--cache", action="store_true",
                   help="the shards keep and reuse OUT/cache (course grade --cache)")
    p.add_argument("--write-to", type=Path, default=None,
                   help="where to write the YAML (default: OUT/kubernetes/grade.yaml on this machine)")
    return p


def shard_script(args: argparse.Namespace) -> str:
    """The shell line pod K runs (K from the Job's JOB_COMPLETION_INDEX)."""
    py = args.python or f"{args.repo}/.venv/bin/python"
    cmd = [py, "-m", "course", "grade", *args.submissions, "--assignment", args.assignment,
           "--out", str(args.out), "--workers", str(args.workers), "--memory", f"{args.memory:g}",
           "--timeout", f"{args.timeout:g}", "--no-progress"]
    if args.gradebook:
        cmd += ["--gradebook", args.gradebook]
    if args.cache:
        cmd.append("--cache")
    return (f"cd {shlex.quote(args.repo)} && exec " + " ".join(map(shlex.quote, cmd))
            + f' --shard "$JOB_COMPLETION_INDEX/{args.shards}"')


def merge_script(args: argparse.Namespace) -> str:
    py = args.python or f"{args.repo}/.venv/bin/python"
    cmd = [py, "-m", "course", "merge", str(args.out)] + (["--no-similarity"] if args.no_similarity else [])
    line = " ".join(map(shlex.quote, cmd))
    return (f"cd {shlex.quote(args.repo)} && while :; do {line}; rc=$?; "
            f'[ "$rc" -ne 1 ] && exit "$rc"; sleep 20; done')


def _pod(args: argparse.Namespace, script: str, cpus: int, mem_mb: int) -> dict:
    return {
        "restartPolicy": "Never",
        "hostUsers": False,
        "securityContext": {"seccompProfile": {"type": "Unconfined"},
                            "appArmorProfile": {"type": "Unconfined"}},
        "containers": [{
            "name": "grader", "image": args.image, "command": ["sh", "-c", script],
            "env": [{"name": "OMP_NUM_THREADS", "value": "1"}],
            "securityContext": {"runAsUser": 0, "runAsGroup": 0, "allowPrivilegeEscalation": True,
                                "capabilities": {"add": ["SYS_ADMIN"]}},
            "resources": {"requests": {"cpu": str(cpus), "memory": f"{mem_mb}Mi"},
                          "limits": {"cpu": str(cpus), "memory": f"{mem_mb}Mi"}},
            "volumeMounts": [{"name": "grading", "mountPath": args.mount}],
        }],
        "volumes": [{"name": "grading", "persistentVolumeClaim": {"claimName": args.claim}}],
    }


def render(args: argparse.Namespace) -> list[dict]:
    name = (args.name or Path(args.assignment).name).lower().replace("_", "-")
    meta = {"namespace": args.namespace} if args.namespace else {}
    grade = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"course-grade-{name}", **meta, "labels": {"app": "course-grade"}},
        "spec": {"completionMode": "Indexed", "completions": args.shards,
                 "parallelism": args.parallelism or args.shards,
                 "backoffLimitPerIndex": args.backoff_per_index, "maxFailedIndexes": args.shards,
                 "template": {"metadata": {"labels": {"app": "course-grade"}},
                              "spec": _pod(args, shard_script(args), args.workers,
                                           task_memory_mb(args.workers, args.memory))}}}
    merge = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"course-merge-{name}", **meta, "labels": {"app": "course-grade"}},
        "spec": {"backoffLimit": 2, "completions": 1,
                 "template": {"metadata": {"labels": {"app": "course-grade"}},
                              "spec": _pod(args, merge_script(args), 1, GRADER_MB)}}}
    return [grade, merge]


def to_yaml(docs: list[dict]) -> str:
    import yaml
    head = ["# course kubernetes: an Indexed Job of shards and a merge Job (kubectl apply -f this file).",
            "# What the sandbox needs from the pod, and what happens without it:"]
    head += [f"#  - {line}" for line in PRIVILEGES]
    return "\n".join(head) + "\n" + "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.shards < 1 or args.workers < 1:
        p.error("--shards and --workers must be at least 1")
    dest = args.write_to or (args.out / "kubernetes" / "grade.yaml")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(to_yaml(render(args)), encoding="utf-8")
    print(f"wrote {dest}: an Indexed Job of {args.shards} shards ({args.workers} CPUs, "
          f"{task_memory_mb(args.workers, args.memory)} Mi each) and a merge Job, on the claim {args.claim} "
          f"at {args.mount}; kubectl apply -f {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
