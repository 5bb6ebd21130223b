"""``course grade``: grade a whole class on one machine, in parallel, with student code sandboxed.

    course grade SUBMISSION... --assignment NN_name --out DIR [--workers N] [--timeout S] [--memory GB]

The grader (this process) never runs student code and never shares memory with it. It starts one
fork server (:mod:`autograder.runner`), hands it one submission per free worker slot, watches
every running submission in a single event loop (per-cell and per-submission wall-clock limits,
a cap on what it may send back), sends the tests to a submission only when its cells have run,
checks the nonce on every result, and after each submission kills everything it started and
deletes its scratch folder. It alone writes the output folder. Exit code 0 when the batch
finished, whatever the scores; 2 when the command line or the assignment is wrong.
"""
from __future__ import annotations

import argparse
import json
import os
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
from . import inputs, report, sandbox
from .report import CaseResult, Result

REPO = Path(__file__).resolve().parent.parent
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
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be at least 1")
    if args.cell_timeout is None:
        args.cell_timeout = min(120.0, args.timeout)
    return args


# ---------------------------------------------------------------- one running submission

@dataclass
class Job:
    index: int
    sub: inputs.Submission
    staging: Path
    uid: int = -1
    scratch: Path | None = None
    pid: int | None = None
    msg_r: int = -1
    ctl_w: int = -1
    token: str = ""
    buf: bytes = b""
    received: int = 0
    ctl_out: bytes = b""
    nonce: str = ""
    started: float = 0.0
    ready_at: float | None = None
    done_at: float | None = None
    deadline: float = 0.0
    phase_deadline: float | None = None
    cell: int | None = None
    test: str | None = None
    exit_status: int | None = None
    killed: str | None = None
    kill_time: float | None = None
    fatal: str | None = None
    cells_done: dict | None = None
    cases: dict[tuple[str, int], tuple[bool, str]] = field(default_factory=dict)
    expected: list[tuple[str, int]] = field(default_factory=list)
    forged: str | None = None
    tamper: list[str] = field(default_factory=list)
    done: bool = False


