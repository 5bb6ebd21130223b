"""``course slurm``: grade one class on a Slurm cluster, as a job array of shards and a merge job.

    course slurm OUT --shards N --assignment NN_name SUBMISSION... [--workers W] [--memory GB]
                 [--timeout S] [--partition P] [--time MIN] [--gradebook FILE] [--submit]

Writes ``OUT/slurm/grade.sbatch``, a job array (``--array=0-(N-1)``) whose task K runs
``course grade ... --out OUT --shard K/N`` (:mod:`autograder.shards`), and ``OUT/slurm/merge.sbatch``,
which runs ``course merge OUT --wait``. With ``--submit`` it submits both, the merge with
``--dependency=afterany:<array job>`` and ``COURSE_RUN_ID=slurm-<array job>``: it runs once every
task has ended, however it ended (``afterok`` would leave it pending for ever after one task was
cancelled, even once that task was requeued and finished), merges that run's shards only, waits
while a missing shard's task is back in the queue, and names a shard gone for good (exit 3). Each
task asks Slurm
for what the grader itself will use: W CPUs (one per submission graded at once) and the memory a
task was measured to use (:func:`task_memory_mb`, ``benchmarks/task_memory.py``; ``--task-memory``
sets it). OUT must be on a file system every node sees; so must the submissions and this repository.

Inside a task the grader picks the strongest sandbox the node allows, as on one machine
(:func:`autograder.sandbox.detect_mode`): where the task may not create user namespaces or
cgroups it falls back (``user``: a separate uid per submission where the task runs as root;
``weak``: rlimits alone, inside Slurm's own per-task limits), and each shard's mode, job and task
are kept in its result; the merged report names the weakest.
"""
from __future__ import annotations

import argparse
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

from autograder.shards import RUN_ENV

REPO = Path(__file__).resolve().parent.parent
# Measured with benchmarks/task_memory.py (docs/scaling.md): a task's peak less its submissions' was
# 405-416 MB (the grader 233 MB, its fork server with torch imported, the judge); one submission of
# the solution peaked at 317 MB (08_causal) and 261 MB (09_gpt). Each worker is given twice the
# heavier, never more than its own --memory cap.
BASE_MB = 512
SUBMISSION_MB = 320
HEADROOM = 2.0
MERGE_MB = 2048             # the merge holds every row's result (10,000 rows: see docs/scaling.md)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="course slurm", description=(
        "Write (and with --submit, submit) a Slurm job array that grades a class in N shards, and a "
        "merge job that runs after it."))
    p.add_argument("out", type=Path, help="the output folder (on a file system every node sees)")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    p.add_argument("--assignment", required=True)
    p.add_argument("--shards", type=int, required=True, help="N: the array's tasks")
    p.add_argument("--workers", type=int, default=2, help="submissions at once in each task (its CPUs)")
    p.add_argument("--memory", type=float, default=4.0, help="GB per submission at most (as course grade)")
    p.add_argument("--task-memory", type=int, default=None, metavar="MB",
                   help="Slurm's --mem per task (default: measured, see docs/scaling.md)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per submission")
    p.add_argument("--cell-timeout", type=float, default=None)
    p.add_argument("--time", type=int, default=120, help="minutes per task (Slurm's --time)")
    p.add_argument("--partition", default=None)
    p.add_argument("--account", default=None)
    p.add_argument("--python", default=sys.executable, help="the Python with the course installed")
    p.add_argument("--gradebook", type=Path, default=None)
    p.add_argument("--gradebook-column", default=None)
    p.add_argument("--export-partial", action="store_true", help="as for course grade")
    p.add_argument("--no-similarity", action="store_true")
    p.add_argument("--cache", action="store_true",
                   help="the shards keep and reuse OUT/cache (course grade --cache)")
    p.add_argument("--stale-after", type=float, default=600.0, metavar="S",
                   help="the merge takes a shard with no result, no heartbeat and no task in the queue "
                        "for S seconds as lost (exit 3; default 600)")
    p.add_argument("--submit", action="store_true", help="submit both jobs with sbatch")
    return p


