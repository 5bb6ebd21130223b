"""Isolation of student code: who it runs as, what it can see, how much it may use, and clean-up.

Three modes, chosen once per batch by :func:`detect_mode`:

``isolated`` (the grader runs as root and the kernel allows mount and network namespaces)
    Each submission runs as its own unprivileged uid (one per worker slot, no login, not in
    /etc/passwd), in a private mount namespace where the grading material, the output folder,
    the submissions and the repository's ``.git``, ``solutions/`` and ``dev/`` are covered by
    empty read-only file systems, with no network, a private ``/tmp`` and a size-capped scratch
    folder that vanishes with it.
``user`` (root, but no namespaces)
    The same unprivileged uids; the secret folders are made unreadable to other users with
    ``chmod go-rwx`` instead of being hidden; the network stays reachable.
``weak`` (not root)
    Student code runs as the grader's own user. Limits, process groups, scratch folders and
    clean-up still apply, but student code could read anything the grader can read (hidden tests
    included) while it runs. ``report.html`` says so.

In every mode the parent alone writes the results, each submission gets a new session and
process group, resource limits (memory, processes, file size, CPU time), and after it is graded
every process it started is killed, also those that left its session.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_MOVE = 8192
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

UID_BASE = int(os.environ.get("COURSE_GRADER_UID_BASE", "61000"))
LOCK_DIR = Path(os.environ.get("COURSE_GRADER_LOCK_DIR", "/tmp"))

MODE_NOTES = {
    "isolated": "Student code ran as an unprivileged user in a private mount namespace with no network; "
                "grading material, other submissions and this folder were hidden from it.",
    "user": "Student code ran as an unprivileged user; the grading material was made unreadable to it "
            "with file permissions (no mount namespaces here, network reachable).",
    "weak": "WEAKER MODE: the grader did not run as root, so student code ran as the grader's own user "
            "and could have read the hidden tests and the output folder while it ran. Process groups, "
            "limits and clean-up still applied. Grade as root for full isolation.",
}

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(RuntimeError):
    """The sandbox could not be set up."""


@dataclass
class Limits:
    """Resource limits of one submission."""

    memory_bytes: int
    cpu_seconds: int
    max_processes: int = 128
    max_file_bytes: int = 256 * 2**20
    scratch_bytes: int = 512 * 2**20
    max_open_files: int = 1024


@dataclass
class SandboxSpec:
    """Everything the child needs to wall itself in (sent to the runner as JSON)."""

    mode: str
    uid: int
    scratch: str
    hide: list[str] = field(default_factory=list)
    limits: dict = field(default_factory=dict)
    reach: list[list] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)   # must stay visible (the course, Python, data)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """The unshare(2) system call (os.unshare appears only in Python 3.12)."""
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """The mount(2) system call."""
    enc = (lambda s: s.encode() if s is not None else None)
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def set_child_subreaper() -> None:
    """Orphans of our children come back to us (so that they are reaped, not left as zombies)."""
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _probe_namespaces() -> bool:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            unshare(CLONE_NEWNS | CLONE_NEWNET)
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def detect_mode(requested: str | None = None) -> str:
    """The strongest mode this machine allows (or ``requested``, if it is allowed)."""
    if os.geteuid() != 0:
        best = "weak"
    elif _probe_namespaces():
        best = "isolated"
    else:
        best = "user"
    order = ["weak", "user", "isolated"]
    if requested is None:
        return best
    if order.index(requested) > order.index(best):
        raise SandboxError(f"sandbox mode {requested!r} is not possible here (best: {best!r})")
    return requested


class UidPool:
    """Unprivileged uids for worker slots, each held with a lock file so that two batches never share one."""

    def __init__(self, count: int) -> None:
        self.uids: list[int] = []
        self._locks: list[int] = []
        used = {p.uid for p in _passwd()}
        candidate = UID_BASE
        while len(self.uids) < count:
            if candidate > UID_BASE + 5000:
                raise SandboxError("no free uid for the sandbox")
            if candidate in used or _uid_has_processes(candidate):
                candidate += 1
                continue
            fd = os.open(LOCK_DIR / f"course-grader-uid-{candidate}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                candidate += 1
                continue
            self.uids.append(candidate)
            self._locks.append(fd)
            candidate += 1

    def release(self) -> None:
        for fd in self._locks:
            os.close(fd)
        self._locks = []


@dataclass
class _Pw:
    uid: int


def _passwd() -> list[_Pw]:
    try:
        import pwd
        return [_Pw(p.pw_uid) for p in pwd.getpwall()]
    except Exception:  # pragma: no cover
        return []


def _uid_has_processes(uid: int) -> bool:
    return bool(_live_processes_of_uid(uid))


def _live_processes_of_uid(uid: int) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["uids", "status"]):
        try:
            if p.info["uids"] and p.info["uids"].real == uid and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.Error, TypeError):
            continue
    return found


def kill_uid(uid: int, rounds: int = 50) -> int:
    """Kill every process of ``uid`` (also fork bombs: kill(-1) as that uid is one sweep in the kernel).

    Returns how many processes were found alive at the start.
    """
    first = len(_live_processes_of_uid(uid))
    for _ in range(rounds):
        if not _live_processes_of_uid(uid):
            return first
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.01)
    return first


def kill_tagged(root_pid: int, tag: str) -> None:
    """Weak mode: kill the descendants of ``root_pid`` whose environment carries ``tag``."""
    try:
        procs = psutil.Process(root_pid).children(recursive=True)
    except psutil.Error:
        return
    for p in procs:
        try:
            if p.environ().get("COURSE_GRADE_JOB") == tag:
                p.kill()
        except psutil.Error:
            continue


def killpg(pgid: int) -> None:
    """Kill a process group, ignoring one that is already gone."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reach_plan(needed: list[Path], hold_root: Path) -> list[list]:
    """How to make ``needed`` paths reachable by other users when an ancestor is closed to them.

    Python may live in a folder only root can enter (``/root/.pyenv``, a home folder). In a mount
    namespace the child covers each such ancestor with an empty world-readable tmpfs and mounts
    back only the entries on the way to what it needs. Returns ``[[blocked_dir, [[name, hold], ...]],
    ...]`` shallowest first; the holds are created here (mount points for the originals).
    """
    blocked: dict[Path, set[str]] = {}
    for path in needed:
        path = path.resolve()
        parts = path.parts
        for i in range(1, len(parts)):
            anc = Path(*parts[:i])
            try:
                if not os.stat(anc).st_mode & 0o001:
                    blocked.setdefault(anc, set()).add(parts[i])
            except OSError:
                break
    plan = []
    k = 0
    hold_root.mkdir(exist_ok=True)
    for anc in sorted(blocked, key=lambda p: len(p.parts)):
        entries = []
        for name in sorted(blocked[anc]):
            hold = hold_root / f"h{k}"
            k += 1
            if (anc / name).is_dir():
                hold.mkdir(exist_ok=True)
            else:
                hold.touch()
            entries.append([name, str(hold)])
        plan.append([str(anc), entries])
    return plan


