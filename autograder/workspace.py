"""Where a batch runs and what its submissions may see: the batch's private folder, the output folder
made ready, the sandbox mode this machine allows (:mod:`autograder.sandbox`), the uids the
submissions run as, what is hidden from them (user mode) or shown to them (isolated mode), the
batch's cgroup (:mod:`autograder.cgroups`), and the environment of the fork server. All undone by
:meth:`Workspace.close`.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from . import assignment as assignment_mod
from . import cgroups, handgrading, inputs, lockdown, outdir, report, sandbox, shipped
from .config import GradeConfig
from .status import Status, kind_of

REPO = Path(__file__).resolve().parent.parent


def clear_outputs(out: Path) -> list[str]:
    """Before grading (or a merge of shards) writes ``out``: nothing of an earlier run stays beside
    this one, but hand-entered grades are never deleted (a filled-in manual.csv is set aside;
    hand_grades.json, shards/ and cache/ are not outputs). Returns the warning that says so."""
    for sub in report.OUTPUT_DIRS:
        shutil.rmtree(out / sub, ignore_errors=True)
    for name in report.OUTPUT_FILES:
        (out / name).unlink(missing_ok=True)
    kept = handgrading.set_aside_filled(out)
    out.mkdir(parents=True, exist_ok=True)
    return [f"the filled-in manual.csv of an earlier run was kept as {kept.name}"] if kept else []


# A grading is written into a staging folder inside OUT and made OUT's by one rename of a pointer
# (autograder.outdir): these are its names here for the callers and tests that use them.
MADE_OUT = outdir.MADE_OUT
STAGING_PREFIX = outdir.STAGING_PREFIX
begin_outputs = outdir.begin
swap_outputs = outdir.publish
discard_outputs = outdir.discard


def set_aside(out: Path, dry_run: bool = False) -> list[str]:
    """Just before the new outputs replace the old: a filled-in manual.csv of the earlier run is
    kept as manual-N.csv (never deleted); returns the warning that says so. ``dry_run``: said, not
    yet done (before the outputs are written: a run that cannot write them leaves ``out`` as it
    was)."""
    kept = handgrading.set_aside_filled(out, dry_run)
    return [f"the filled-in manual.csv of an earlier run was kept as {kept.name}"] if kept else []


ROOT_LOCK = ".batch.lock"


def remove_stale_roots(base: Path, keep: Path) -> list[Path]:
    """Remove the private folders in ``base`` that batches killed before their clean-up left (the
    grader's own, with a lock that no batch holds); a folder without the lock is left alone. Returns
    what it removed."""
    removed = []
    for d in sorted(base.glob("course-grade-*")):
        try:
            st = os.lstat(d)
        except OSError:
            continue
        if d == keep or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        with sandbox.left_behind(d / ROOT_LOCK) as gone:
            if gone:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
    return removed


class Workspace:
    """One batch's place on this machine. ``out``: the folder this batch writes (a shard's own, or
    ``config.out``); ``warnings``: what preparing it found to warn about (the report shows it)."""

    def __init__(self, config: GradeConfig, asg: assignment_mod.Assignment, out: Path) -> None:
        self.config = config
        self.asg = asg
        self.out = out.resolve()
        self.warnings: list[str] = []
        self.lockdown: lockdown.Lockdown | None = None
        self.cg: cgroups.Batch | None = None
        self.cg_note = ""
        self.pool: sandbox.UidPool | None = None

    def make_root(self) -> None:
        """The batch's private folder (before the submissions are collected into its staging)."""
        base = self.config.scratch or Path("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="course-grade-", dir=base))
        os.chmod(self.root, 0o711)
        # held while the batch lives: a batch that was killed leaves its folder (copies of the
        # submissions among it) with this lock free, and the next batch removes it
        self._root_lock = os.open(self.root / ROOT_LOCK, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
        fcntl.flock(self._root_lock, fcntl.LOCK_EX)
        remove_stale_roots(base, keep=self.root)
        self.staging = sandbox.make_private_dir(self.root / "staging")
        self.newroot = self.root / "newroot"     # where a submission builds its new root (isolated)
        self.newroot.mkdir(mode=0o755)

    def prepare(self, subs: list[inputs.Submission]) -> None:
        """The sandbox mode, the output folder, the uids, what is hidden or shown, the cgroups."""
        config = self.config
        requested = None if config.sandbox == "auto" else config.sandbox
        self.mode = sandbox.detect_mode(requested, str(self.newroot))
        self.warnings += clear_outputs(self.out)
        if self.mode != "weak":
            sandbox.kill_orphans()              # a killed batch's leftovers, whose uids no batch holds
            self.pool = sandbox.UidPool(config.workers)
        self.hide = self._secret_paths()
        # the student package as this week's release ships it: what the submission's process imports
        self.package = shipped.write_package(self.asg.name, self.root / "package", REPO / "course")
        self.unshipped = sorted(set(map(str, shipped.package_files(None, REPO / "course")))
                                - set(map(str, shipped.package_files(self.asg.name, REPO / "course"))))
        self.view: list[str] = []
        if self.mode == "isolated":
            self.view = self._view_paths()
        elif self.mode == "user":
            blocked = sandbox.reach_plan(self._needed_paths())
            if blocked:
                self.warnings.append("Python or the course lives in a folder closed to other users "
                                     f"({blocked[0]}) and mount namespaces are not allowed here: "
                                     "falling back to the weak mode.")
                self.mode = "weak"
                assert self.pool is not None        # made above for every mode but weak
                self.pool.release()
                self.pool = None
        if self.mode == "user":
            closed = [p for p in self.hide if os.path.isdir(p)]
            closed += self.unshipped            # the course's answers of later weeks
            # shared with any other batch on this machine: the last one to finish reopens them
            self.lockdown = lockdown.Lockdown(closed)
            self.lockdown.close_folders()
            self._warn_readable_inputs()
        elif self.mode == "weak":
            self.warnings.append(sandbox.MODE_NOTES["weak"])
        # not as root: no reason said (the report has always read "No cgroups (): ..." there). Its
        # name is unique on the host and its lock, in the grader's lock folder, proves it this live
        # batch's to every other (a pid cannot, across PID namespaces)
        self.cg, why = cgroups.Batch.opened(cgroups.batch_name(), workers=config.workers,
                                            locks=sandbox.private_dir()) \
            if os.geteuid() == 0 else (None, "")
        self.cg_note = self.cg.note if self.cg else (
            "No cgroups (" + why.removeprefix("no cgroups: ") + "): memory, process and CPU "
            "limits applied to each process on its own, not to a submission's processes together.")
        if self.cg is None:
            self.warnings.append(self.cg_note)
        for s in subs:
            if s.problem and kind_of(s.problem) is Status.NAME_CLASH:
                self.warnings.append(f"name clash: the row {s.file!r} came from {s.source}")

    def uids(self) -> list[int]:
        """The uids the submissions run as, one per worker slot (negative: none, in the weak mode)."""
        if self.pool is not None:
            return list(reversed(self.pool.uids))
        return [-1 - i for i in range(self.config.workers)]

    # ------------------------------------------------------------ what student code sees
    def _secret_candidates(self) -> list[Path]:
        """What student code must not see (the assignment, the output, the submissions, ...)."""
        candidates = [self.asg.folder, self.out, self.staging,
                      self.config.out,                  # a shard's: the merge's folder
                      REPO / ".git", REPO / "solutions", REPO / "dev", REPO / "runs",
                      REPO / "nbgrader"]          # its source notebooks hold answers and hidden tests
        candidates += [p for p in assignment_mod.PACKAGE_DIR.iterdir()
                       if p.is_dir() and p.name != "__pycache__"]
        candidates += list(self.config.submissions)
        return [c.resolve() for c in candidates if c.exists()]

    def _secret_paths(self) -> list[str]:
        """User mode: what to make unreadable; never a folder that holds the grader, Python or the data."""
        keep = [REPO, Path(sys.prefix).resolve(), self.root]
        stories = self.stories_file()
        if stories:
            keep.append(Path(stories).resolve())
        hide: list[str] = []
        for c in self._secret_candidates():
            if str(c) in hide:
                continue
            if any(c == k or c in k.parents for k in keep):
                if self.mode == "user":
                    self.warnings.append(f"not hidden from student code (it holds the grader itself): {c}")
                continue
            hide.append(str(c))
        return sorted(hide, key=lambda s: (s.count("/"), s))

    def _view_paths(self) -> list[str]:
        """Isolated mode: what the new root shows besides the system folders, read-only: Python and
        its packages, the student package as this week's release ships it (:mod:`autograder.shipped`)
        and the stories text. Not the repository itself (it holds the tests and the solutions, and
        its course/ the answers of later weeks), not the rest of the data cache (trained weights of
        the solutions), nor any folder that holds something secret."""
        paths = {Path(p) for p in sys.path if p and os.path.exists(p)}
        paths |= {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
                  Path(sys.executable).resolve().parent, self.package}
        # the stories text only: the data cache also holds the solutions' trained weights
        stories = self.stories_file()
        if stories:
            paths.add(Path(stories))
        secrets_ = self._secret_candidates() + [REPO]
        view = []
        for p in sorted({Path(os.path.abspath(p)) for p in paths}):   # as named: sandbox binds the real
            real = p.resolve()                                         # path and links this name to it
            if real == Path("/") or any(s == real or real in s.parents for s in secrets_):
                if real != REPO:
                    self.warnings.append(f"not shown to student code (it holds grading material): {p}")
                continue
            view.append(str(p))
        return view

    def _needed_paths(self) -> list[Path]:
        paths = [Path(p) for p in sys.path if p and os.path.exists(p)]
        paths += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve(), REPO, self.root]
        stories = self.stories_file()
        if stories:
            paths.append(Path(stories))
        return paths

    def _warn_readable_inputs(self) -> None:
        for a in self.config.submissions:
            p = a.resolve()
            if os.stat(p).st_mode & 0o004:
                self.warnings.append(f"{p} is readable by every user: student code may read it "
                                     "(chmod o-rwx it, or grade where mount namespaces are allowed)")

    @staticmethod
    def stories_file() -> str | None:
        env = os.environ.get("COURSE_STORIES_FILE")
        if env and os.path.isfile(env):
            return os.path.abspath(env)
        cache = Path(os.environ.get("COURSE_DATA_CACHE") or REPO / "data_cache") / "tinystories-4MB.txt"
        return str(cache) if cache.is_file() else None

    def zygote_env(self) -> dict[str, str]:
        """The fork server's whole environment (nothing else of ours reaches a submission)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO),
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "NUMEXPR_NUM_THREADS": "1", "MPLBACKEND": "Agg", "COURSE_QUICK": "1",
            "HOME": str(self.root), "TMPDIR": str(self.root),
        }
        stories = self.stories_file()
        if stories:
            env["COURSE_STORIES_FILE"] = stories
        if os.environ.get("COURSE_DATA_CACHE"):
            env["COURSE_DATA_CACHE"] = os.environ["COURSE_DATA_CACHE"]
        return env

    # ------------------------------------------------------------ tear-down
    def close(self) -> None:
        """Undo it all: every uid's processes killed (each a uid this batch holds on the whole host,
        so every process of it is this batch's), then the folders' modes put back (by the last batch
        still running), the uids given back, the batch's cgroup removed, the private folder deleted."""
        if self.pool is not None:
            for uid in self.pool.uids:
                sandbox.kill_uid(uid)
        if self.lockdown is not None:
            self.lockdown.release()
        if self.pool is not None:
            self.pool.release()
        if self.cg is not None:
            self.cg.close()
        if hasattr(self, "root"):
            shutil.rmtree(self.root, ignore_errors=True)
            if getattr(self, "_root_lock", None) is not None:
                os.close(self._root_lock)
