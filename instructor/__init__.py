"""The instructor's tooling: everything that makes, publishes and grades the course, never shipped
to students.

- ``cli``: the ``course`` command (also ``python -m course``), one verb per job;
- ``build``: master notebooks -> student notebooks, public and hidden tests, the Otter autograder
  zip for Gradescope (``masters``: what is read from the masters; ``gradescope_zip``: the zip made
  to grade with the course's engine); ``nbgrader`` (a package): the same course as an nbgrader
  course directory, its plugins, and ``course nbgrader``;
- ``release``, ``publish``: the public repository's tree (the student package only) and
  course.toml; ``giveaway``: the answers what a release ships gives away;
- ``grade``: ``course grade`` and ``course merge`` around the grading engine
  (:mod:`autograder.api`), with the LMS export after grading;
- ``manual``, ``lms``, ``gradescope_pdf``: hand-graded points merged back (``course manual``), the
  Canvas/Moodle gradebook import and export, the hand-graded answers as PDFs (``course pdfs``);
- ``solutions``, ``demo``: run the solution notebooks; the whole pipeline once.

Imports run one way: ``instructor`` -> ``autograder`` -> ``course``.
"""
