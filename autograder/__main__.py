"""``python -m autograder SUBMISSION... --assignment NN_name --out DIR``: the grading engine, as
``course grade`` runs it without the LMS export (``--gradebook`` is the instructor's command's)."""
import sys

from .grade import main

sys.exit(main(sys.argv[1:]))
