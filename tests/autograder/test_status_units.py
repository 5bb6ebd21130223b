"""A row's grading status as a type (autograder/status.py): every status text the engine gives, made
from the code that decides it (autograder.verdict, autograder.intake, autograder.scheduler,
autograder.inputs), reads back as its kind and gives exactly the same text again, so that
grades.csv, results/*.json, the reports and the LMS export keep their bytes while code decides by
kind."""
from __future__ import annotations

import signal
from pathlib import Path

import pytest

from autograder import inputs, intake, verdict
from autograder.assignment import Assignment
from autograder.job import Job
from autograder.status import GradingStatus, Status, kind_of

ASG = Assignment(name="00_toy", folder=Path("."), questions=[], checks=["q1", "q2"])


def job(**fields) -> Job:
    j = Job(index=0, sub=inputs.Submission("a.ipynb", None), staging=Path())
    for k, v in fields.items():
        setattr(j, k, v)
    return j


DONE = {"cells_done": {"errors": []}, "judge_done": {"requests": 1}, "checks": ["q1", "q2"]}
SIGNALLED = {sig: int(sig) for sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM, signal.SIGXCPU)}

# (the job's state, the status verdict.status gives it today, its kind)
VERDICTS = [
    ({**DONE}, "ok", Status.OK),
    ({"fatal": "wrong notebook: this is 03_attention, not 00_toy"},
     "wrong notebook: this is 03_attention, not 00_toy", Status.WRONG_NOTEBOOK),
    ({"malformed": "a message too long"},
     "tampering detected: malformed message from the notebook's process (a message too long)",
     Status.TAMPERING),
    ({"tamper": ["torch.allclose", "torch.allclose", "course.x"]},
     "tampering detected: torch.allclose (and 1 more)", Status.TAMPERING),
    ({"tamper": [""]}, "tampering detected: ", Status.TAMPERING),        # what a submission said: nothing
    ({**DONE, "tamper_after": ["x"]},
     "tampering detected: torch or the course changed while the tests ran", Status.TAMPERING),
    ({"killed": "timeout: the notebook ran over 600 s (in cell 3)"},
     "timeout: the notebook ran over 600 s (in cell 3)", Status.TIMEOUT),
    ({"killed": "grading interrupted"}, "grading interrupted", Status.GRADING_INTERRUPTED),
    ({"cell": 4, "oom": True},
     "memory limit: the notebook's processes used more than 4 GB together in cell 4", Status.MEMORY_LIMIT),
    ({"cell": 2, "exit_status": SIGNALLED[signal.SIGKILL]},
     "process killed by SIGKILL in cell 2 (out of memory?)", Status.PROCESS_KILLED),
    ({"exit_status": SIGNALLED[signal.SIGTERM]}, "process killed by SIGTERM", Status.PROCESS_KILLED),
    ({"exit_status": 40}, "process killed by signal 40", Status.PROCESS_KILLED),
    ({"cell": 7, "exit_status": SIGNALLED[signal.SIGXCPU]}, "timeout: CPU time limit in cell 7",
     Status.TIMEOUT),
    ({"cell": 2, "exit_status": 3 << 8},
     "process exited in cell 2 (exit code 3: os._exit or a crash)", Status.PROCESS_EXITED),
    ({"exit_status": 0}, "process exited (exit code 0: os._exit or a crash)", Status.PROCESS_EXITED),
    ({"cells_done": {"errors": []}},
     "grading error: the tests stopped early; grade this one again", Status.GRADING_ERROR),
    ({**DONE, "judge_done": {"gone": "stopped answering"}, "test": "q2", "exit_status": 0},
     "timeout: the notebook stopped answering during the tests of q2", Status.TIMEOUT),
    ({**DONE, "judge_done": {"gone": "exited"}, "exit_status": 9},
     "process ended during the tests (see results/ for how)", Status.PROCESS_ENDED),
    ({**DONE, "judge_done": {"gone": "exited"}, "test": "q1", "exit_status": 9, "oom": True},
     "memory limit: the notebook's processes used more than 4 GB together during the tests of q1",
     Status.MEMORY_LIMIT),
    ({**DONE, "cells_done": {"errors": [{"kind": "timeout", "cell": 5, "error": "ran over 120 s"}]}},
     "cell timeout: cell 5 ran over 120 s", Status.CELL_TIMEOUT),
    ({**DONE, "cells_done": {"errors": [{"kind": "memory", "cell": 6}]}},
     "memory limit: cell 6 ran out of memory", Status.MEMORY_LIMIT),
    ({**DONE, "cells_done": {"errors": [{"kind": "exit", "cell": 8}]}}, "sys.exit() in cell 8",
     Status.SYS_EXIT),
    ({**DONE, "checks": ["q1"]}, "cells deleted: no check cell for q2", Status.CELLS_DELETED),
    ({**DONE, "suspicious": ["q3: scaled_dot_product_attention", "q4: x"]},
     "suspicious code: q3: scaled_dot_product_attention (and 1 more); points as earned, read the notebook",
     Status.SUSPICIOUS),
]


