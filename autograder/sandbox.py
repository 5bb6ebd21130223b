"""Isolation of student code: who it runs as, what it can see, how much it may use, and clean-up.

Three modes, chosen once per batch by :func:`detect_mode`:

``isolated`` (the grader runs as root and the kernel allows mount, pid, IPC and network namespaces)
    Each submission runs as an unprivileged uid (one per worker slot, no login, not in
    /etc/passwd) in namespaces of its own: a pid namespace (it sees only its own processes; when
    its init ends, every process in it ends), an IPC namespace (SysV shared memory, semaphores,
    message queues and POSIX queues are its own and vanish with it), a network namespace with no
    network, a fresh session key ring, and a mount namespace whose root is a new, read-only file
    system holding only what the notebook needs: /usr, /etc and the other system folders,
    Python, its packages, the ``course`` package and the data cache, bound read-only; /dev with
    null, zero, full, random and urandom; its own /proc; and empty size-capped /tmp, /var/tmp,
    /dev/shm, /run/lock and scratch folder that exist nowhere else. Nothing else of the machine
    (the grading material, the output, other submissions, home folders) is in its view at all:
    a list of what to show, not of what to hide, so nothing is visible by omission.
``user`` (root, but no namespaces)
    The same unprivileged uids; the secret folders are made unreadable to other users with
    ``chmod go-rwx`` instead of being hidden; the network stays reachable; what the uid leaves in
    /tmp, /var/tmp, /dev/shm, /run/lock and SysV IPC is deleted after each submission.
``weak`` (not root)
    Student code runs as the grader's own user. Limits, process groups, scratch folders and
    clean-up still apply, but student code could read anything the grader can read (hidden tests
    included) while it runs. ``report.html`` says so.

In every mode the parent alone writes the results, each submission gets a new session and
process group, resource limits (memory, processes, file size, CPU time) and, where the machine
has them, a cgroup for its whole process tree (:mod:`autograder.cgroups`); after it is graded
every process it started is killed, also those that left its session, and the user key rings of
its uid are cleared.

Batches that run at once on one host may share nothing but the kernel (a /tmp of their own, a PID
namespace of their own, a lock folder of their own). Each sandbox uid is held by one batch on the
whole host (:class:`UidClaim`: the kernel's count of the uid's processes, which every namespace
shares), so every process of a uid is its batch's, and killing them ends that batch's only.

The process tree of one submission in isolated mode (all in its cgroup)::

    fork server (root)
      └ outer (root, the fork server's view): waits, then exits as the notebook's process did
          └ init (root, pid 1 of the new pid namespace): builds the new root, reaps orphans
              └ the notebook's process (sandbox uid, pid 2): runs the cells, answers requests
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import resource
import select
import signal
import stat
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from . import cgroups, locks

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
SYSCALLS = {  # (pivot_root, keyctl) by machine
    "x86_64": (155, 250), "aarch64": (41, 219), "arm64": (41, 219), "ppc64le": (203, 271),
    "s390x": (217, 280), "riscv64": (41, 219),
}
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEYCTL_GET_PERSISTENT = 22
KEY_SPEC_PROCESS_KEYRING = -2
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5

UID_BASE = int(os.environ.get("COURSE_GRADER_UID_BASE", "61000"))


def _lock_dir() -> Path:
    """Where the grader keeps its locks: ``$COURSE_GRADER_LOCK_DIR``, else ``/run`` for root (where
    it can write), else ``/tmp``. Every batch of a host must see the same folder: systemd's
    ``PrivateTmp`` gives a service /tmp and /var/tmp of its own, and Slurm's ``job_container/tmpfs``
    gives a job /tmp and /dev/shm of its own, but neither replaces /run."""
    named = os.environ.get("COURSE_GRADER_LOCK_DIR")
    if named:
        return Path(named)
    if os.geteuid() == 0 and os.path.isdir("/run") and os.access("/run", os.W_OK):
        return Path("/run")
    return Path("/tmp")


LOCK_DIR = _lock_dir()
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
# what the new root shows of the machine, read-only (a symbolic link is copied as a link)
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
DEVICES = ("null", "zero", "full", "random", "urandom")
SCRATCH = "/home/student"                  # the scratch folder's path inside the new root

MODE_NOTES = {
    "isolated": "Student code ran as an unprivileged user in its own pid, IPC, network and mount namespaces, "
                "with a new read-only root holding only the system, Python and the course package: "
                "grading material, other submissions and this folder were not in its view; /tmp, "
                "/var/tmp, /dev/shm and /run/lock were its own; no network.",
    "user": "Student code ran as an unprivileged user; the grading material was made unreadable to it "
            "with file permissions (no namespaces here: network reachable, /tmp and IPC shared while "
            "it ran, cleaned after).",
    "weak": "WEAKER MODE: the grader did not run as root, so student code ran as the grader's own user "
            "and could have read the hidden tests and the output folder while it ran. Process groups, "
            "limits and clean-up still applied. Grade as root for full isolation.",
}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class SandboxError(RuntimeError):
    """The sandbox could not be set up."""


@dataclass
class Limits:
    """Resource limits of one submission."""

    memory_bytes: int
    cpu_seconds: int
    max_processes: int = 128
    max_tasks: int = 512                  # processes and threads of the whole tree (cgroup pids.max)
    max_file_bytes: int = 256 * 2**20
    scratch_bytes: int = 512 * 2**20
    tmp_bytes: int = 256 * 2**20          # each of the private /tmp, /var/tmp, /dev/shm
    max_open_files: int = 1024


@dataclass
class SandboxSpec:
    """Everything the child needs to wall itself in (sent to the runner as JSON).

    It names no submission: paths are the batch's own folders, the child's scratch and what the
    new root shows (``view``)."""

    mode: str
    uid: int
    scratch: str
    limits: dict = field(default_factory=dict)
    view: list[str] = field(default_factory=list)    # bound read-only into the new root
    newroot: str = ""                                # an empty folder to build the new root on
    cgroup: list[str] = field(default_factory=list)  # cgroup.procs files to join first


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


def _syscall(index: int, *args: int | bytes | None) -> int:
    numbers = SYSCALLS.get(platform.machine())
    if numbers is None:
        raise SandboxError(f"unknown machine {platform.machine()!r}")
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return _libc.syscall(ctypes.c_long(numbers[index]), *conv)


def pivot_root(new: str, old: str) -> None:
    _check(0 if _syscall(0, new.encode(), old.encode()) == 0 else -1, "pivot_root")


def keyctl(*args: int | bytes) -> int:
    return _syscall(1, *args)


def set_child_subreaper() -> None:
    """Orphans of our children come back to us (so that they are reaped, not left as zombies)."""
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _probe_namespaces(newroot: str) -> bool:
    """Can a child get the isolated mode's namespaces and a new root here?"""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            unshare(NAMESPACES)
            inner = os.fork()
            if inner == 0:
                try:
                    mount(None, "/", None, MS_REC | MS_PRIVATE)
                    mount("tmpfs", newroot, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
                    os.mkdir(newroot + "/proc")
                    mount("proc", newroot + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                    os.chdir(newroot)
                    pivot_root(".", ".")
                    os._exit(0)
                except BaseException:
                    os._exit(1)
            _, status = os.waitpid(inner, 0)
            code = os.waitstatus_to_exitcode(status)
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def detect_mode(requested: str | None = None, newroot: str | None = None) -> str:
    """The strongest mode this machine allows (or ``requested``, if it is allowed)."""
    if os.geteuid() != 0:
        best = "weak"
    elif newroot and _probe_namespaces(newroot):
        best = "isolated"
    else:
        best = "user"
    order = ["weak", "user", "isolated"]
    if requested is None:
        return best
    if order.index(requested) > order.index(best):
        raise SandboxError(f"sandbox mode {requested!r} is not possible here (best: {best!r})")
    return requested


def private_dir() -> Path:
    """The grader's own folder for its locks and the closed folders' registry (:mod:`autograder.lockdown`):
    ``$COURSE_GRADER_LOCK_DIR/course-grader`` (``/run`` for root by default, see :func:`_lock_dir`),
    mode 0700, owned by the user the grader runs as, checked at every use. Nothing the grader opens
    lies in a world-writable folder itself: student code may write there while it runs, and a link it
    plants under a name the grader uses would send the grader's open (root's) wherever the link
    points."""
    home = LOCK_DIR / "course-grader"
    try:
        os.mkdir(home, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(home)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise SandboxError(f"{home} is not the grader's own folder (a folder of mode 0700 owned by the "
                           "user the grader runs as): remove it, or set COURSE_GRADER_LOCK_DIR to a "
                           "folder only that user can write")
    return home


def open_lock(name: str) -> int:
    """A lock file of the grader's (in :func:`private_dir`, never through a link)."""
    return os.open(private_dir() / name, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)


# ---------------------------------------------------------------- uids, claimed on the whole host

ANSWER_TIMEOUT = 5.0        # a holder answers in milliseconds; one that does not was stopped
_CLAIMS: dict[int, UidClaim] = {}     # the uids this process holds, by uid


class UidClaim:
    """A uid claimed for one batch on the whole host, as the kernel counts the uid's processes.

    A lock file claims a uid among the batches that share its folder only: not between two
    containers that share the host's uids, nor between two jobs that each see a /tmp of their own.
    The kernel's count of a uid's processes is the same in every mount, PID and cgroup namespace
    (within one user namespace). So a batch holds a uid by running one process as it, its *holder*,
    for as long as it holds it, and takes a uid only when its holder finds itself the uid's only
    process: as that uid, with ``RLIMIT_NPROC`` 2, a ``fork`` fails while any other process of the
    uid exists, seen from here or not. Of two batches that try one uid at once, each counts the
    other's holder, so at most one gets it; a uid whose holder lives is never taken by another batch.

    The holder is also how its batch ends the uid's processes: ``kill(-1)`` as the uid kills every
    one of them but the caller, and the holder then checks, by the same count, that none is left
    anywhere. It exits when the grader closes its pipe or dies, so its claim ends with its batch, as
    a lock does. (Student code runs as the same uid: in the ``user`` mode it could end or stop the
    holder, which :meth:`UidPool.ensure` notices; in the ``isolated`` mode it cannot see it.)
    """

    def __init__(self, uid: int, pid: int, command: int, answer: int) -> None:
        self.uid = uid
        self.pid = pid
        self._command = command
        self._answer = answer
        self._reaped = False

    @classmethod
    def take(cls, uid: int, over: bool = False) -> UidClaim | None:
        """Claim ``uid``; None when another process of it runs anywhere on the host. ``over``: claim it
        although processes of it run (a batch that is gone left them, and the caller kills them with
        :meth:`kill`), so that no other batch takes the uid while they are being killed."""
        command_r, command_w = os.pipe()
        answer_r, answer_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                _hold(uid, command_r, answer_w, over)
            finally:
                os._exit(0)
        os.close(command_r)
        os.close(answer_w)
        claim = cls(uid, pid, command_w, answer_r)
        if claim._ask(None) != b"1":
            claim.release()
            return None
        return claim

    def _ask(self, command: bytes | None) -> bytes:
        """Send ``command`` (if any) and read the holder's one-byte answer; b"" when it is gone, or
        stopped (then it is killed: a holder that does not answer holds nothing)."""
        if self._answer < 0:
            return b""
        try:
            if command is not None:
                os.write(self._command, command)
            poll = select.poll()                   # not select(): no limit on the descriptor's number
            poll.register(self._answer, select.POLLIN)
            if poll.poll(ANSWER_TIMEOUT * 1000):
                return os.read(self._answer, 1)
        except OSError:
            return b""
        if not self._reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)     # our own unreaped child: its pid is still its own
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self._reaped = True
        return b""

    def alive(self) -> bool:
        """Is the holder still there?"""
        if self._reaped:
            return False
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            done = self.pid
        self._reaped = done != 0
        return not self._reaped

    def kill(self, wait: float = 2.0) -> bool:
        """Kill every other process of the uid: True once none is left (none anywhere on the host by
        the kernel's count, or none but the dead, not yet reaped by their parents, in this PID
        namespace, which shows all of this batch's), False when some still are after ``wait``
        seconds, or when the holder is gone."""
        deadline = time.monotonic() + wait
        while True:
            answer = self._ask(b"k")
            if answer == b"1":
                return True
            if answer != b"0":
                return False
            if not _live_processes_of_uid(self.uid, {c.pid for c in _CLAIMS.values()} | {self.pid}):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    def release(self) -> None:
        """End the claim: the holder exits at the end of its pipe."""
        for fd in (self._command, self._answer):
            if fd >= 0:
                os.close(fd)
        self._command = self._answer = -1
        if not self._reaped:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self._reaped = True


def _hold(uid: int, command: int, answer: int, over: bool) -> None:  # pragma: no cover - child
    """The holder of :class:`UidClaim`, in the forked child: becomes ``uid``, answers b"1" when it is
    the uid's only process (or ``over``) and b"0" when not, then on each b"k" kills every other
    process of the uid and answers whether none is left; ends at the end of its pipe."""
    _close_all_but([command, answer])       # the grader's locks among them: they end with the grader
    os.setsid()                             # a Ctrl-C to the grader's terminal is not for it
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)             # and no capability left: the kernel's limit applies to it
    resource.setrlimit(resource.RLIMIT_NPROC, (2, 2))
    os.write(answer, b"1" if over or _alone() else b"0")
    while os.read(command, 1) == b"k":
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)     # every process of the uid it may signal, but itself
        os.write(answer, b"1" if _alone() else b"0")


