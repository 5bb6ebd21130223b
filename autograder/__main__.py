"""``python -m autograder SUBMISSION... --assignment NN_name --out DIR`` (same as ``course grade``)."""
import sys

from .grade import main

sys.exit(main(sys.argv[1:]))
