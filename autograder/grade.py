"""``course grade``: grade a whole class on one machine, in parallel, with student code sandboxed.

    course grade SUBMISSION... --assignment NN_name --out DIR [--workers N] [--timeout S] [--memory GB]

The grader (this process) never runs student code and never shares memory with it. It starts one
fork server (:mod:`autograder.runner`), hands it one submission per free worker slot, watches
every running submission in a single event loop (per-cell and per-submission wall-clock limits,
a cap on what it may send back, every message checked field by field), and when a submission's
cells have run, has the fork server start that submission's *judge* (:mod:`autograder.judge`),
which runs the tests here, on the grader's side, by sending the submission requests and judging
the answers. Only the judge's verdicts count; what the submission's process says about itself can
only cost it points. Each submission's processes run in a cgroup of their own where the machine
has them (:mod:`autograder.cgroups`); after each submission the grader kills everything it started,
removes its cgroup, clears its uid's key rings and deletes its scratch folder. It alone writes the
output folder. Before any notebook runs, :mod:`autograder.notebook_info` reads every notebook in a
process of its own: another week's notebook is not run at all, and the manual questions' answers
(with the figures their cells draw while they run, sent as checked messages) make the hand-grading
pages (:mod:`autograder.manual`); ``--gradebook`` also writes the LMS import (:mod:`autograder.lms`).
Exit code 0 when the batch finished, whatever the scores; 2 when the command line or the assignment
is wrong.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import secrets
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import assignment as assignment_mod
from . import cgroups, inputs, lms, manual, messages, notebook_info, report, sandbox, similarity
from . import runner as runner_limits
from .csvcells import clean
from .inspector import Inspector
from .report import CaseResult, Result

REPO = Path(__file__).resolve().parent.parent
# what a submission's process may say about why it could not run: its row's status is one of these
# and a short, cleaned detail; anything else it says is marked as its own words
FATAL_KINDS = ("unreadable notebook", "sandbox setup failed", "grader error")
GRACE = 5.0
MSG_BYTES_CAP = 8 * 2**20
ZYGOTE_START_TIMEOUT = 180.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="course grade", description="Grade submissions of one assignment.")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help=".ipynb files, folders of them, or .zip files (LMS bulk downloads)")
    p.add_argument("--assignment", required=True, help="NN_name (autograder/NN_name) or a folder")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                   help="submissions graded at once (default: cores, at most 4)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per submission (default 600)")
    p.add_argument("--cell-timeout", type=float, default=None,
                   help="seconds per cell and per test case (default: min(120, timeout))")
    p.add_argument("--memory", type=float, default=4.0, help="memory cap per submission in GB (default 4)")
    p.add_argument("--sandbox", choices=["auto", "isolated", "user", "weak"], default="auto",
                   help="isolation mode (default: the strongest this machine allows)")
    p.add_argument("--scratch", type=Path, default=None,
                   help="where scratch folders go (default: a new folder in /var/tmp)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--gradebook", type=Path, default=None,
                   help="the gradebook CSV downloaded from Canvas (or Moodle's grading worksheet): "
                        "also write DIR/canvas_import.csv (moodle_import.csv) with this assignment's "
                        "column filled, to import back")
    p.add_argument("--gradebook-column", default=None, metavar="TEXT",
                   help="the gradebook's column for this assignment (its title, part of it, or its "
                        "Canvas id; default: the one whose title names the assignment)")
    p.add_argument("--no-similarity", action="store_true",
                   help="do not compare the submissions with each other "
                        "(course similarity DIR does it later)")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be at least 1")
    if args.cell_timeout is None:
        args.cell_timeout = min(120.0, args.timeout)
    return args


def fatal_status(reason: str) -> str:
    """The status of a row whose process reported that it could not run: one of FATAL_KINDS with
    its detail cleaned and cut, or the process's own words, marked as such."""
    kind, _, detail = reason.partition(": ")
    if kind in FATAL_KINDS:
        return f"{kind}: {clean(detail, 200)}" if detail else kind
    return f"error reported by the notebook's process: {clean(reason, 120)}"


# ---------------------------------------------------------------- one running submission

@dataclass
class Job:
    index: int
    sub: inputs.Submission
    staging: Path
    uid: int = -1
    scratch: Path | None = None           # the scratch folder on the grader's side (user and weak modes)
    group: cgroups.Group | None = None
    peak_memory: int | None = None
    oom: bool = False
    token: str = ""
    started: float = 0.0
    deadline: float = 0.0
    phase_deadline: float | None = None
    # the submission's process: its messages (msg) and the ends of its request pipes kept for the judge
    pid: int | None = None
    msg_r: int = -1
    req_w: int = -1
    ans_r: int = -1
    buf: bytes = b""
    received: int = 0
    exit_status: int | None = None
    ready_at: float | None = None
    cells_done: dict | None = None
    done_at: float | None = None
    cell: int | None = None
    # the judge
    judge_pid: int | None = None
    jmsg_r: int = -1
    jctl_w: int = -1
    jctl_out: bytes = b""
    jbuf: bytes = b""
    judge_exit: int | None = None
    judge_done: dict | None = None
    test: str | None = None
    checks: list[str] | None = None
    cases: dict[tuple[str, int], tuple[bool, str]] = field(default_factory=dict)
    # what went wrong
    killed: str | None = None
    kill_time: float | None = None
    fatal: str | None = None
    malformed: str | None = None
    tamper: list[str] = field(default_factory=list)
    tamper_after: list[str] = field(default_factory=list)      # reported after the tests ran
    suspicious: list[str] = field(default_factory=list)
    # for the hand-grading pages: what the grader read in the notebook, and the figures its cells drew
    info: dict = field(default_factory=dict)
    figure_cells: list[int] | None = None
    figures: list[tuple[int, str]] = field(default_factory=list)     # (cell, path under --out)
    figure_notes: list[tuple[int, str]] = field(default_factory=list)
    figure_bytes: int = 0

    @property
    def done(self) -> bool:
        return self.judge_done is not None