def _alone() -> bool:  # pragma: no cover - in the holder
    """In the holder (its uid's ``RLIMIT_NPROC`` 2): is it the uid's only process on the host? The
    kernel refuses the fork when the uid has another process, in any namespace."""
    try:
        child = os.fork()
    except OSError:
        return False
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    return True


class UidPool:
    """Unprivileged uids for worker slots, each claimed for this batch alone: by a lock file in the
    grader's lock folder (among the batches that share it) and by a :class:`UidClaim` (among every
    batch of the host, whatever else they share). A uid in /etc/passwd is never taken."""

    def __init__(self, count: int) -> None:
        self.uids: list[int] = []
        self._held: dict[int, tuple[int, Path, UidClaim]] = {}
        self._retired: list[int] = []              # lock descriptors of uids this batch gave up
        self._used = {p.uid for p in _passwd()}
        self._next = UID_BASE
        try:
            while len(self.uids) < count:
                self.uids.append(self._claim())
        except BaseException:
            self.release()
            raise

    def _claim(self) -> int:
        """The next uid that no batch on the host holds and no process runs as, claimed."""
        while True:
            uid = self._next
            self._next += 1
            if uid > UID_BASE + 5000:
                raise SandboxError("no free uid for the sandbox")
            if uid in self._used:
                continue
            path = private_dir() / f"uid-{uid}.lock"
            taken = locks.take(path)
            if taken is None:                      # a live batch of this lock folder holds it
                continue
            fd, made = taken
            claim = UidClaim.take(uid)
            if claim is None:                      # a process runs as it: another batch's, or left
                if made:                           # no batch of this folder had it: nothing to sweep
                    locks.drop(fd, path)
                else:                              # a killed batch's: its file stays for the sweep
                    os.close(fd)
                continue
            self._held[uid] = (fd, path, claim)
            _CLAIMS[uid] = claim
            return uid

    def ensure(self, uid: int) -> int:
        """The uid a worker slot runs its next submission as, after one ran as ``uid`` (and all its
        processes were killed): ``uid`` while its holder lives; when student code ended the holder
        (the ``user`` mode: same uid, same PID namespace), ``uid`` claimed again, else another uid."""
        held = self._held.get(uid)
        if held is None or held[2].alive():
            return uid
        fd, path, gone = held
        gone.release()
        deadline = time.monotonic() + 3.0         # killed processes count until they are reaped
        while True:
            claim = UidClaim.take(uid)
            if claim is not None:
                self._held[uid] = (fd, path, claim)
                _CLAIMS[uid] = claim
                return uid
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        # a process of it still runs (its own left over, or another batch's since): given up; its
        # lock stays taken until this batch ends, and its file stays (a leftover of ours is swept)
        del self._held[uid]
        _CLAIMS.pop(uid, None)
        self._retired.append(fd)
        new = self._claim()
        self.uids[self.uids.index(uid)] = new
        return new

    def release(self) -> None:
        """Give the uids back: what still runs as one is killed, its holder ends, and its lock file is
        removed once none of its processes is left (else kept, free: the next batch kills them)."""
        for uid, (fd, path, claim) in self._held.items():
            clean = claim.alive() and claim.kill(wait=0.5)
            claim.release()
            _CLAIMS.pop(uid, None)
            if clean:
                locks.drop(fd, path)
            else:
                os.close(fd)
        for fd in self._retired:
            os.close(fd)
        self._held = {}
        self._retired = []


