"""Running a batch: one fork server (:mod:`autograder.forkserver`), one worker slot (a uid) per
submission at a time, and a single event loop over every running submission's pipes and deadlines
(per cell, per test, per submission). When a submission's cells have run, its judge starts; when its
processes are gone (or overdue), everything it started is killed, its cgroup removed, its uid's key
rings cleared, its scratch folder deleted, and its row assembled (:mod:`autograder.verdict`).
What the pipes carry is read by :mod:`autograder.intake`.
"""
from __future__ import annotations

import os
import secrets
import selectors
import shutil
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

from . import inputs, notebook, sandbox, verdict
from .assignment import Assignment
from .config import GradeConfig
from .forkserver import ForkServer
from .intake import Intake
from .job import GRACE, Job
from .results import Result
from .status import GradingStatus, Status
from .survey import Survey
from .workspace import REPO, Workspace


class Scheduler:
    """The batch's processes. Also the :class:`autograder.intake.Events` its readers call."""

    def __init__(self, config: GradeConfig, asg: Assignment, ws: Workspace, survey: Survey,
                 only: dict[str, list[str]] | None = None) -> None:
        self.config = config
        self.asg = asg
        self.ws = ws
        self.survey = survey
        self.warnings: list[str] = []      # what running the submissions found to warn about
        self.sel = selectors.DefaultSelector()
        self.jobs_by_id: dict[str, Job] = {}
        self.running: dict[str, Job] = {}
        self.results: list[Result] = []
        self.tests_payload = asg.tests_payload()
        self.only = only or {}      # row -> the questions whose tests run (autograder.cache); else all
        self.free_uids = ws.uids()
        assert config.cell_timeout is not None      # Config.__post_init__ sets it
        self.intake = Intake(asg, ws.out, config.cell_timeout, self)
        self.server = ForkServer(ws.root, ws.zygote_env(), ws.staging / "runner.log")

    def start(self) -> None:
        """Start the fork servers (minutes at most: torch is imported once for every child) and
        hand the judges' server the tests."""
        self.server.start({"tests": self.tests_payload, "given_code": self.asg.given_code,
                           "case_timeout": self.config.cell_timeout})
        self.sel.register(self.server.sock, selectors.EVENT_READ, ("zygote", None))
        self.sel.register(self.server.judge_sock, selectors.EVENT_READ, ("zygote", None))

    # ------------------------------------------------------------ the loop
    def run(self, subs: list[inputs.Submission]) -> list[Result]:
        self.t0 = time.monotonic()
        pending: deque[Job] = deque()
        for i, sub in enumerate(subs):
            if sub.path is None:
                self.results.append(verdict.unrunnable(sub, sub.problem or Status.UNREADABLE.value, self.asg,
                                                       self.config.memory))
                continue
            if i in self.survey.wrong:          # another week's notebook: its tests are not run
                job = Job(index=i, sub=sub, staging=Path(), info=self.survey.info.get(i, {}))
                job.fatal = GradingStatus(Status.WRONG_NOTEBOOK,
                                          f"this is {self.survey.wrong[i]}, not {self.asg.name}").text
                job.started = time.monotonic()
                self.results.append(self._result(job))
                sub.path.unlink(missing_ok=True)
                continue
            # staged as NNNNN.ipynb by inputs.collect; its file name goes beside it, for the child
            # alone to read (the fork server never sees a student's name)
            Path(str(sub.path) + ".name").write_text(sub.notebook_name, encoding="utf-8")
            pending.append(Job(index=i, sub=sub, staging=sub.path, info=self.survey.info.get(i, {}),
                               figure_cells=self.survey.figure_cells(i)))
        bar = self._progress(len(subs))
        bar.update(len(self.results))
        running = self.running
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
                        job.fatal = GradingStatus(Status.GRADING_ERROR,
                                                  f"{type(exc).__name__}; grade this one again").text
                        self.results.append(self._result(job))
                    bar.update(1)
        finally:
            bar.close()
            for job in running.values():
                self.kill(job, Status.GRADING_INTERRUPTED.value)
                self._cleanup(job)
        return self.results

    def _progress(self, total: int) -> Any:
        from tqdm import tqdm
        tqdm.monitor_interval = 0  # no monitor thread: the grader forks to clean up
        return tqdm(total=total, unit="nb", desc="grading", file=sys.stderr,
                    disable=not self.config.progress or None, dynamic_ncols=True)

    def _start(self, job: Job, uid: int) -> None:
        job.started = time.monotonic()          # its sandbox's start counts: the cgroup, the fork
        job.uid = uid
        job.token = secrets.token_hex(8)
        real_uid = uid if uid >= 0 else None
        name = f"s{job.index:05d}-{job.token[:6]}"
        if self.ws.mode == "isolated":   # a tmpfs in the submission's own mount namespace, nowhere else
            scratch = sandbox.SCRATCH
            tmpdir = "/tmp"
        else:
            job.scratch = sandbox.make_scratch(self.ws.root, name, real_uid)
            scratch = str(job.scratch)
            tmpdir = f"{scratch}/tmp"
        limits = sandbox.Limits(memory_bytes=int(self.config.memory * 2**30),
                                cpu_seconds=int(self.config.timeout) + 30)
        if self.ws.cg is not None:
            try:
                job.group = self.ws.cg.create(name, memory_bytes=limits.memory_bytes,
                                              max_tasks=limits.max_tasks)
            except OSError as exc:
                self.warnings.append(f"no cgroup for {job.sub.file}: {exc}")
        msg_r, msg_w = os.pipe()
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        os.set_blocking(msg_r, False)
        job.msg_r = msg_r
        spec = sandbox.SandboxSpec(mode=self.ws.mode, uid=uid, scratch=scratch, limits=vars(limits),
                                   view=self.ws.view, newroot=str(self.ws.newroot),
                                   cgroup=job.group.procs_files if job.group else [])
        job_msg = {  # names no submission: the staging file is numbered, the name beside it
            "kind": "submission", "id": job.token, "staging": str(job.staging),
            "sandbox": vars(spec), "repo": str(REPO), "cell_timeout": self.config.cell_timeout,
            "package": str(self.ws.package),        # the student package as this week ships it
            "figure_cells": job.figure_cells, "setup": notebook.setup_cell(self.asg.given_code),
            "env": {"HOME": scratch, "TMPDIR": tmpdir, "USER": "course-grader",
                    "LOGNAME": "course-grader", "MPLCONFIGDIR": f"{scratch}/.matplotlib",
                    "COURSE_GRADE_JOB": job.token},
        }
        job.deadline = job.started + self.config.timeout
        if self.server.proc.poll() is not None:     # it died since the last poll: a new one first
            self._restart_zygote()
        self._send(job_msg, [msg_w, req_r, ans_w])
        for fd in (msg_w, req_r, ans_w):
            os.close(fd)
        self.jobs_by_id[job.token] = job
        self.sel.register(msg_r, selectors.EVENT_READ, ("msg", job))
        self._start_judge(job, req_w, ans_r)

    def _send(self, msg: dict, fds: list[int], judge: bool = False) -> None:
        """A job to the fork server; one that died between the last poll and now (its socket
        refuses) is replaced first and takes the job."""
        try:
            self.server.send(msg, fds, judge=judge)
        except OSError:
            self._restart_zygote()
            self.server.send(msg, fds, judge=judge)

    def _start_judge(self, job: Job, req_w: int, ans_r: int) -> None:
        """The submission's judge, started beside it: it reads the notebook and the rules while the
        cells run, and runs the tests on our side when :meth:`start_judge` tells it to."""
        jmsg_r, jmsg_w = os.pipe()
        go_r, go_w = os.pipe()
        os.set_blocking(jmsg_r, False)
        job.jmsg_r, job.go_w = jmsg_r, go_w
        # the judge joins the submission's cgroup: the CPU and memory the submission makes it spend
        # (a test calling back and forth) count against that submission, not against its neighbours
        only = self.only.get(job.sub.file)
        judge_msg = {"kind": "judge", "id": "j" + job.token, "staging": str(job.staging),
                     "memory_bytes": int(max(self.config.memory, 2.0) * 2**30),
                     "cgroup": job.group.procs_files if job.group is not None else [],
                     "only": None if only is None else list(only)}
        self._send(judge_msg, [jmsg_w, go_r, req_w, ans_r], judge=True)
        for fd in (jmsg_w, go_r, req_w, ans_r):
            os.close(fd)
        self.jobs_by_id["j" + job.token] = job
        self.sel.register(jmsg_r, selectors.EVENT_READ, ("judge", job))

    def start_judge(self, job: Job) -> None:
        """The submission's cells have run: its judge runs the tests."""
        if job.go_w >= 0:
            try:
                os.write(job.go_w, b"g")
            except BrokenPipeError:           # the judge is gone already: its exit says why
                pass
            os.close(job.go_w)
            job.go_w = -1

    def forget(self, fd: int) -> None:
        self.sel.unregister(fd)

    def _poll(self, running: dict[str, Job]) -> None:
        now = time.monotonic()
        deadlines = [d for j in running.values() for d in (j.deadline, j.phase_deadline, j.kill_time)
                     if d is not None]
        timeout = max(0.0, min([0.5] + [d - now for d in deadlines]))
        for key, _mask in self.sel.select(timeout):
            kind, job = key.data
            if kind == "zygote":
                self._zygote_messages(key.fileobj)
            elif kind == "msg":
                self.intake.read_messages(job)
            elif kind == "judge":
                self.intake.read_judge(job)
        now = time.monotonic()
        for job in running.values():
            if job.killed or self._finished(job):
                continue
            if now > job.deadline:
                where = f" (in cell {job.cell})" if job.cell and not job.cells_done else ""
                self.kill(job, GradingStatus(Status.TIMEOUT,
                                             f"the notebook ran over {self.config.timeout:g} s{where}").text)
            elif job.phase_deadline is not None and now > job.phase_deadline:
                if job.cells_done is None:
                    self.kill(job, GradingStatus(
                        Status.TIMEOUT, f"cell {job.cell} ran over {self.config.cell_timeout:g} s").text)
                else:
                    self.kill(job, GradingStatus(Status.TIMEOUT,
                                                 f"the tests of {job.test} ran too long").text)

    def _zygote_messages(self, sock: Any) -> None:
        got, gone = self.server.receive(sock)
        for msg in got:
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
                    self.intake.read_judge(job)
                else:
                    job.exit_status = msg["status"]
                    self.intake.read_messages(job)
        if gone:
            self._restart_zygote()

    def _restart_zygote(self) -> None:
        """The fork server died (it never runs student code, but the machine may kill it): the
        submissions it was running get a clear status, and a new one takes over the rest."""
        for sock in (self.server.sock, self.server.judge_sock):
            self.sel.unregister(sock)
        self.server.stop()
        for job in self.running.values():
            if not self._finished(job):
                job.fatal = job.fatal or GradingStatus(Status.GRADING_ERROR,
                                                       "the runner stopped; grade this one again").text
                job.exit_status = -1 if job.exit_status is None else job.exit_status
                job.judge_exit = -1 if job.judge_exit is None else job.judge_exit
                for pid in (job.pid, job.judge_pid):
                    if pid:
                        sandbox.killpg(pid)
                if job.group is not None:
                    job.group.kill()
        self.start()

    # ------------------------------------------------------------ ending a submission
    def kill(self, job: Job, reason: str) -> None:
        if job.killed is None:
            job.killed = reason
            job.kill_time = time.monotonic() + GRACE
        for pid in (job.pid, job.judge_pid):
            if pid:
                sandbox.killpg(pid)
        self._sweep(job)

    def _sweep(self, job: Job) -> None:
        """Kill every process of the submission: its cgroup at once where there is one (nothing can
        leave it), else every process of its uid (one this batch holds on the whole host, so each
        of them is this submission's), else (weak mode) its tagged processes."""
        if job.group is not None:
            job.group.kill()
        elif job.uid >= 0:
            sandbox.kill_uid(job.uid)
        elif job.pid:
            sandbox.kill_tagged(self.server.pid, job.token)

    def _finished(self, job: Job) -> bool:
        """The submission's process has exited and, if it was started, so has its judge."""
        judge_over = job.jmsg_r < 0 and (job.judge_pid is None or job.judge_exit is not None) \
            if job.cells_done is not None else True
        if job.exit_status is not None and judge_over:
            return True
        return job.killed is not None and job.kill_time is not None and time.monotonic() > job.kill_time

    def _finish(self, job: Job) -> Result:
        for pid in (job.pid, job.judge_pid):
            if pid:
                sandbox.killpg(pid)
        self._sweep(job)
        if job.msg_r >= 0:
            self.intake.read_messages(job)
        if job.jmsg_r >= 0:
            self.intake.read_judge(job)
        self._cleanup(job)
        # the uid's holder may have been ended by student code (user mode): the slot's next uid is
        # one this batch holds on the whole host again
        pool = self.ws.pool
        self.free_uids.append(pool.ensure(job.uid) if pool is not None else job.uid)
        return self._result(job)

    def _result(self, job: Job) -> Result:
        return verdict.result(job, self.asg, self.config.memory)

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
            if self.ws.mode == "user":
                sandbox.sweep_uid_files(job.uid)

    def _cleanup(self, job: Job) -> None:
        self._release(job)
        for fd in (job.msg_r, job.jmsg_r, job.go_w):
            if fd >= 0:
                try:
                    self.sel.unregister(fd)
                except (KeyError, ValueError):
                    pass
                os.close(fd)
        job.msg_r = job.jmsg_r = job.go_w = -1
        self.jobs_by_id.pop(job.token, None)
        self.jobs_by_id.pop("j" + job.token, None)
        if job.scratch is not None:
            shutil.rmtree(job.scratch, ignore_errors=True)
        if job.staging and job.staging.name:
            job.staging.unlink(missing_ok=True)
            Path(str(job.staging) + ".name").unlink(missing_ok=True)

    def close(self) -> None:
        self.server.close()
