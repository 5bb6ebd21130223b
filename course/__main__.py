"""``python -m course VERB ...``: the instructor's ``course`` command (:mod:`instructor.cli`).

The one module of the student package that imports the instructor's tooling, so that
``python -m course`` keeps every verb in the private repository (where ``instructor/`` sits beside
``course/``). A release, the Gradescope zip and the nbgrader copies of ``course/`` leave it out.
"""
import sys

from instructor.cli import main

sys.exit(main())