@dataclass
class _Pw:
    uid: int


def _passwd() -> list[_Pw]:
    try:
        import pwd
        return [_Pw(p.pw_uid) for p in pwd.getpwall()]
    except Exception:  # pragma: no cover
        return []


left_behind = locks.left_behind


def kill_orphans() -> list[int]:
    """Kill the processes of every uid that a batch of this lock folder was handed (its lock file is
    in :func:`private_dir`) and that no live batch holds now: what a batch that was killed left
    behind, a student's daemon among them, which would otherwise outlive it and see the folders
    opened again. A uid without a lock file here is never touched: it may be a batch's that uses
    another lock folder (another container) and that this one cannot prove dead. Returns those uids."""
    users = {p.uid for p in _passwd()}
    home = private_dir()
    uids = set()
    for p in psutil.process_iter(["uids"]):
        try:
            uid = p.info["uids"].real
        except (AttributeError, TypeError, psutil.Error):
            continue
        if UID_BASE <= uid <= UID_BASE + 5000 and uid not in users and uid not in _CLAIMS:
            uids.add(uid)
    killed = []
    for uid in sorted(uids):
        lock = home / f"uid-{uid}.lock"
        with locks.left_behind(lock) as gone:
            if not gone:
                continue
            # a holder of its own while they are killed: no other batch claims the uid meanwhile
            claim = UidClaim.take(uid, over=True)
            if claim is not None:
                clean = claim.kill()
                claim.release()
            else:
                kill_uid(uid)
                clean = not _live_processes_of_uid(uid)
            if clean:                              # nothing of the killed batch is left to sweep
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(lock)
            killed.append(uid)
    return killed


