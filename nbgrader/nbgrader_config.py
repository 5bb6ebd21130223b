"""nbgrader settings of the course "Transformer from Scratch" (written by `course build`).

Run nbgrader from this folder (the course directory): source/NN_name/ holds each notebook and the
course package released with it. See docs/platforms.md, "JupyterHub and nbgrader".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, DeduplicateIds, GetGrades, IgnorePattern,
    LimitOutput, OverwriteKernelspec, SaveAutoGrades,
)
from nbgrader_plugins import (  # noqa: E402
    KeepSkippedOutputs, KeepStudentOutputs, OverwriteReleasedCells, QuestionCsvExport, RunNothing,
    SkipUngraded,
)

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "transformer-from-scratch"

# Answers: the student sees the prompt of each answer cell; the solution region leaves nothing behind.
c.ClearSolutions.code_stub = {"python": ""}
c.ClearSolutions.text_stub = "_Type your answer here, replacing this text._"

# Autograde runs none of the student's code (RunNothing): in nbgrader's kernel it would run
# unsandboxed, in your account, in this folder. The scores of record come from `course nbgrader
# NN_name` (the course's engine, each notebook sandboxed), which runs this autograde first, for
# nbgrader's records, and then writes the judge's points into the gradebook. Locked cells are
# compared with the text students got (hidden tests removed): only an edited one is reported.
# COURSE_NBGRADER_KERNEL=1 runs the tests in the student's kernel as stock nbgrader does (the
# cells marked -skipped, long training, are not run; at most 120 s per cell): only for
# comparing with nbgrader's own autograde, never for grades.
c.Execute.timeout = 120
IN_KERNEL = os.environ.get("COURSE_NBGRADER_KERNEL") == "1"
EXECUTE, OUTPUTS = (SkipUngraded, KeepSkippedOutputs) if IN_KERNEL else (RunNothing, KeepStudentOutputs)
c.Autograde.sanitize_preprocessors = [
    OUTPUTS, DeduplicateIds, OverwriteKernelspec, OverwriteReleasedCells, CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    EXECUTE, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]

# Feedback shows a hidden test only as its result and hint (autograde put its code back in the notebook).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]

# `nbgrader export`: nbgrader's columns, then the points of each question (q1, q2, ...).
c.ExportApp.plugin_class = QuestionCsvExport