def task_memory_mb(workers: int, memory_gb: float, measured: int | None = None) -> int:
    """What a task of ``workers`` asks for (MB): ``measured`` when given (--task-memory), else the
    measured base and, per worker, twice what a submission was measured to use (at most --memory)."""
    if measured:
        return measured
    share = min(memory_gb * 1024, SUBMISSION_MB * HEADROOM)
    return int(math.ceil(BASE_MB + workers * share))


def merge_memory_mb() -> int:
    return MERGE_MB


def grade_command(args: argparse.Namespace, shard: str) -> list[str]:
    """The shard's ``course grade`` (``shard``: K/N, K a shell expression)."""
    cmd = [args.python, "-m", "course", "grade", *[str(Path(s).resolve()) for s in args.submissions],
           "--assignment", args.assignment, "--out", str(args.out.resolve()), "--workers", str(args.workers),
           "--memory", f"{args.memory:g}", "--timeout", f"{args.timeout:g}", "--no-progress"]
    if args.cell_timeout is not None:
        cmd += ["--cell-timeout", f"{args.cell_timeout:g}"]
    if args.cache:
        cmd.append("--cache")
    if args.gradebook is not None:
        cmd += ["--gradebook", str(args.gradebook.resolve())]
        if args.gradebook_column:
            cmd += ["--gradebook-column", args.gradebook_column]
        if args.export_partial:
            cmd.append("--export-partial")
    # every task of the array, and a task requeued, belong to one run: the merge takes its shards only
    # (a shard graded again alone, sbatch --array=K, is given its run with COURSE_RUN_ID)
    return cmd + ["--run-id", f"${{{RUN_ENV}:-slurm-${{SLURM_ARRAY_JOB_ID}}}}", "--shard", shard]


def merge_command(args: argparse.Namespace) -> list[str]:
    """The merge job's command: it runs once every task has ended (afterany: a task cancelled,
    failed or requeued cannot leave it pending for ever), takes the run's shards only
    ($COURSE_RUN_ID, given at submission) and waits while a shard's task is still in the queue
    (requeued) or its heartbeat moves; a shard gone from both for --stale-after seconds is named
    (exit 3)."""
    cmd = [args.python, "-m", "course", "merge", str(args.out.resolve()), "--shards", str(args.shards),
           "--wait", "--stale-after", f"{args.stale_after:g}"]
    return cmd + (["--no-similarity"] if args.no_similarity else [])


def _quote(cmd: list[str], shard_arg: str | None = None) -> str:
    """One shell line; ``shard_arg`` and the run id are left to the shell where they hold
    ``$SLURM_ARRAY_TASK_ID`` and ``$SLURM_ARRAY_JOB_ID``."""
    parts = [shlex.quote(c) if "SLURM_ARRAY_JOB_ID}" not in c else f'"{c}"' for c in cmd]
    if shard_arg is not None:
        parts[-1] = f'"{shard_arg}"'
    return " ".join(parts)


def submit_lines(folder: Path, array_id: str = "$j") -> str:
    """The merge's submission: afterany, and the run it merges."""
    return (f"sbatch --dependency=afterany:{array_id} --export=ALL,{RUN_ENV}=slurm-{array_id} "
            f"{folder / 'merge.sbatch'}")


def _header(args: argparse.Namespace, name: str, cpus: int, mem_mb: int, minutes: int, log: str) -> list[str]:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --cpus-per-task={cpus}",
             f"#SBATCH --mem={mem_mb}M", f"#SBATCH --time={minutes}", "#SBATCH --ntasks=1",
             f"#SBATCH --output={log}"]
    if args.partition:
        lines.append(f"#SBATCH --partition={args.partition}")
    if args.account:
        lines.append(f"#SBATCH --account={args.account}")
    return lines


