"""One batch on this machine: its place (:mod:`autograder.workspace`), what was read in its notebooks
before they run (:mod:`autograder.survey`), and the processes that run them
(:mod:`autograder.scheduler`, which reads their messages with :mod:`autograder.intake` and assembles
each row with :mod:`autograder.verdict`). :func:`autograder.api.grade` drives it.
"""
from __future__ import annotations

import resource
from collections.abc import Sequence
from pathlib import Path

from . import inputs
from .assignment import Assignment
from .config import GradeConfig
from .results import Result
from .scheduler import Scheduler
from .survey import Survey
from .workspace import Workspace


class Grader:
    """The machinery of one grading; :meth:`close` undoes all of it (processes, uids, cgroups,
    folder modes, the private folder). ``early``: what was found to warn about before it was made
    (:attr:`warnings` lists it first)."""

    def __init__(self, config: GradeConfig, asg: Assignment, out: Path, early: Sequence[str] = ()) -> None:
        self.config = config
        self.asg = asg
        self.early = list(early)
        self.ws = Workspace(config, asg, out)
        self.survey: Survey | None = None
        self.scheduler: Scheduler | None = None

    @property
    def warnings(self) -> list[str]:
        """The batch's warnings (the report shows them), in the order they arose: before the batch,
        preparing its place, reading the notebooks, running them."""
        return (self.early + self.ws.warnings + (self.survey.warnings if self.survey else [])
                + (self.scheduler.warnings if self.scheduler else []))

    def make_root(self) -> Path:
        """The batch's private folder; returns its staging folder (where the submissions go)."""
        self.ws.make_root()
        return self.ws.staging

    def start(self, subs: list[inputs.Submission], prepared: bool = False,
              only: dict[str, list[str]] | None = None) -> None:
        """Ready to grade ``subs``: the notebooks read, the fork server started (``prepared``: the
        workspace is ready already; ``only``: row -> the questions whose tests run)."""
        self.subs = subs
        if not prepared:
            self.ws.prepare(subs)
        ws = self.ws
        self.survey = Survey(self.asg, subs, ws.root, ws.staging, ws.out)
        self.scheduler = Scheduler(self.config, self.asg, ws, self.survey, only)
        self.survey.start()                 # reads the notebooks while the fork server starts
        self.scheduler.start()
        self.survey.collect()

    def run(self) -> list[Result]:
        assert self.scheduler is not None, "start() first"
        return self.scheduler.run(self.subs)

    def close(self) -> None:
        if self.survey is not None:
            self.survey.kill()
        if self.scheduler is not None:
            self.scheduler.close()
        self.ws.close()


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


