"""nbgrader's own commands, run in a course directory (``course nbgrader``, the tests, the benchmark)."""
from __future__ import annotations

import sys
from pathlib import Path


def nbgrader_env(root: Path, extra: dict | None = None) -> dict:
    """The environment nbgrader's commands run in: this Python's bin on PATH (nbgrader runs the
    `alembic` command when it makes a gradebook), and the stories read from the local copy when
    there is one (kernels inherit it)."""
    import os

    from course.data import CACHE_NAME, cache_dir

    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    stories = cache_dir() / CACHE_NAME
    if stories.exists() and "COURSE_STORIES_FILE" not in env:
        env["COURSE_STORIES_FILE"] = str(stories)
    env.setdefault("COURSE_DATA_CACHE", str(root / ".cache"))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra or {})
    return env


def nbgrader(root: Path, *args: str, timeout: float = 1800, env: dict | None = None):
    """Run one nbgrader command in the course directory `root`; the CompletedProcess."""
    import subprocess

    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=env or nbgrader_env(root),
                          capture_output=True, text=True, timeout=timeout)
