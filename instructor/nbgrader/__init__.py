"""nbgrader: the course on a JupyterHub with nbgrader, and its grades from the course's engine.

- ``export``: ``nbgrader/``, the course as an nbgrader course directory (``course build`` writes it;
  ``source``: a master as an nbgrader source notebook, its cells, grade ids and points);
- ``plugins``: what the course directory's ``nbgrader_config.py`` plugs into nbgrader (autograde that
  runs no student code, per-question export, ...); the build copies it into the course directory;
- ``grade``: ``course nbgrader NN_name``: nbgrader's autograde for its records, then the engine's
  verdicts (:func:`autograder.api.grade`) written into nbgrader's gradebook;
- ``commands``: nbgrader's own commands, run in a course directory.

The student side is ``course.nbgrader_check`` (the tests' cells call it in the student's kernel): it
ships with the student package, so it stays in ``course/``.
"""