@pytest.mark.parametrize("state, text, kind", VERDICTS, ids=[t[:40] for _s, t, _k in VERDICTS])
def test_every_verdict_reads_back_as_its_kind_and_the_same_text(state, text, kind):
    said, _zero = verdict.status(job(**state), ASG, 4.0)
    assert said.text == text and said.kind is kind
    assert GradingStatus.parse(text) == said and GradingStatus.parse(text).text == text


# what a submission's process reports it could not do (autograder.intake.fatal_status)
FATAL = [
    ("unreadable notebook: not valid JSON", "unreadable notebook: not valid JSON",
     Status.UNREADABLE_NOTEBOOK),
    ("sandbox setup failed", "sandbox setup failed", Status.SANDBOX_FAILED),
    ("sandbox setup failed: no /proc", "sandbox setup failed: no /proc", Status.SANDBOX_FAILED),
    ("grader error: \x1b[31mboom", "grader error: ?[31mboom", Status.GRADER_ERROR),
    ("see teacher\rX", "error reported by the notebook's process: see teacher?X", Status.NOTEBOOK_ERROR),
    ("", "error reported by the notebook's process: ", Status.NOTEBOOK_ERROR),
    ("ok", "error reported by the notebook's process: ok", Status.NOTEBOOK_ERROR),
]


@pytest.mark.parametrize("reason, text, kind", FATAL)
def test_what_a_process_reports_reads_back_as_its_kind(reason, text, kind):
    assert intake.fatal_status(reason) == text
    assert kind_of(text) is kind and GradingStatus.parse(text).text == text


# the statuses of rows that never ran, as autograder.inputs and autograder.scheduler write them
NEVER_RAN = [
    ("unreadable", Status.UNREADABLE),
    ("unreadable notebook: too large (12 MB)", Status.UNREADABLE_NOTEBOOK),
    ("unreadable file: a link", Status.UNREADABLE_FILE),
    ("unreadable zip: File is not a zip file", Status.UNREADABLE_ZIP),
    ("unreadable zip member: Bad CRC-32", Status.UNREADABLE_ZIP_MEMBER),
    ("rejected upload: a zip inside a zip inside a zip", Status.REJECTED_UPLOAD),
    ("rejected file: it unpacks to 900 MB from 90 KB (a zip bomb?)", Status.REJECTED_FILE),
    ("name clash: 2 submissions are named 'a.ipynb'; none of them was graded", Status.NAME_CLASH),
    (inputs.over_cap_status(12), Status.NOT_GRADED),
    ("grading error: KeyError; grade this one again", Status.GRADING_ERROR),
    ("grading error: the runner stopped; grade this one again", Status.GRADING_ERROR),
    ("grading error: the submission flooded the grader with messages", Status.GRADING_ERROR),
    ("grading error in the judge: boom", Status.JUDGE_ERROR),
    ("grading error in the judge: ", Status.JUDGE_ERROR),
    ("timeout: cell 3 ran over 120 s", Status.TIMEOUT),
    ("timeout: the tests of q2 ran too long", Status.TIMEOUT),
]


@pytest.mark.parametrize("text, kind", NEVER_RAN)
def test_every_other_status_reads_back_as_its_kind(text, kind):
    said = GradingStatus.parse(text)
    assert said.kind is kind and said.text == text and str(said) == text


@pytest.mark.parametrize("text", ["", "okay", "ok ", "Ok", "sandbox setup failed: ", "timeout",
                                  "wrong notebook", "suspicious codex", "'=HYPERLINK()",
                                  "no PDF: Chromium took over 0 s"])
def test_a_text_of_no_known_kind_is_other_and_kept_whole(text):
    said = GradingStatus.parse(text)
    assert said == GradingStatus(Status.OTHER, text) and said.text == text


def test_what_a_process_reports_after_its_cells_ran_is_a_row_to_grade_again():
    """Once the cells have run, a 'could not run' is the notebook's code talking (it may say it only
    after a failed test): never an unreadable upload, never exported, graded again by a person."""
    for reason in ("unreadable notebook: the upload was cut short", "sandbox setup failed: x",
                   "grader error: BrokenPipeError"):
        said = GradingStatus.parse(intake.fatal_status(reason, after_cells=True))
        assert said.kind is Status.GRADING_ERROR and said.kind.regrade and not said.kind.unreadable


def test_what_the_kinds_mean_for_the_exports():
    assert [k for k in Status if k.flagged] == [Status.SUSPICIOUS]
    assert {k for k in Status if k.never_ran} == {Status.WRONG_NOTEBOOK, Status.UNREADABLE_NOTEBOOK}
    assert {k for k in Status if k.regrade} == {Status.GRADING_ERROR, Status.JUDGE_ERROR, Status.NAME_CLASH}
    assert not Status.UNREADABLE.unreadable           # as the statuses' prefixes have always said
    assert {k for k in Status if k.keepable} >= {Status.OK, Status.SUSPICIOUS, Status.WRONG_NOTEBOOK}
    assert not Status.TIMEOUT.keepable and not Status.GRADING_ERROR.keepable
    # each status shows its kind's words first
    for text, kind in NEVER_RAN:
        assert text.startswith(kind.value)