class Grader:
    """Runs a batch: one fork server, ``workers`` slots, one event loop."""

    def __init__(self, args: argparse.Namespace, asg: assignment_mod.Assignment) -> None:
        self.args = args
        self.asg = asg
        self.subs: list[inputs.Submission] = []
        self.results: list[Result] = []
        self.warnings: list[str] = []
        self.sel = selectors.DefaultSelector()
        self.jobs_by_id: dict[str, Job] = {}
        self.restore_modes: dict[str, int] = {}
        self.tests_payload = asg.tests_payload()
        self.cg: cgroups.Batch | None = None
        self.cg_note = ""
        self.pool = None

    # ------------------------------------------------------------ set-up
    def make_root(self) -> None:
        """The batch's private folder (before the submissions are collected into its staging)."""
        base = self.args.scratch or Path("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="course-grade-", dir=base))
        os.chmod(self.root, 0o711)
        self.staging = sandbox.make_private_dir(self.root / "staging")
        self.newroot = self.root / "newroot"     # where a submission builds its new root (isolated)
        self.newroot.mkdir(mode=0o755)

    def setup(self, subs: list[inputs.Submission]) -> None:
        args = self.args
        self.subs = subs
        requested = None if args.sandbox == "auto" else args.sandbox
        self.mode = sandbox.detect_mode(requested, str(self.newroot))
        self.out = args.out.resolve()
        for sub in report.OUTPUT_DIRS:
            shutil.rmtree(self.out / sub, ignore_errors=True)
        for name in report.OUTPUT_FILES:                 # nothing of an earlier run stays beside this one
            (self.out / name).unlink(missing_ok=True)
        kept = manual.set_aside_filled(self.out)         # but hand-entered grades are never deleted
        if kept:
            self.warnings.append(f"the filled-in manual.csv of an earlier run was kept as {kept.name}")
        self.out.mkdir(parents=True, exist_ok=True)
        if self.mode != "weak":
            self.pool = sandbox.UidPool(args.workers)
            self.free_uids = list(reversed(self.pool.uids))
        else:
            self.free_uids = [-1 - i for i in range(args.workers)]
        self.hide = self._secret_paths()
        self.view: list[str] = []
        if self.mode == "isolated":
            self.view = self._view_paths()
        elif self.mode == "user":
            blocked = sandbox.reach_plan(self._needed_paths())
            if blocked:
                self.warnings.append("Python or the course lives in a folder closed to other users "
                                     f"({blocked[0]}) and mount namespaces are not allowed here: "
                                     "falling back to the weak mode.")
                self.mode = "weak"
                self.pool.release()
                self.pool = None
                self.free_uids = [-1 - i for i in range(args.workers)]
        if self.mode == "user":
            for p in self.hide:
                if os.path.isdir(p):
                    self.restore_modes[p] = os.stat(p).st_mode & 0o7777
            sandbox.lock_down([Path(p) for p in self.restore_modes])
            self._warn_readable_inputs()
        elif self.mode == "weak":
            self.warnings.append(sandbox.MODE_NOTES["weak"])
        self.cg = cgroups.Batch.open(f"course-grade-{os.getpid()}", workers=args.workers) \
            if os.geteuid() == 0 else None
        self.cg_note = self.cg.note if self.cg else (
            "No cgroups (" + cgroups.last_note.removeprefix("no cgroups: ") + "): memory, process and CPU "
            "limits applied to each process on its own, not to a submission's processes together.")
        if self.cg is None:
            self.warnings.append(self.cg_note)
        for s in subs:
            if s.problem and s.problem.startswith("name clash"):
                self.warnings.append(f"name clash: the row {s.file!r} came from {s.source}")
        self._start_inspector()                  # reads the notebooks while the fork server starts
        self._start_zygote()
        self._collect_inspector()

    def _secret_candidates(self) -> list[Path]:
        """What student code must not see (the assignment, the output, the submissions, ...)."""
        candidates = [self.asg.folder, self.out, self.staging,
                      REPO / ".git", REPO / "solutions", REPO / "dev", REPO / "runs",
                      REPO / "nbgrader"]          # its source notebooks hold answers and hidden tests
        candidates += [p for p in assignment_mod.PACKAGE_DIR.iterdir()
                       if p.is_dir() and p.name != "__pycache__"]
        candidates += [Path(a) for a in self.args.submissions]
        return [c.resolve() for c in candidates if c.exists()]

    def _secret_paths(self) -> list[str]:
        """User mode: what to make unreadable; never a folder that holds the grader, Python or the data."""
        keep = [REPO, Path(sys.prefix).resolve(), self.root]
        stories = self._stories_file()
        if stories:
            keep.append(Path(stories).resolve())
        hide: list[str] = []
        for c in self._secret_candidates():
            if str(c) in hide:
                continue
            if any(c == k or c in k.parents for k in keep):
                if self.mode == "user":
                    self.warnings.append(f"not hidden from student code (it holds the grader itself): {c}")
                continue
            hide.append(str(c))
        return sorted(hide, key=lambda s: (s.count("/"), s))

    def _view_paths(self) -> list[str]:
        """Isolated mode: what the new root shows besides the system folders, read-only: Python and
        its packages, the course package and the stories text. Not the repository itself (it holds
        the tests and the solutions), not the rest of the data cache (trained weights of the
        solutions), nor any folder that holds something secret."""
        paths = {Path(p) for p in sys.path if p and os.path.exists(p)}
        paths |= {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
                  Path(sys.executable).resolve().parent, REPO / "course"}
        # the stories text only: the data cache also holds the solutions' trained weights
        stories = self._stories_file()
        if stories:
            paths.add(Path(stories))
        secrets_ = self._secret_candidates() + [REPO]
        view = []
        for p in sorted({Path(os.path.abspath(p)) for p in paths}):   # as named: sandbox binds the real
            real = p.resolve()                                         # path and links this name to it
            if real == Path("/") or any(s == real or real in s.parents for s in secrets_):
                if real != REPO:
                    self.warnings.append(f"not shown to student code (it holds grading material): {p}")
                continue
            view.append(str(p))
        return view

    def _needed_paths(self) -> list[Path]:
        paths = [Path(p) for p in sys.path if p and os.path.exists(p)]
        paths += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve(), REPO, self.root]
        stories = self._stories_file()
        if stories:
            paths.append(Path(stories))
        return paths

    def _warn_readable_inputs(self) -> None:
        for a in self.args.submissions:
            p = Path(a).resolve()
            if os.stat(p).st_mode & 0o004:
                self.warnings.append(f"{p} is readable by every user: student code may read it "
                                     "(chmod o-rwx it, or grade where mount namespaces are allowed)")

    @staticmethod
    def _stories_file() -> str | None:
        env = os.environ.get("COURSE_STORIES_FILE")
        if env and os.path.isfile(env):
            return os.path.abspath(env)
        cache = Path(os.environ.get("COURSE_DATA_CACHE") or REPO / "data_cache") / "tinystories-4MB.txt"
        return str(cache) if cache.is_file() else None

    def _zygote_env(self) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO),
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "NUMEXPR_NUM_THREADS": "1", "MPLBACKEND": "Agg", "COURSE_QUICK": "1",
            "HOME": str(self.root), "TMPDIR": str(self.root),
        }
        stories = self._stories_file()
        if stories:
            env["COURSE_STORIES_FILE"] = stories
        if os.environ.get("COURSE_DATA_CACHE"):
            env["COURSE_DATA_CACHE"] = os.environ["COURSE_DATA_CACHE"]
        return env

    # ------------------------------------------------------------ reading the notebooks
    def _start_inspector(self) -> None:
        """:mod:`autograder.notebook_info` on every staged notebook, in a process of its own under a
        memory cap, each notebook bounded in time (:mod:`autograder.inspector`): which week's
        notebook each one is, and its answers to the manual questions."""
        self.info: dict[int, dict] = {}
        items = [(i, str(s.path), str(s.path) + ".info.json")
                 for i, s in enumerate(self.subs) if s.path is not None]
        blank = manual.blank_notebook(self.asg)
        job = {"manual": [q.name for q in self.asg.questions if q.manual],
               "given": list(self.asg.given_code),
               "answer_templates": manual.answer_templates(blank, self.asg),
               "memory_bytes": 2 * 2**30}
        self.inspector = Inspector(items, job, self.root, self.staging / "notebook_info.log", REPO)

    def _collect_inspector(self) -> None:
        self.info = self.inspector.wait()
        for i, why in sorted(self.inspector.slow.items()):
            self.warnings.append(f"{self.subs[i].file}: {why}; graded without its week check and "
                                 "its hand-grading answers")
        for i, info in self.info.items():
            try:
                self._save_images(self.subs[i].stem, info)
            except (OSError, ValueError, TypeError, AttributeError, KeyError):
                self.info[i] = {"error": "not inspected"}
        known = manual.known_notebooks(self.asg)
        self.wrong: dict[int, str] = {}
        for i, info in self.info.items():
            other = notebook_info.wrong_notebook(info, self.asg.name, known, self.asg.given_code)
            if other:
                self.wrong[i] = other

    def _save_images(self, stem: str, info: dict) -> None:
        """The images saved in a notebook's skipped answer cells go to the output folder (checked
        again as PNGs); the answers keep their paths."""
        for a in info.get("answers", {}).values():
            for c in a.get("cells", []):
                saved = c.get("saved")
                if not saved:
                    continue
                for k, o in enumerate(saved, 1):
                    if "png" not in o:
                        continue
                    data = base64.b64decode(o.pop("png"), validate=True)
                    if notebook_info.check_png(data) is not None:
                        o["note"] = "a saved image not shown: not a PNG"
                        continue
                    path = f"figures/{stem}/saved-cell{int(c['cell']):03d}-{k}.png"
                    (self.out / path).parent.mkdir(parents=True, exist_ok=True)
                    (self.out / path).write_bytes(data)
                    o["figure"] = path

    def _figure_cells(self, index: int) -> list[int] | None:
        """The cells whose figures the hand-grading pages show (the manual answers' code cells that
        run); None (every cell) when the notebook could not be read here."""
        info = self.info.get(index, {})
        if "answers" not in info:
            return None
        return sorted({c["cell"] for a in info["answers"].values() for c in a.get("cells", [])
                       if c.get("type") == "code" and not c.get("skipped")})

    def _start_zygote(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = open(self.staging / "runner.log", "ab")
        self.zygote = subprocess.Popen(
            [sys.executable, "-m", "autograder.runner", "--zygote", str(child.fileno())],
            cwd=str(self.root), env=self._zygote_env(), pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True)
        child.close()
        self.sock = parent
        self.sock.settimeout(ZYGOTE_START_TIMEOUT)
        try:
            msg = self.sock.recv(1 << 16)
        except (TimeoutError, OSError):
            msg = b""
        if not msg or json.loads(msg).get("t") != "up":
            raise RuntimeError(f"the runner did not start; see {self.staging / 'runner.log'}")
        self.sock.setblocking(False)
        self.sel.register(self.sock, selectors.EVENT_READ, ("zygote", None))

    # ------------------------------------------------------------ the loop
    def run(self) -> list[Result]:
        self.t0 = time.monotonic()
        pending: deque[Job] = deque()
        for i, sub in enumerate(self.subs):
            if sub.path is None:
                self.results.append(self._unrunnable(sub, sub.problem or "unreadable"))
                continue
            if i in self.wrong:                   # another week's notebook: its tests are not run
                job = Job(index=i, sub=sub, staging=Path(), info=self.info.get(i, {}))
                job.fatal = f"wrong notebook: this is {self.wrong[i]}, not {self.asg.name}"
                job.started = time.monotonic()
                self.results.append(self._result(job))
                sub.path.unlink(missing_ok=True)
                continue
            # staged as NNNNN.ipynb by inputs.collect; its file name goes beside it, for the child
            # alone to read (the fork server never sees a student's name)
            Path(str(sub.path) + ".name").write_text(sub.notebook_name, encoding="utf-8")
            pending.append(Job(index=i, sub=sub, staging=sub.path, info=self.info.get(i, {}),
                               figure_cells=self._figure_cells(i)))
        bar = self._progress(len(self.subs))
        bar.update(len(self.results))
        running: dict[str, Job] = {}
        self.running = running
        try:
            while pending or running:
                while pending and self.free_uids:
                    job = pending.popleft()
                    self._start(job, self.free_uids.pop())
                    running[job.token] = job
                self._poll(running)
                for token in [t for t, j in running.items() if self._finished(j)]:
                    job = running.pop(token)
                    try:
                        self.results.append(self._finish(job))
                    except Exception as exc:     # a bug met by one row costs that row, not the batch
                        print(f"course grade: {job.sub.file}: grading error: {exc!r}", file=sys.stderr)
                        job.fatal = f"grading error: {type(exc).__name__}; grade this one again"
                        self.results.append(self._result(job))
                    bar.update(1)
        finally:
            bar.close()
            for job in running.values():
                self._kill(job, "grading interrupted")
                self._cleanup(job)
        return self.results

    def _progress(self, total: int) -> Any:
        from tqdm import tqdm
        tqdm.monitor_interval = 0  # no monitor thread: the grader forks to clean up
        return tqdm(total=total, unit="nb", desc="grading", file=sys.stderr,
                    disable=self.args.no_progress or None, dynamic_ncols=True)

    def _start(self, job: Job, uid: int) -> None:
        job.uid = uid
        job.token = secrets.token_hex(8)
        real_uid = uid if uid >= 0 else None
        name = f"s{job.index:05d}-{job.token[:6]}"
        if self.mode == "isolated":   # a tmpfs in the submission's own mount namespace, nowhere else
            scratch = sandbox.SCRATCH
            tmpdir = "/tmp"
        else:
            job.scratch = sandbox.make_scratch(self.root, name, real_uid)
            scratch = str(job.scratch)
            tmpdir = f"{scratch}/tmp"
        limits = sandbox.Limits(memory_bytes=int(self.args.memory * 2**30),
                                cpu_seconds=int(self.args.timeout) + 30)
        if self.cg is not None:
            try:
                job.group = self.cg.create(name, memory_bytes=limits.memory_bytes, max_tasks=limits.max_tasks)
            except OSError as exc:
                self.warnings.append(f"no cgroup for {job.sub.file}: {exc}")
        msg_r, msg_w = os.pipe()
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        os.set_blocking(msg_r, False)
        job.msg_r, job.req_w, job.ans_r = msg_r, req_w, ans_r
        spec = sandbox.SandboxSpec(mode=self.mode, uid=uid, scratch=scratch, limits=vars(limits),
                                   view=self.view, newroot=str(self.newroot),
                                   cgroup=job.group.procs_files if job.group else [])
        job_msg = {  # names no submission: the staging file is numbered, the name beside it
            "kind": "submission", "id": job.token, "staging": str(job.staging),
            "sandbox": vars(spec), "repo": str(REPO), "cell_timeout": self.args.cell_timeout,
            "figure_cells": job.figure_cells, "setup": runner_limits.setup_cell(self.asg.given_code),
            "env": {"HOME": scratch, "TMPDIR": tmpdir, "USER": "course-grader",
                    "LOGNAME": "course-grader", "MPLCONFIGDIR": f"{scratch}/.matplotlib",
                    "COURSE_GRADE_JOB": job.token},
        }
        job.started = time.monotonic()
        job.deadline = job.started + self.args.timeout
        socket.send_fds(self.sock, [json.dumps(job_msg).encode()], [msg_w, req_r, ans_w])
        for fd in (msg_w, req_r, ans_w):
            os.close(fd)
        self.jobs_by_id[job.token] = job
        self.sel.register(msg_r, selectors.EVENT_READ, ("msg", job))

    def _start_judge(self, job: Job) -> None:
        """The submission's cells have run: start its judge, which runs the tests on our side."""
        jmsg_r, jmsg_w = os.pipe()
        jctl_r, jctl_w = os.pipe()
        os.set_blocking(jmsg_r, False)
        os.set_blocking(jctl_w, False)
        job.jmsg_r, job.jctl_w = jmsg_r, jctl_w
        # the judge joins the submission's cgroup: the CPU and memory the submission makes it spend
        # (a test calling back and forth) count against that submission, not against its neighbours
        judge_msg = {"kind": "judge", "id": "j" + job.token, "staging": str(job.staging),
                     "memory_bytes": int(max(self.args.memory, 2.0) * 2**30),
                     "cgroup": job.group.procs_files if job.group is not None else []}
        socket.send_fds(self.sock, [json.dumps(judge_msg).encode()], [jmsg_w, jctl_r, job.req_w, job.ans_r])
        for fd in (jmsg_w, jctl_r, job.req_w, job.ans_r):
            os.close(fd)
        job.req_w = job.ans_r = -1
        self.jobs_by_id["j" + job.token] = job
        control = {"tests": self.tests_payload, "case_timeout": self.args.cell_timeout,
                   "given_code": self.asg.given_code}
        job.jctl_out = json.dumps(control).encode()
        self.sel.register(jmsg_r, selectors.EVENT_READ, ("judge", job))
        self.sel.register(jctl_w, selectors.EVENT_WRITE, ("jctl", job))

    def _poll(self, running: dict[str, Job]) -> None:
        now = time.monotonic()
        deadlines = [d for j in running.values() for d in (j.deadline, j.phase_deadline, j.kill_time)
                     if d is not None]
        timeout = max(0.0, min([0.5] + [d - now for d in deadlines]))
        for key, _mask in self.sel.select(timeout):
            kind, job = key.data
            if kind == "zygote":
                self._zygote_messages()
            elif kind == "msg":
                self._read_messages(job)
            elif kind == "judge":
                self._read_judge(job)
            elif kind == "jctl":
                self._write_judge_control(job)
        now = time.monotonic()
        for job in running.values():
            if job.killed or self._finished(job):
                continue
            if now > job.deadline:
                where = f" (in cell {job.cell})" if job.cell and not job.cells_done else ""
                self._kill(job, f"timeout: the notebook ran over {self.args.timeout:g} s{where}")
            elif job.phase_deadline is not None and now > job.phase_deadline:
                if job.cells_done is None:
                    self._kill(job, f"timeout: cell {job.cell} ran over {self.args.cell_timeout:g} s")
                else:
                    self._kill(job, f"timeout: the tests of {job.test} ran too long")

    def _zygote_messages(self) -> None:
        while True:
            try:
                raw = self.sock.recv(1 << 16)
            except BlockingIOError:
                return
            if not raw:
                self._restart_zygote()
                return
            msg = json.loads(raw)
            key = msg.get("id", "")
            job = self.jobs_by_id.get(key)
            if job is None:
                continue
            is_judge = key.startswith("j")
            if msg["t"] == "pid":
                if is_judge:
                    job.judge_pid = msg["pid"]
                else:
                    job.pid = msg["pid"]
            elif msg["t"] == "exit":
                if is_judge:
                    job.judge_exit = msg["status"]
                    self._read_judge(job)
                else:
                    job.exit_status = msg["status"]
                    self._read_messages(job)

    def _restart_zygote(self) -> None:
        """The fork server died (it never runs student code, but the machine may kill it): the
        submissions it was running get a clear status, and a new one takes over the rest."""
        self.sel.unregister(self.sock)
        self.sock.close()
        self.zygote.kill()
        self.zygote.wait()
        for job in self.running.values():
            if not self._finished(job):
                job.fatal = job.fatal or "grading error: the runner stopped; grade this one again"
                job.exit_status = -1 if job.exit_status is None else job.exit_status
                job.judge_exit = -1 if job.judge_exit is None else job.judge_exit
                for pid in (job.pid, job.judge_pid):
                    if pid:
                        sandbox.killpg(pid)
                if job.group is not None:
                    job.group.kill()
        self.log.close()
        self._start_zygote()

    @staticmethod
    def _lines(job: Job, fd: int, buf_attr: str, cap: int,
               line_cap: int | None = None) -> tuple[list[bytes], bool]:
        """Complete lines available on ``fd``; (lines, closed). Raises OverflowError past ``cap``;
        stops reading when an unfinished line is longer than ``line_cap``."""
        lines: list[bytes] = []
        buf = getattr(job, buf_attr)
        closed = False
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                closed = True
                break
            job.received += len(chunk)
            if job.received > cap:
                setattr(job, buf_attr, b"")
                raise OverflowError
            buf += chunk
            *complete, buf = buf.split(b"\n")
            lines += complete
            if line_cap is not None and len(buf) > line_cap:
                break
        setattr(job, buf_attr, buf)
        return lines, closed

    def _read_messages(self, job: Job) -> None:
        """Messages from the submission's process: progress and self-reports, all untrusted."""
        if job.msg_r < 0:
            return
        try:
            lines, closed = self._lines(job, job.msg_r, "buf", MSG_BYTES_CAP, messages.MAX_LINE)
        except OverflowError:
            self._kill(job, "grading error: the submission flooded the grader with messages")
            return
        if len(job.buf) > messages.MAX_LINE and not job.malformed:   # a line that never ends
            job.malformed = "a message too long"
            job.buf = b""
            self._kill(job, "malformed message")
        for line in lines:
            if job.malformed:
                break
            try:
                msg = messages.parse_submission(line)
            except messages.Malformed as exc:
                job.malformed = str(exc)     # the row's status; nothing more to learn from it
                self._kill(job, "malformed message")
                continue
            self._handle(job, msg)
        if closed:
            self.sel.unregister(job.msg_r)
            os.close(job.msg_r)
            job.msg_r = -1

    def _handle(self, job: Job, msg: dict) -> None:
        t = msg["t"]
        now = time.monotonic()
        if t == "ready" and job.ready_at is None:
            job.ready_at = now
        elif t == "fatal" or (t == "unreadable" and job.cells_done is None):
            job.fatal = fatal_status(msg["reason"])
            if msg.get("traceback"):
                print(f"course grade: {job.sub.file}: {msg['traceback']}", file=sys.stderr)
        elif t == "cell" and job.cells_done is None:
            job.cell = msg["i"]
            job.phase_deadline = now + self.args.cell_timeout + GRACE
        elif t == "figure" and job.cells_done is None:
            self._figure(job, msg)
        elif t == "cells_done" and job.cells_done is None:
            job.cells_done = msg
            job.cell = None
            job.tamper += msg["tamper"]
            job.phase_deadline = now + self.args.cell_timeout + GRACE
            self._start_judge(job)
        elif t == "done" and job.cells_done is not None and job.done_at is None:
            job.tamper_after += msg["tamper"]
            job.done_at = now
        else:
            job.malformed = f"a {t!r} message out of order"
            self._kill(job, "malformed message")

    def _figure(self, job: Job, msg: dict) -> None:
        """A figure a cell drew (already parsed field by field): kept when it is a PNG within the
        caps and from a cell whose figures were asked for; else dropped with a note."""
        cell, data = msg["cell"], msg["png"]
        note = msg.get("note")
        if job.figure_cells is not None and cell not in job.figure_cells:
            note = "a figure from a cell that is not an answer (dropped)"
        elif data:
            problem = notebook_info.check_png(data, runner_limits.FIGURE_BYTES)
            if problem:
                note = f"a figure dropped: {problem}"
            elif len(job.figures) >= runner_limits.FIGURES or \
                    job.figure_bytes + len(data) > runner_limits.FIGURE_TOTAL_BYTES:
                note = "a figure dropped: more figures than are kept"
            else:                 # straight to the output folder: the grader holds no images
                n = 1 + sum(1 for c, _ in job.figures if c == cell)
                path = f"figures/{job.sub.stem}/cell{cell:03d}-{n}.png"
                try:
                    (self.out / path).parent.mkdir(parents=True, exist_ok=True)
                    (self.out / path).write_bytes(data)
                except OSError as exc:
                    note = f"a figure could not be written: {exc.strerror}"
                else:
                    job.figures.append((cell, path))
                    job.figure_bytes += len(data)
                    return
        if note and len(job.figure_notes) < 50:
            job.figure_notes.append((cell, note))

    def _read_judge(self, job: Job) -> None:
        """The judge's verdicts (trusted: the judge runs no student code)."""
        if job.jmsg_r < 0:
            return
        try:
            lines, closed = self._lines(job, job.jmsg_r, "jbuf", 64 * MSG_BYTES_CAP)
        except OverflowError:
            lines, closed = [], True
        now = time.monotonic()
        for line in lines:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            t = msg.get("t") if isinstance(msg, dict) else None
            if t == "notebook":
                job.checks = [str(c) for c in msg.get("checks", [])]
                job.suspicious = [str(c)[:200] for c in msg.get("suspicious", [])][:20]
            elif t == "test":
                job.test = str(msg.get("q"))
                n = sum(len(q.cases) for q in self.asg.auto if q.name == job.test)
                job.phase_deadline = now + (self.args.cell_timeout + 5) * max(n, 1) + GRACE
            elif t == "case":
                job.cases[(str(msg.get("q")), int(msg.get("i", -1)))] = (
                    msg.get("passed") is True, str(msg.get("message", ""))[:4000])
            elif t == "done":
                job.judge_done = msg
                job.phase_deadline = now + GRACE + 10     # the submission sends its last report
            elif t == "fatal":
                job.fatal = job.fatal or f"grading error in the judge: {str(msg.get('reason'))[:200]}"
                print(f"course grade: judge of {job.sub.file}: {msg.get('traceback', '')}", file=sys.stderr)
        if closed:
            self.sel.unregister(job.jmsg_r)
            os.close(job.jmsg_r)
            job.jmsg_r = -1

    def _write_judge_control(self, job: Job) -> None:
        try:
            n = os.write(job.jctl_w, job.jctl_out)
            job.jctl_out = job.jctl_out[n:]
        except BlockingIOError:
            return
        except BrokenPipeError:
            job.jctl_out = b""
        if not job.jctl_out:
            self.sel.unregister(job.jctl_w)
            os.close(job.jctl_w)
            job.jctl_w = -1

    def _kill(self, job: Job, reason: str) -> None:
        if job.killed is None:
            job.killed = reason
            job.kill_time = time.monotonic() + GRACE
        for pid in (job.pid, job.judge_pid):
            if pid:
                sandbox.killpg(pid)
        self._sweep(job)

    def _sweep(self, job: Job) -> None:
        """Kill every process of the submission: its cgroup at once where there is one (nothing can
        leave it), else every process of its uid, else (weak mode) its tagged processes."""
        if job.group is not None:
            job.group.kill()
        elif job.uid >= 0:
            sandbox.kill_uid(job.uid)
        elif job.pid:
            sandbox.kill_tagged(self.zygote.pid, job.token)

    def _finished(self, job: Job) -> bool:
        """The submission's process has exited and, if it was started, so has its judge."""
        judge_over = job.jmsg_r < 0 and (job.judge_pid is None or job.judge_exit is not None) \
            if job.cells_done is not None else True
        if job.exit_status is not None and judge_over:
            return True
        return job.killed is not None and job.kill_time is not None and time.monotonic() > job.kill_time

    # ------------------------------------------------------------ results
    def _finish(self, job: Job) -> Result:
        for pid in (job.pid, job.judge_pid):
            if pid:
                sandbox.killpg(pid)
        self._sweep(job)
        if job.msg_r >= 0:
            self._read_messages(job)
        if job.jmsg_r >= 0:
            self._read_judge(job)
        self._cleanup(job)
        self.free_uids.append(job.uid)
        return self._result(job)

    def _release(self, job: Job) -> None:
        """What a submission leaves that outlives its processes: its cgroup, its uid's key rings,
        and in user mode what its uid left in the shared temporary folders and SysV IPC."""
        if job.group is not None:
            job.peak_memory = job.group.peak_memory()
            job.oom = job.group.oom_kills() > 0
            if not job.group.remove():
                self.warnings.append(f"the cgroup of {job.sub.file} could not be removed")
            job.group = None
        if job.uid >= 0:
            sandbox.clear_keys(job.uid)
            if self.mode == "user":
                sandbox.sweep_uid_files(job.uid)

    def _result(self, job: Job) -> Result:
        status, zero = self._status(job)
        status = clean(status, 400)       # a status is one line, whatever a submission made it hold
        res = Result(file=job.sub.file, stem=job.sub.stem, status=status, peak_memory=job.peak_memory,
                     seconds=time.monotonic() - job.started,
                     exec_seconds=((job.done_at or time.monotonic()) - (job.ready_at or job.started)))
        cd = job.cells_done or {}
        res.cell_errors = list(cd.get("errors", []))[:200]
        res.tampering = sorted(set(job.tamper + job.tamper_after))
        res.tampering += [f"suspicious: {s}" for s in job.suspicious]
        done = job.judge_done or {}
        if done:
            res.traffic = {"requests": int(done.get("requests", 0)),
                           "answer_bytes": int(done.get("bytes", 0)),
                           "test_seconds": float(done.get("seconds", 0.0))}
        res.tests_ran = job.done and not zero
        res.output = str(cd.get("output", ""))[:70000]
        res.answers = job.info.get("answers", {})
        res.notebook_note = str(job.info.get("error", ""))
        res.figures = list(job.figures)
        res.figure_notes = list(job.figure_notes)
        res.cell_outputs = self._cell_outputs(res.answers, cd.get("marks", []), res.output)
        res.answer_code = list(job.info.get("code", []))
        for q in self.asg.auto:
            earned = 0.0
            all_passed = True
            for c in q.cases:
                passed, message = job.cases.get((q.name, c.index), (False, ""))
                if zero:
                    passed = False
                if not message:
                    message = f"not run: {status}" if status != "ok" else "not run"
                all_passed &= passed
                shown, detail = message, ""
                if c.hidden:
                    detail = message
                    shown = "passed" if passed else (c.failure_message or "A hidden test failed.")
                elif passed and c.success_message:
                    shown = c.success_message
                res.cases.append(CaseResult(question=q.name, name=c.name, points=c.points if passed else 0.0,
                                            max_points=c.points, hidden=c.hidden, passed=passed,
                                            message=shown, detail=detail))
                earned += c.points if passed else 0.0
            if q.all_or_nothing and not all_passed:
                earned = 0.0
            res.question_points[q.name] = earned
        return res

    @staticmethod
    def _cell_outputs(answers: dict, marks: list, output: str) -> dict[int, str]:
        """What each manual answer's code cell printed while the grader ran it (from where each
        cell's output starts in the notebook's output)."""
        wanted = {c["cell"] for a in answers.values() for c in a.get("cells", [])
                  if c.get("type") == "code" and not c.get("skipped")}
        starts = [(int(c), int(o)) for c, o in marks]
        cut = output.find("\n[... output cut: ")
        kept = len(output) if cut < 0 else cut
        out: dict[int, str] = {}
        for k, (cell, start) in enumerate(starts):
            if cell in wanted:
                end = starts[k + 1][1] if k + 1 < len(starts) else kept
                text = output[min(start, kept):min(end, kept)]
                if cut >= 0 and end > kept:
                    text += "\n[output cut: the notebook printed too much]"
                out[cell] = text[:6000]
        return out

    def _status(self, job: Job) -> tuple[str, bool]:
        """The row's grading_status, and whether its points are forced to zero."""
        if job.fatal:
            return job.fatal, True
        if job.malformed:
            return ("tampering detected: malformed message from the notebook's process "
                    f"({job.malformed})"), True
        if job.tamper:
            seen = list(dict.fromkeys(job.tamper))
            more = f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""
            return f"tampering detected: {seen[0]}{more}", True
        if job.tamper_after:
            # said by the submission's process after it saw the tests' inputs: its words stay out of
            # the status (the student's feedback shows it), the details are in results/
            return "tampering detected: torch or the course changed while the tests ran", True
        if job.killed and not job.done:
            return job.killed, job.cells_done is None
        if job.cells_done is None:
            return self._death(job, f" in cell {job.cell}" if job.cell else ""), True
        if not job.done:
            return "grading error: the tests stopped early; grade this one again", False
        if job.judge_done.get("gone"):
            where = f" during the tests of {job.test}" if job.test else " during the tests"
            if job.exit_status is None or "stopped answering" in str(job.judge_done.get("gone")):
                return f"timeout: the notebook stopped answering{where}", False
            # no exit code or signal number here: after the tests' inputs, they would be a channel
            if job.oom:
                return self._death(job, where), False
            return f"process ended{where} (see results/ for how)", False
        errors = (job.cells_done or {}).get("errors", [])
        for kind, text in (("timeout", "cell timeout: cell {cell} {error}"),
                           ("memory", "memory limit: cell {cell} ran out of memory"),
                           ("exit", "sys.exit() in cell {cell}")):
            hit = [e for e in errors if e.get("kind") == kind]
            if hit:
                return text.format(**hit[0]), False
        checks = set(job.checks or [])
        missing = [q for q in self.asg.checks if q not in checks]
        if missing:
            return f"cells deleted: no check cell for {', '.join(missing)}", False
        if job.suspicious:
            more = f" (and {len(job.suspicious) - 1} more)" if len(job.suspicious) > 1 else ""
            return f"suspicious code: {job.suspicious[0]}{more}; points as earned, read the notebook", False
        return "ok", False

    def _death(self, job: Job, where: str) -> str:
        """How the submission's process ended, for its status."""
        if job.oom:
            return (f"memory limit: the notebook's processes used more than {self.args.memory:g} GB "
                    f"together{where}")
        st = job.exit_status or 0
        if os.WIFSIGNALED(st):
            number = os.WTERMSIG(st)
            try:
                sig = signal.Signals(number).name
            except ValueError:                      # real-time signals have no name
                sig = f"signal {number}"
            hint = " (out of memory?)" if sig in ("SIGKILL", "SIGSEGV", "SIGBUS", "SIGABRT") else ""
            if sig == "SIGXCPU":
                return f"timeout: CPU time limit{where}"
            return f"process killed by {sig}{where}{hint}"
        code = os.waitstatus_to_exitcode(st) if st else 0
        return f"process exited{where} (exit code {code}: os._exit or a crash)"

    def _unrunnable(self, sub: inputs.Submission, problem: str) -> Result:
        job = Job(index=-1, sub=sub, staging=Path())
        job.fatal = problem
        job.started = time.monotonic()
        return self._result(job)

    def _cleanup(self, job: Job) -> None:
        self._release(job)
        for fd in (job.msg_r, job.jmsg_r, job.jctl_w, job.req_w, job.ans_r):
            if fd >= 0:
                try:
                    self.sel.unregister(fd)
                except (KeyError, ValueError):
                    pass
                os.close(fd)
        job.msg_r = job.jmsg_r = job.jctl_w = job.req_w = job.ans_r = -1
        self.jobs_by_id.pop(job.token, None)
        self.jobs_by_id.pop("j" + job.token, None)
        if job.scratch is not None:
            shutil.rmtree(job.scratch, ignore_errors=True)
        if job.staging and job.staging.name:
            job.staging.unlink(missing_ok=True)
            Path(str(job.staging) + ".name").unlink(missing_ok=True)

    # ------------------------------------------------------------ tear-down
    def close(self) -> None:
        if getattr(self, "inspector", None) is not None:
            self.inspector.kill()
        if hasattr(self, "zygote"):
            try:
                self.sock.close()
                self.zygote.wait(timeout=10)
            except Exception:
                pass
            if self.zygote.poll() is None:
                self.zygote.kill()
            self.log.close()
        for path, mode in self.restore_modes.items():
            os.chmod(path, mode)
        if self.pool is not None:
            for uid in self.pool.uids:
                sandbox.kill_uid(uid)
            self.pool.release()
        if self.cg is not None:
            self.cg.close()
        if hasattr(self, "root"):
            shutil.rmtree(self.root, ignore_errors=True)


def peak_memory_mb() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would include what the parent held
    before it exec'ed us)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main(argv: list[str] | None = None) -> int:
    """``course grade``: returns 0 when the batch finished (whatever the scores), 2 on bad input."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        asg = assignment_mod.load(args.assignment)
    except assignment_mod.AssignmentError as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return 2
    if args.gradebook is not None:        # a wrong gradebook is a usage error before, not after, grading
        try:
            lms.check_gradebook(args.gradebook, asg, args.gradebook_column)
        except lms.GradebookError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
    t0 = time.monotonic()
    grader = Grader(args, asg)
    try:
        grader.make_root()
        try:  # every notebook is streamed into the batch's private staging folder
            subs = inputs.collect(args.submissions, grader.staging)
        except inputs.InputError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
        if not subs:
            print("course grade: no notebooks found in " + " ".join(args.submissions), file=sys.stderr)
            return 2
        grader.setup(subs)
        results = grader.run()
    finally:
        grader.close()
    meta = {"workers": args.workers, "mode": grader.mode, "mode_note": sandbox.MODE_NOTES[grader.mode],
            "cgroups": grader.cg.kind if grader.cg else "none", "cgroups_note": grader.cg_note,
            "warnings": grader.warnings, "wall_seconds": time.monotonic() - t0,
            "grader_peak_memory_mb": peak_memory_mb()}
    report.write_all(grader.out, asg, results, meta)
    if not args.no_similarity:        # flags for a person to look at: nothing in grades or feedback
        print(similarity.after_grading(grader.out))
    ok = sum(1 for r in results if r.status == "ok")
    print(f"graded {len(results)} submissions of {asg.name} in {meta['wall_seconds']:.1f} s "
          f"({ok} ok, {len(results) - ok} not ok; sandbox: {grader.mode}) -> {grader.out / 'grades.csv'}")
    if any(q.manual for q in asg.questions):
        print(f"hand grading: open {grader.out / 'manual'}/<question>.html, fill in "
              f"{grader.out / 'manual.csv'}, then: course manual {grader.out} FILLED.csv")
    for line in meta.get("manual_notes", []):
        print("note: " + line)
    if args.gradebook is not None:
        try:
            for line in lms.export(grader.out, args.gradebook, args.gradebook_column):
                print(line)
        except lms.GradebookError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
    if grader.mode != "isolated":
        print("warning: " + sandbox.MODE_NOTES[grader.mode], file=sys.stderr)
    if grader.cg is None:
        print("warning: " + grader.cg_note, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
