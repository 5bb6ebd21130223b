"""The instructor's tooling: everything that makes and publishes the course, never shipped to
students.

- ``cli``: the ``course`` command (also ``python -m course``), one verb per job;
- ``build``: master notebooks -> student notebooks, public and hidden tests, the Otter autograder
  zip for Gradescope; ``nbgrader_course`` (+ ``nbgrader_plugins``): the same course as an nbgrader
  course directory;
- ``release``, ``publish``: the public repository's tree and course.toml;
- ``solutions``, ``demo``: run the solution notebooks; the whole pipeline once.

Imports run one way: ``instructor`` -> ``autograder`` -> ``course``.
"""