class Grader:
    """Runs a batch: one fork server, ``workers`` slots, one event loop."""

    def __init__(self, args: argparse.Namespace, asg: assignment_mod.Assignment,
                 subs: list[inputs.Submission]) -> None:
        self.args = args
        self.asg = asg
        self.subs = subs
        self.results: list[Result] = []
        self.warnings: list[str] = []
        self.sel = selectors.DefaultSelector()
        self.jobs_by_id: dict[str, Job] = {}
        self.restore_modes: dict[str, int] = {}
        self.tests_payload = asg.tests_payload()
        self.expected = [(q.name, c.index) for q in asg.auto for c in q.cases]

    # ------------------------------------------------------------ set-up
    def setup(self) -> None:
        args = self.args
        requested = None if args.sandbox == "auto" else args.sandbox
        self.mode = sandbox.detect_mode(requested)
        base = args.scratch or Path("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="course-grade-", dir=base))
        os.chmod(self.root, 0o711)
        self.staging = sandbox.make_private_dir(self.root / "staging")
        self.out = args.out.resolve()
        for sub in ("results", "feedback"):
            shutil.rmtree(self.out / sub, ignore_errors=True)
        self.out.mkdir(parents=True, exist_ok=True)
        if self.mode != "weak":
            self.pool = sandbox.UidPool(args.workers)
            self.free_uids = list(reversed(self.pool.uids))
        else:
            self.pool = None
            self.free_uids = [-1 - i for i in range(args.workers)]
        self.hide = self._secret_paths()
        self.reach: list[list] = []
        if self.mode != "weak":
            self.reach = sandbox.reach_plan(self._needed_paths(), self.root / "hold")
            if self.reach and self.mode == "user":
                self.warnings.append("Python or the course lives in a folder closed to other users "
                                     f"({self.reach[0][0]}) and mount namespaces are not allowed here: "
                                     "falling back to the weak mode.")
                self.mode = "weak"
                self.reach = []
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
        self._start_zygote()

    def _keep_paths(self) -> list[str]:
        """What student code must see: the course, Python and the stories (also below /tmp)."""
        keep = [REPO, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
        stories = self._stories_file()
        if stories:
            keep.append(Path(stories).resolve())
        return sorted({str(p) for p in keep})

    def _secret_paths(self) -> list[str]:
        """What student code must not see; never a folder that holds the grader, Python or the data."""
        keep = [REPO, Path(sys.prefix).resolve(), self.root]
        stories = self._stories_file()
        if stories:
            keep.append(Path(stories).resolve())
        candidates = [self.asg.folder, self.out, self.staging,
                      REPO / ".git", REPO / "solutions", REPO / "dev", REPO / "runs"]
        candidates += [p for p in assignment_mod.PACKAGE_DIR.iterdir()
                       if p.is_dir() and p.name != "__pycache__"]
        candidates += [Path(a) for a in self.args.submissions]
        hide: list[str] = []
        for c in candidates:
            c = c.resolve()
            if not c.exists() or str(c) in hide:
                continue
            if any(c == k or c in k.parents for k in keep):
                self.warnings.append(f"not hidden from student code (it holds the grader itself): {c}")
                continue
            hide.append(str(c))
        return sorted(hide, key=lambda s: (s.count("/"), s))

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
            if sub.data is None:
                self.results.append(self._unrunnable(sub, sub.problem or "unreadable"))
                continue
            staging = self.staging / f"{i:05d}.ipynb"
            staging.write_bytes(sub.data)
            sub.data = None
            pending.append(Job(index=i, sub=sub, staging=staging))
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
                    self.results.append(self._finish(job))
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
        job.scratch = sandbox.make_scratch(self.root, f"s{job.index:05d}-{job.token[:6]}", real_uid)
        msg_r, msg_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        os.set_blocking(msg_r, False)
        os.set_blocking(ctl_w, False)
        job.msg_r, job.ctl_w = msg_r, ctl_w
        spec = sandbox.SandboxSpec(
            mode=self.mode, uid=uid, scratch=str(job.scratch), hide=self.hide, reach=self.reach,
            keep=self._keep_paths(),
            limits=vars(sandbox.Limits(memory_bytes=int(self.args.memory * 2**30),
                                       cpu_seconds=int(self.args.timeout) + 30)))
        job_msg = {
            "id": job.token, "staging": str(job.staging),
            "notebook_name": job.sub.notebook_name.replace("/", "_"),
            "sandbox": vars(spec), "repo": str(REPO), "cell_timeout": self.args.cell_timeout,
            "env": {"HOME": str(job.scratch), "TMPDIR": str(job.scratch / "tmp"), "USER": "course-grader",
                    "LOGNAME": "course-grader", "MPLCONFIGDIR": str(job.scratch / ".matplotlib"),
                    "COURSE_GRADE_JOB": job.token},
        }
        job.started = time.monotonic()
        job.deadline = job.started + self.args.timeout
        job.expected = list(self.expected)
        socket.send_fds(self.sock, [json.dumps(job_msg).encode()], [msg_w, ctl_r])
        os.close(msg_w)
        os.close(ctl_r)
        self.jobs_by_id[job.token] = job
        self.sel.register(msg_r, selectors.EVENT_READ, ("msg", job))

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
            elif kind == "ctl":
                self._write_ctl(job)
        now = time.monotonic()
        for job in running.values():
            if job.killed or job.exit_status is not None:
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
            job = self.jobs_by_id.get(msg.get("id", ""))
            if job is None:
                continue
            if msg["t"] == "pid":
                job.pid = msg["pid"]
            elif msg["t"] == "exit":
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
            if job.exit_status is None:
                job.fatal = job.fatal or "grading error: the runner stopped; grade this one again"
                job.exit_status = -1
                if job.pid:
                    sandbox.killpg(job.pid)
        self.log.close()
        self._start_zygote()

    def _read_messages(self, job: Job) -> None:
        if job.msg_r < 0:
            return
        while True:
            try:
                chunk = os.read(job.msg_r, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                self.sel.unregister(job.msg_r)
                os.close(job.msg_r)
                job.msg_r = -1
                break
            job.received += len(chunk)
            if job.received > MSG_BYTES_CAP:
                self._kill(job, "grading error: the submission flooded the grader with messages")
                return
            job.buf += chunk
            *lines, job.buf = job.buf.split(b"\n")
            for line in lines:
                try:
                    msg = json.loads(line)
                except ValueError:
                    job.forged = job.forged or "garbled messages from the runner"
                    continue
                if isinstance(msg, dict):
                    self._handle(job, msg)

    def _handle(self, job: Job, msg: dict) -> None:
        t = msg.get("t")
        now = time.monotonic()
        if t in ("test", "case", "done"):
            if not job.nonce or msg.get("nonce") != job.nonce:
                job.forged = job.forged or "forged test results"
                return
        if job.done:
            job.forged = job.forged or "messages after the end"
            return
        if t == "ready":
            job.ready_at = now
        elif t == "fatal" or t == "unreadable":
            job.fatal = str(msg.get("reason", "runner failed"))[:300]
            if msg.get("traceback"):
                print(f"course grade: {job.sub.file}: {msg['traceback']}", file=sys.stderr)
        elif t == "cell" and job.cells_done is None:
            job.cell = msg.get("i")
            job.phase_deadline = now + self.args.cell_timeout + GRACE
        elif t == "cells_done" and job.cells_done is None:
            job.cells_done = msg
            job.cell = None
            job.tamper += [str(x) for x in msg.get("tamper", [])][:20]
            job.nonce = secrets.token_hex(16)
            payload = {"nonce": job.nonce, "tests": self.tests_payload,
                       "case_timeout": self.args.cell_timeout}
            job.ctl_out = (json.dumps(payload) + "\n").encode()
            job.phase_deadline = now + self.args.cell_timeout + GRACE
            self.sel.register(job.ctl_w, selectors.EVENT_WRITE, ("ctl", job))
        elif t == "test":
            job.test = str(msg.get("q"))
            n = sum(len(q.cases) for q in self.asg.auto if q.name == job.test)
            job.phase_deadline = now + (self.args.cell_timeout + 1) * max(n, 1) + GRACE
        elif t == "case":
            key = (msg.get("q"), msg.get("i"))
            if not job.expected or tuple(job.expected[0]) != key:
                job.forged = job.forged or "unexpected test results"
                return
            job.expected.pop(0)
            job.cases[key] = (bool(msg.get("passed")), str(msg.get("message", ""))[:4000])
        elif t == "done":
            job.tamper += [str(x) for x in msg.get("tamper", [])][:20]
            job.done = True
            job.done_at = now
            job.phase_deadline = None

    def _write_ctl(self, job: Job) -> None:
        try:
            n = os.write(job.ctl_w, job.ctl_out)
            job.ctl_out = job.ctl_out[n:]
        except (BlockingIOError, BrokenPipeError):
            if job.ctl_out and job.exit_status is None:
                return
            job.ctl_out = b""
        if not job.ctl_out:
            self.sel.unregister(job.ctl_w)
            os.close(job.ctl_w)
            job.ctl_w = -1

    def _kill(self, job: Job, reason: str) -> None:
        if job.killed is None:
            job.killed = reason
            job.kill_time = time.monotonic() + GRACE
        if job.pid:
            sandbox.killpg(job.pid)
        self._sweep(job)

    def _sweep(self, job: Job) -> None:
        if job.uid >= 0:
            sandbox.kill_uid(job.uid)
        elif job.pid:
            sandbox.kill_tagged(self.zygote.pid, job.token)

    def _finished(self, job: Job) -> bool:
        if job.exit_status is not None:
            return True
        return job.killed is not None and job.kill_time is not None and time.monotonic() > job.kill_time

    # ------------------------------------------------------------ results
    def _finish(self, job: Job) -> Result:
        if job.pid:
            sandbox.killpg(job.pid)
        self._sweep(job)
        if job.msg_r >= 0:
            self._read_messages(job)
        self._cleanup(job)
        self.free_uids.append(job.uid)
        return self._result(job)

    def _result(self, job: Job) -> Result:
        status, zero = self._status(job)
        res = Result(file=job.sub.file, stem=job.sub.stem, status=status,
                     seconds=time.monotonic() - job.started,
                     exec_seconds=((job.done_at or time.monotonic()) - (job.ready_at or job.started)))
        cd = job.cells_done or {}
        res.cell_errors = list(cd.get("errors", []))[:200]
        res.tampering = sorted(set(job.tamper))
        res.tests_ran = job.done and not zero
        res.output = str(cd.get("output", ""))[:70000]
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

    def _status(self, job: Job) -> tuple[str, bool]:
        """The row's grading_status, and whether its points are forced to zero."""
        if job.fatal:
            return job.fatal, True
        if job.forged:
            return f"tampering detected: {job.forged}", True
        if job.tamper:
            seen = list(dict.fromkeys(job.tamper))
            more = f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""
            return f"tampering detected: {seen[0]}{more}", True
        if job.killed and not job.done:
            return job.killed, job.cells_done is None
        if not job.done:
            where = f" in cell {job.cell}" if job.cells_done is None and job.cell else \
                (f" during the tests of {job.test}" if job.test else "")
            st = job.exit_status or 0
            if os.WIFSIGNALED(st):
                sig = signal.Signals(os.WTERMSIG(st)).name
                hint = " (out of memory?)" if sig in ("SIGKILL", "SIGSEGV", "SIGBUS", "SIGABRT") else ""
                if sig == "SIGXCPU":
                    return f"timeout: CPU time limit{where}", True
                return f"process killed by {sig}{where}{hint}", job.cells_done is None
            code = os.waitstatus_to_exitcode(st) if st else 0
            return f"process exited{where} (exit code {code}: os._exit or a crash)", job.cells_done is None
        errors = (job.cells_done or {}).get("errors", [])
        for kind, text in (("timeout", "cell timeout: cell {cell} {error}"),
                           ("memory", "memory limit: cell {cell} ran out of memory"),
                           ("exit", "sys.exit() in cell {cell}")):
            hit = [e for e in errors if e.get("kind") == kind]
            if hit:
                return text.format(**hit[0]), False
        checks = set((job.cells_done or {}).get("checks", []))
        missing = [q for q in self.asg.checks if q not in checks]
        if missing:
            return f"cells deleted: no check cell for {', '.join(missing)}", False
        return "ok", False

    def _unrunnable(self, sub: inputs.Submission, problem: str) -> Result:
        job = Job(index=-1, sub=sub, staging=Path())
        job.fatal = problem
        job.started = time.monotonic()
        return self._result(job)

    def _cleanup(self, job: Job) -> None:
        for fd in (job.msg_r, job.ctl_w):
            if fd >= 0:
                try:
                    self.sel.unregister(fd)
                except (KeyError, ValueError):
                    pass
                os.close(fd)
        job.msg_r = job.ctl_w = -1
        if job.scratch is not None:
            shutil.rmtree(job.scratch, ignore_errors=True)
        if job.staging and job.staging.name:
            job.staging.unlink(missing_ok=True)

    # ------------------------------------------------------------ tear-down
    def close(self) -> None:
        try:
            self.sock.close()
            self.zygote.wait(timeout=10)
        except Exception:
            pass
        if self.zygote.poll() is None:
            self.zygote.kill()
        for path, mode in self.restore_modes.items():
            os.chmod(path, mode)
        if self.pool is not None:
            for uid in self.pool.uids:
                sandbox.kill_uid(uid)
            self.pool.release()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """``course grade``: returns 0 when the batch finished (whatever the scores), 2 on bad input."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        asg = assignment_mod.load(args.assignment)
        subs = inputs.collect(args.submissions)
    except (assignment_mod.AssignmentError, inputs.InputError) as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return 2
    if not subs:
        print("course grade: no notebooks found in " + " ".join(args.submissions), file=sys.stderr)
        return 2
    t0 = time.monotonic()
    grader = Grader(args, asg, subs)
    try:
        grader.setup()
        results = grader.run()
    finally:
        if hasattr(grader, "zygote"):
            grader.close()
    meta = {"workers": args.workers, "mode": grader.mode, "mode_note": sandbox.MODE_NOTES[grader.mode],
            "warnings": grader.warnings, "wall_seconds": time.monotonic() - t0}
    report.write_all(grader.out, asg, results, meta)
    ok = sum(1 for r in results if r.status == "ok")
    print(f"graded {len(results)} submissions of {asg.name} in {meta['wall_seconds']:.1f} s "
          f"({ok} ok, {len(results) - ok} not ok; sandbox: {grader.mode}) -> {grader.out / 'grades.csv'}")
    if grader.mode != "isolated":
        print("warning: " + sandbox.MODE_NOTES[grader.mode], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
