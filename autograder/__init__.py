"""The course's batch grading engine (``course grade``) and its autograder material.

Modules, one job each:

- ``inputs``: collect submissions from notebooks, folders and zips;
- ``assignment``: read an assignment's ``assignment.json`` and Otter test files;
- ``sandbox``: the isolation of student code (user, namespaces, a new root, limits, clean-up);
- ``cgroups``: one cgroup per submission for its whole process tree (memory, processes, CPU share);
- ``runner``: the process that executes one notebook and then runs the tests in it;
- ``grade``: batch orchestration and the command line;
- ``report``: ``grades.csv``, ``results/``, ``feedback/`` and ``report.html``.
"""