def render(args: argparse.Namespace) -> tuple[str, str]:
    """The array's script and the merge's."""
    n = args.shards
    logs = args.out.resolve() / "slurm" / "logs"
    array = _header(args, f"course-grade-{Path(args.assignment).name}", args.workers,
                    task_memory_mb(args.workers, args.memory, args.task_memory), args.time,
                    f"{logs}/shard-%a-of-{n}.out")
    array.insert(2, f"#SBATCH --array=0-{n - 1}")
    array.insert(3, "#SBATCH --requeue")        # a lost task may be requeued: it rejoins its run
    shard = f"${{SLURM_ARRAY_TASK_ID}}/{n}"
    array += ["# task K grades shard K of the class (a student's rows stay in one shard)",
              "set -euo pipefail", f"cd {shlex.quote(str(REPO))}",
              "exec " + _quote(grade_command(args, shard), shard), ""]
    # a requeued task may still run its whole --time while the merge waits for it
    merge = _header(args, f"course-merge-{Path(args.assignment).name}", 1, merge_memory_mb(), args.time + 30,
                    f"{logs}/merge.out")
    merge += ["# runs once every task has ended: sbatch --dependency=afterany:ARRAY_JOB "
              f"--export=ALL,{RUN_ENV}=slurm-ARRAY_JOB", "set -euo pipefail",
              f': "${{{RUN_ENV}:?submit with --export=ALL,{RUN_ENV}=slurm-ARRAY_JOB (the array job id)}}"',
              f"cd {shlex.quote(str(REPO))}", "exec " + _quote(merge_command(args)), ""]
    return "\n".join(array), "\n".join(merge)


def sbatch(script: Path, *extra: str) -> str:
    """Submit; the job id (sbatch --parsable prints ``ID`` or ``ID;cluster``). A COURSE_RUN_ID of the
    caller's is not passed on: the array's run is its own job id."""
    env = {k: v for k, v in os.environ.items() if k != RUN_ENV}
    res = subprocess.run(["sbatch", "--parsable", *extra, str(script)], capture_output=True, text=True,
                         env=env)
    if res.returncode != 0:
        raise RuntimeError(f"sbatch {script.name}: {res.stderr.strip() or res.stdout.strip()}")
    return res.stdout.strip().split(";")[0]


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.shards < 1 or args.workers < 1:
        p.error("--shards and --workers must be at least 1")
    from autograder import assignment as assignment_mod
    try:
        assignment_mod.load(args.assignment)
    except assignment_mod.AssignmentError as exc:
        print(f"course slurm: {exc}", file=sys.stderr)
        return 2
    args.assignment = str(assignment_mod.resolve(args.assignment).resolve())
    for s in args.submissions:
        if not Path(s).exists():
            print(f"course slurm: no such file or folder: {s}", file=sys.stderr)
            return 2
    folder = args.out.resolve() / "slurm"
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    array, merge = render(args)
    (folder / "grade.sbatch").write_text(array, encoding="utf-8")
    (folder / "merge.sbatch").write_text(merge, encoding="utf-8")
    mem = task_memory_mb(args.workers, args.memory, args.task_memory)
    print(f"wrote {folder / 'grade.sbatch'} (array of {args.shards} tasks, {args.workers} CPUs and "
          f"{mem} MB each) and {folder / 'merge.sbatch'}")
    if not args.submit:
        print(f"submit: j=$(env -u {RUN_ENV} sbatch --parsable {folder / 'grade.sbatch'}) && "
              f"{submit_lines(folder)}")
        return 0
    try:
        array_id = sbatch(folder / "grade.sbatch")
        merge_id = sbatch(folder / "merge.sbatch", f"--dependency=afterany:{array_id}",
                          f"--export=ALL,{RUN_ENV}=slurm-{array_id}")
    except (RuntimeError, OSError) as exc:
        print(f"course slurm: {exc}", file=sys.stderr)
        return 2
    (folder / "jobs.txt").write_text(f"array {array_id}\nmerge {merge_id}\n", encoding="utf-8")
    print(f"submitted array job {array_id} ({args.shards} shards) and merge job {merge_id} "
          f"(afterany:{array_id}, run slurm-{array_id}); results in {args.out.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