def _apply_reach(plan: list[list]) -> None:
    for anc, entries in plan:  # first keep the originals at their holds...
        for name, hold in entries:
            mount(os.path.join(anc, name), hold, None, MS_BIND | MS_REC)
    for anc, entries in plan:  # ...then cover each closed folder and put them back
        mount("tmpfs", anc, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for name, hold in entries:
            target = os.path.join(anc, name)
            if os.path.isdir(hold):
                os.mkdir(target)
            else:
                open(target, "wb").close()
            mount(hold, target, None, MS_MOVE)


def _private_tmp(tmp: str, keep: list[str]) -> None:
    """Cover `tmp` with an empty tmpfs, but put back what must stay visible below it (a clone of
    the course under /tmp, its virtual environment): bound from file descriptors opened before
    the cover, recursively, so the hiding mounts inside them stay in place."""
    below = [k for k in keep if k.startswith(tmp.rstrip("/") + "/") and os.path.exists(k)]
    # a path inside another kept one comes back with it (and must not be re-created over it)
    below = [k for k in below if not any(k.startswith(o.rstrip("/") + "/") for o in below if o != k)]
    held = [(k, os.open(k, os.O_PATH)) for k in below]
    mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777")
    for path, fd in held:
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(path, exist_ok=True)
        else:                           # an empty mount point on the new tmpfs; never truncates
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)


def make_private_dir(path: Path) -> Path:
    """A folder only root (the grader) can enter."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def make_scratch(root: Path, name: str, uid: int | None) -> Path:
    """A fresh scratch folder for one submission: 0700, owned by the sandbox uid."""
    path = root / name
    path.mkdir(mode=0o700)
    if uid is not None:
        os.chown(path, uid, uid)
    os.chmod(path, 0o700)
    return path


def lock_down(paths: list[Path]) -> list[str]:
    """User mode: remove group/other permissions from the secret folders. Returns what was changed."""
    changed = []
    for p in paths:
        try:
            mode = stat.S_IMODE(os.stat(p).st_mode)
        except OSError:
            continue
        if mode & 0o077:
            os.chmod(p, mode & 0o700)
            changed.append(str(p))
    return changed


# ---------------------------------------------------------------- inside the child (runner)

def enter(spec: dict, notebook_name: str, notebook_bytes: bytes) -> None:
    """Wall the current process in according to ``spec`` (a :class:`SandboxSpec` as a dict).

    Called by the runner in its forked child, as root in ``isolated`` and ``user`` mode, before any
    student code. Writes the notebook into the scratch folder and leaves the process in it.
    """
    mode = spec["mode"]
    uid = spec["uid"]
    scratch = spec["scratch"]
    lim = spec["limits"]
    if mode == "isolated":
        unshare(CLONE_NEWNS | CLONE_NEWNET)
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        _apply_reach(spec.get("reach", []))
        for p in spec["hide"]:
            if os.path.isdir(p):
                mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=000")
            elif os.path.exists(p):
                mount("/dev/null", p, None, MS_BIND)
        for tmp in ("/tmp", "/dev/shm", "/var/tmp"):
            if os.path.isdir(tmp) and not scratch.startswith(tmp.rstrip("/") + "/"):
                _private_tmp(tmp, spec.get("keep", []))
        mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={lim['scratch_bytes']},mode=0700,uid={uid},gid={uid}")
    nb_path = os.path.join(scratch, notebook_name)
    with open(nb_path, "wb") as f:
        f.write(notebook_bytes)
    os.makedirs(os.path.join(scratch, "tmp"), exist_ok=True)
    if mode != "weak":
        for dirpath, dirnames, filenames in os.walk(scratch):
            for n in dirnames + filenames:
                os.chown(os.path.join(dirpath, n), uid, uid)
    os.chdir(scratch)
    _set_limits(lim, mode)
    if mode != "weak":
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _set_limits(lim: dict, mode: str) -> None:
    def setl(which: int, value: int) -> None:
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))

    setl(resource.RLIMIT_AS, lim["memory_bytes"])
    setl(resource.RLIMIT_CPU, lim["cpu_seconds"])
    setl(resource.RLIMIT_FSIZE, lim["max_file_bytes"])
    setl(resource.RLIMIT_CORE, 0)
    setl(resource.RLIMIT_NOFILE, lim["max_open_files"])
    if mode != "weak":  # per-uid count: only meaningful for our own sandbox uid
        setl(resource.RLIMIT_NPROC, lim["max_processes"])