def _live_processes_of_uid(uid: int, spare: set[int] | None = None) -> list[psutil.Process]:
    """The live processes of ``uid`` this PID namespace shows, but those in ``spare``."""
    found = []
    for p in psutil.process_iter(["uids", "status"]):
        try:
            if p.info["uids"] and p.info["uids"].real == uid and p.info["status"] != psutil.STATUS_ZOMBIE \
                    and p.pid not in (spare or ()):
                found.append(p)
        except (psutil.Error, TypeError):
            continue
    return found


def _as_uid(uid: int, action) -> None:
    """Run ``action()`` in a short-lived child that has become ``uid`` (never in this process)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            action()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def kill_uid(uid: int, rounds: int = 50) -> int:
    """Kill every process of ``uid``, a uid this batch holds (also fork bombs: kill(-1) as that uid is
    one sweep in the kernel). Through the uid's holder (:class:`UidClaim`) while it lives: the kill
    spares it, and it checks by the kernel's count that none is left; else (no holder, or student
    code ended it) in a short-lived child that becomes ``uid``. Safe only for a uid this batch holds
    on the whole host: every process of it is then this batch's.

    Returns how many processes were found alive at the start.
    """
    holders = {c.pid for c in _CLAIMS.values()}
    first = len(_live_processes_of_uid(uid, holders))
    claim = _CLAIMS.get(uid)
    if claim is not None and claim.alive() and (claim.kill() or claim.alive()):
        return first
    # no holder, or it was ended or stopped (by student code, in the user mode) meanwhile
    for _ in range(rounds):
        if not _live_processes_of_uid(uid, holders):
            return first
        _as_uid(uid, lambda: os.kill(-1, signal.SIGKILL))
        time.sleep(0.01)
    return first


def clear_keys(uid: int) -> None:
    """Empty the key rings that outlive a uid's processes (user, user session, persistent), so that
    the next submission graded as this uid finds nothing in them."""
    def clear() -> None:
        for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
            keyctl(KEYCTL_CLEAR, ring)
        persistent = keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_PROCESS_KEYRING)
        if persistent > 0:
            keyctl(KEYCTL_CLEAR, persistent)
    try:
        _as_uid(uid, clear)
    except OSError:
        pass


def sweep_uid_files(uid: int, folders: tuple[str, ...] = SHARED_TMP) -> list[str]:
    """User mode: delete what ``uid`` left in the shared temporary folders and in SysV IPC."""
    import shutil
    removed = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            try:
                if e.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if e.is_dir(follow_symlinks=False):
                    shutil.rmtree(e.path, ignore_errors=True)
                else:
                    os.unlink(e.path)
                removed.append(e.path)
            except OSError:
                continue
    removed += remove_ipc_of(uid)
    return removed


def remove_ipc_of(uid: int) -> list[str]:
    """Remove the SysV shared memory, message queues and semaphore sets owned by ``uid``."""
    removed = []
    for kind, ctl in (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl")):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *lines = f.read().splitlines()
        except OSError:
            continue
        cols = header.split()
        for line in lines:
            row = dict(zip(cols, line.split(), strict=False))
            try:
                if int(row.get("uid", -1)) != uid:
                    continue
                ident = int(row["shmid" if kind == "shm" else "msqid" if kind == "msg" else "semid"])
            except (KeyError, ValueError):
                continue
            fn = getattr(_libc, ctl)
            args = (ctypes.c_int(ident), ctypes.c_int(0), ctypes.c_int(0)) if kind == "sem" else \
                (ctypes.c_int(ident), ctypes.c_int(0), None)
            if fn(*args) == 0:           # IPC_RMID is 0
                removed.append(f"{kind} {ident}")
    return removed


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


def reach_plan(needed: list[Path]) -> list[str]:
    """Folders on the way to ``needed`` that other users can't enter (Python in /root/.pyenv, say).

    Only the user mode cares: it has no new root to put such paths in, so it falls back to weak."""
    blocked = []
    for path in needed:
        parts = path.resolve().parts
        for i in range(1, len(parts)):
            anc = str(Path(*parts[:i]))
            try:
                if not os.stat(anc).st_mode & 0o001 and anc not in blocked:
                    blocked.append(anc)
            except OSError:
                break
    return sorted(blocked, key=len)


def make_private_dir(path: Path) -> Path:
    """A folder only root (the grader) can enter."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def make_scratch(root: Path, name: str, uid: int | None) -> Path:
    """A fresh scratch folder for one submission: 0700, owned by the sandbox uid (user and weak modes)."""
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
    student code. It first joins the submission's cgroup. In isolated mode it forks twice (see the
    module's docstring) and returns only in the notebook's process; the two processes above it
    never return. Writes the notebook into the scratch folder and leaves the process in it.
    """
    mode = spec["mode"]
    uid = spec["uid"]
    scratch = spec["scratch"]
    lim = spec["limits"]
    if spec.get("cgroup"):
        cgroups.join(spec["cgroup"])
        if mode == "isolated":
            try:
                unshare(CLONE_NEWCGROUP)      # its /proc/self/cgroup says "/"
            except SandboxError:
                pass
    if mode == "isolated":
        _namespaces(spec)
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
        # a session key ring of its own (the inherited one is the grader's, readable by its possessor)
        if keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0) < 0 and mode == "isolated":
            raise SandboxError(f"no session key ring: {os.strerror(ctypes.get_errno())}")
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _close_all_but(keep: list[int]) -> None:
    keep = sorted(set(keep))
    low = 0
    for fd in keep + [2**31 - 1]:
        if fd >= low:
            os.closerange(low, fd)
        low = max(low, fd + 1)


def _set_oom_score(value: int) -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(value))
    except OSError:
        pass


def _namespaces(spec: dict) -> None:
    """Isolated mode: new namespaces, the outer waiter, the init, the new root. Returns in the
    notebook's process only."""
    status_r, status_w = os.pipe()
    _set_oom_score(-1000)                      # an out-of-memory kill should hit the notebook's processes
    unshare(NAMESPACES)
    init = os.fork()
    if init:
        os.close(status_w)
        _outer(init, status_r)                 # never returns
    os.close(status_r)
    os.umask(0o022)
    _build_root(spec)                          # a failure here reaches the runner, which reports it
    notebook = os.fork()
    if notebook:
        _init(notebook, status_w)              # never returns
    os.close(status_w)
    _set_oom_score(0)


