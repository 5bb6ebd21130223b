"""The course's batch grading engine (``course grade``) and its autograder material: the tests of each
notebook, their mutants and degenerate answers (``assignments/NN_name/``).

Modules, one job each:

- ``api``: the engine's API, :func:`api.grade` a batch and :func:`api.merge` shards, from a
  ``config`` (:class:`config.GradeConfig`: every option, frozen; :class:`config.GradingError`);
- ``grade``: the engine's command line (``python -m autograder``: argv to a GradeConfig; ``course
  grade`` is :mod:`instructor.grade` around it);
- ``batch``: one batch's machinery (workspace, survey, scheduler), opened and closed together;
- ``workspace``: the batch's folders, sandbox mode, uids, what student code sees, cgroups;
- ``survey``: every notebook read before any runs (``notebook_info`` in ``inspector``'s process);
- ``scheduler``: the fork server (``forkserver``), the worker slots and the one event loop;
- ``intake``: what a running submission and its judge send (``messages``: checked field by field);
- ``verdict``: a submission's row (status, points, messages) once its processes are gone;
- ``job``: one submission while it runs;
- ``runner``: the fork server and the process that executes one notebook (``notebook``: its cells);
- ``judge``: the process that runs the tests on the grader's side (through ``course.handles``);
- ``inputs``: collect submissions from notebooks, folders and zips (every entry a row or a named skip);
- ``refusal``: a full disk, a read-only folder, no permission: one sentence and exit 1, no traceback;
- ``assignment``: read an assignment's ``assignment.json`` and Otter test files;
- ``sandbox``: the isolation of student code (user, namespaces, a new root, limits, clean-up);
- ``cgroups``: one cgroup per submission for its whole process tree (memory, processes, CPU share);
- ``snapshot``: what student code must not change, checked before and after the tests;
- ``results``, ``report``, ``handgrading``: a row's types; ``grades.csv``, ``results/``,
  ``feedback/`` and ``report.html``; the hand-grading pages and the CSV to fill in;
- ``csvcells``: CSV cells no spreadsheet runs;
- ``gradescope``: the Gradescope zip's entry point (this engine in Gradescope's container, writing
  its results.json), and the zip run here as Gradescope runs it (``mutants``, ``degenerate``: the
  suites that keep the tests honest).

Nothing here imports the instructor's tooling (``instructor/``); ``course`` is the student package.
"""
