"""``python -m autograder SUBMISSION... --assignment NN_name --out DIR``: the grading engine, as
``course grade`` runs it without the LMS export (``--gradebook`` is the instructor's command's)."""
import sys

from .grade import main
from .refusal import run

sys.exit(run("python -m autograder", main, sys.argv[1:]))