def _outer(init: int, status_r: int) -> None:
    """In the fork server's pid namespace: wait for the init, then end as the notebook's process
    ended (its wait status comes over a pipe), so the fork server reports it as before."""
    _close_all_but([status_r])
    status = None
    while True:
        try:
            _, st = os.waitpid(init, 0)
            break
        except ChildProcessError:
            st = 9
            break
    data = b""
    os.set_blocking(status_r, False)
    try:
        data = os.read(status_r, 4)
    except OSError:
        pass
    status = struct.unpack("i", data)[0] if len(data) == 4 else st
    _exit_as(status)


def _exit_as(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), signal.SIGKILL)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


def _init(notebook: int, status_w: int) -> None:
    """Pid 1 of the submission's pid namespace: reap orphans until the notebook's process ends,
    pass on its wait status, and end (which ends every process left in the namespace)."""
    _close_all_but([status_w])
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE, signal.SIGALRM):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == notebook:
            try:
                os.write(status_w, struct.pack("i", st))
            except OSError:
                pass
            os._exit(0)


def _bind_ro(src: str, dst: str) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            os.close(os.open(dst, os.O_CREAT | os.O_WRONLY, 0o644))
    mount(src, dst, None, MS_BIND)
    mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _no_link_on_the_way(new: str, path: str) -> bool:
    """No folder on the way to ``path`` in the new root is a link (which could lead out of it)."""
    parts = path.strip("/").split("/")[:-1]
    return not any(os.path.islink(new + "/" + "/".join(parts[:i + 1])) for i in range(len(parts)))


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _build_root(spec: dict) -> None:
    """The init's mount namespace: a new root holding only the system, Python, the course package
    and the data (read-only), private /tmp, /var/tmp, /dev/shm, /run/lock, its own /proc and the
    scratch folder. The old root is detached: nothing else of the machine is reachable."""
    lim = spec["limits"]
    new = spec["newroot"].rstrip("/")
    uid = spec["uid"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    # /dev: the harmless devices, bound from the machine's
    os.mkdir(new + "/dev", 0o755)
    mount("tmpfs", new + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            os.close(os.open(f"{new}/dev/{name}", os.O_CREAT | os.O_WRONLY, 0o666))
            mount("/dev/" + name, f"{new}/dev/{name}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{new}/dev/{name}")
    # writable folders of its own, before the read-only binds (a course kept below /tmp stays on top)
    private = [("/tmp", lim["tmp_bytes"]), ("/var/tmp", lim["tmp_bytes"]), ("/dev/shm", lim["tmp_bytes"]),
               ("/run/lock", 8 * 2**20)]
    for path, size in private:
        os.makedirs(new + path, exist_ok=True)
        mount("tmpfs", new + path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
    bound: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            os.symlink(os.readlink(path), new + path)
        elif os.path.isdir(path):
            _bind_ro(path, new + path)
            bound.append(path)
    named = [os.path.abspath(p) for p in spec.get("view", []) if os.path.exists(p)]
    for path in sorted({os.path.realpath(p) for p in named}, key=len):
        if path in ("/", "") or any(_below(path, b) for b in bound):
            continue
        _bind_ro(path, new + path)
        bound.append(path)
    for path in named:              # a path named through a symbolic link: the link, to the real one
        if os.path.realpath(path) != path and _no_link_on_the_way(new, path) \
                and not os.path.lexists(new + path):
            try:
                os.makedirs(os.path.dirname(new + path), exist_ok=True)
                os.symlink(os.path.realpath(path), new + path)
            except OSError:
                pass
    os.makedirs(new + "/proc", exist_ok=True)
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    scratch = spec["scratch"]
    os.makedirs(new + scratch, exist_ok=True)
    mount("tmpfs", new + scratch, "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={lim['scratch_bytes']},mode=0700,uid={uid},gid={uid}")
    os.chdir(new)
    pivot_root(".", ".")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "umount the old root")
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


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
