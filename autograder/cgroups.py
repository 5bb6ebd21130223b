"""Resource control for a submission's whole process tree: one control group (cgroup) per submission.

Resource limits (``setrlimit``) count one process at a time: three processes may each hold the
memory cap, and forty busy ones get forty shares of the processors. A cgroup counts everything a
submission started, wherever it went (a new session, a double fork), and the kernel can kill it
all at once. The grader (root) makes one cgroup for the batch and one per submission in it; the
submission's first process joins it (:func:`join`) before it drops its privileges and before any
student code runs; an unprivileged process can never leave it.

    batch = Batch.open(batch_name(), locks=LOCKS)          # None where cgroups can't be used
    group = batch.create("s00001-ab12cd", memory_bytes=4 * 2**30, max_tasks=512)
    ... the child calls join(group.procs_files) ...
    group.kill(); group.peak_memory(); group.oom_kills(); group.remove()
    batch.close()

Two kinds, whichever the machine has:

``v2`` (a unified hierarchy whose memory, pids and cpu controllers reach the grader's cgroup):
    ``memory.max`` (and ``memory.swap.max`` 0), ``pids.max``, ``cpu.weight``; killed with
    ``cgroup.kill``; peak from ``memory.peak``, out-of-memory kills from ``memory.events``.
``v1`` (separate memory, pids and cpu hierarchies):
    ``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes`` (when swap is accounted),
    ``pids.max``, ``cpu.shares``; killed through a cgroup2 mount without controllers when there
    is one (``cgroup.kill``), else the freezer (freeze, kill every member, thaw), else by killing
    the members until none is left; peak from ``memory.max_usage_in_bytes``.

Where neither works (not root, no writable hierarchy) :meth:`Batch.open` returns None
(:meth:`Batch.opened`: with the reason), and the grader keeps its per-process limits and says so in
the report.

Whose a batch cgroup is: the cgroup tree is the host's, and graders in PID namespaces of their own
(containers, ``unshare -p``) share it without seeing each other's pids, so neither a cgroup's name
nor a pid says that its grader is gone (two graders may even have the same pid). A batch cgroup is
named ``course-grade-<pid>-<random>``, unique on the host, and its grader holds a lock file named
after it in the grader's lock folder (``locks``) from before it makes it until it has removed it. A
batch sweeps another's cgroup (kills its members, removes it) only when that lock file is there and
free: its grader is gone. A cgroup without one (another lock folder's, an older grader's) is never
touched.
"""
from __future__ import annotations

import errno
import os
import secrets
import signal
import time
from pathlib import Path

from . import locks as lockfiles

NEEDED = ("memory", "pids", "cpu")
ROOT = Path("/sys/fs/cgroup")
PREFIX = "course-grade-"
SIBLINGS = ("-grader", "-probe")     # folders a batch makes beside its own, named after it


def batch_name() -> str:
    """A batch cgroup's name, unique on the host: the pid (for people; it is only this PID
    namespace's) and 48 random bits (two graders in two PID namespaces may have the same pid)."""
    return f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"


def _lock_of(locks: Path, name: str) -> Path:
    return locks / f"cgroup-{name}.lock"


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _unescape(s: str) -> str:
    """Mount points in mountinfo escape space, tab, newline and backslash as octal."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and len(s[i + 1:i + 4]) == 3 and s[i + 1:i + 4].isdigit():
            out.append(chr(int(s[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def mounts(mountinfo: str | None = None) -> list[tuple[str, str, str, set[str]]]:
    """(fstype, root, mount point, super options) of every cgroup and cgroup2 mount."""
    text = _read(Path("/proc/self/mountinfo")) if mountinfo is None else mountinfo
    found = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        fstype = fields[sep + 1]
        if fstype not in ("cgroup", "cgroup2"):
            continue
        opts = set(fields[sep + 3].split(",")) if len(fields) > sep + 3 else set()
        found.append((fstype, _unescape(fields[3]), _unescape(fields[4]), opts))
    return found


def own_cgroups(text: str | None = None) -> dict[str, str]:
    """This process's cgroup per v1 controller (keys: controller names) and in v2 (key '')."""
    text = _read(Path("/proc/self/cgroup")) if text is None else text
    own: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[1] == "":
            own[""] = parts[2]
        for ctrl in parts[1].split(","):
            if ctrl:
                own[ctrl] = parts[2]
    return own


def _place(mount_root: str, mount_point: str, own: str) -> Path:
    """The folder of cgroup ``own`` in a hierarchy mounted at ``mount_point`` (from ``mount_root``)."""
    rel = own
    if mount_root != "/" and (own == mount_root or own.startswith(mount_root.rstrip("/") + "/")):
        rel = own[len(mount_root):]
    path = Path(mount_point) / rel.lstrip("/")
    return path if path.is_dir() else Path(mount_point)


def _procs(folder: Path) -> list[int]:
    """The members' pids as this PID namespace numbers them. A member it does not show reads as 0
    in a cgroup2 hierarchy: left out (kill(0) would be this process's own group)."""
    try:
        return [pid for pid in map(int, _read(folder / "cgroup.procs").split()) if pid > 0]
    except (OSError, ValueError):
        return []


def _kill_members(folders: list[Path], rounds: int = 200) -> None:
    """SIGKILL every member until none is left (processes may fork while we look)."""
    for _ in range(rounds):
        pids = {p for f in folders for p in _procs(f)}
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.005)


def _rmdir(path: Path, wait: float = 2.0) -> bool:
    """Remove an (emptied) cgroup folder; its last members may take a moment to exit."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return False
            time.sleep(0.01)


class Group:
    """One submission's cgroup (a folder in each hierarchy used)."""

    def __init__(self, kind: str, folders: dict[str, Path]) -> None:
        self.kind = kind
        self.folders = folders            # "memory", "pids", "cpu" (v1) or "v2"; "freezer", "kill"

    @property
    def procs_files(self) -> list[str]:
        """What the submission's first process writes "0" into (see :func:`join`)."""
        return [str(f / "cgroup.procs") for f in self.folders.values()]

    def _main(self) -> Path:
        return self.folders["v2" if self.kind == "v2" else "memory"]

    def pids(self) -> list[int]:
        return _procs(self._main())

    def add(self, pid: int) -> None:
        for f in self.folders.values():
            _write(f / "cgroup.procs", str(pid))

    def kill(self, wait: float = 2.0) -> None:
        """Kill every process in the group, and wait (up to ``wait`` s) until none is left."""
        main = self._main()
        kill_file = (self.folders.get("kill") or main) / "cgroup.kill"
        done = False
        if kill_file.exists():
            try:
                _write(kill_file, "1")
                done = True
            except OSError:
                pass
        if not done and self.kind == "v2" and (main / "cgroup.freeze").exists():
            try:
                _write(main / "cgroup.freeze", "1")
                _kill_members([main])
            finally:
                _write(main / "cgroup.freeze", "0")
            done = True
        if not done and "freezer" in self.folders:
            state = self.folders["freezer"] / "freezer.state"
            try:
                _write(state, "FROZEN")
                for _ in range(100):
                    if _read(state).strip() == "FROZEN":
                        break
                    time.sleep(0.002)
                _kill_members([self.folders["freezer"]], rounds=1)
            finally:
                _write(state, "THAWED")
        deadline = time.monotonic() + wait
        while self.pids() and time.monotonic() < deadline:
            _kill_members([main], rounds=1)
            time.sleep(0.005)

    def peak_memory(self) -> int | None:
        """The most memory the group ever used, in bytes (None where the kernel does not say)."""
        name = "memory.peak" if self.kind == "v2" else "memory.max_usage_in_bytes"
        try:
            return int(_read(self._main() / name).split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for going over the memory limit."""
        name = "memory.events" if self.kind == "v2" else "memory.oom_control"
        try:
            for line in _read(self._main() / name).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> bool:
        """Kill what is left and remove the folders; True when all of them are gone."""
        if self.pids():
            self.kill()
        ok = True
        for f in self.folders.values():
            ok &= _rmdir(f)
        return ok


class Batch:
    """The batch's own cgroup (one folder per hierarchy), parent of one :class:`Group` per submission."""

    def __init__(self, kind: str, folders: dict[str, Path], undo: list | None = None) -> None:
        self.kind = kind
        self.folders = folders
        self.groups: list[Group] = []
        self._undo = undo or []
        self._lock: tuple[int, Path] | None = None       # held while the batch's cgroup exists

    @property
    def note(self) -> str:
        if self.kind == "v2":
            return ("Each submission ran in its own cgroup (v2): memory.max and pids.max for all its "
                    "processes together, and an equal cpu.weight share.")
        how = "cgroup.kill" if "kill" in self.folders else "the freezer" if "freezer" in self.folders \
            else "killing its members"
        return ("Each submission ran in its own cgroup (v1): memory (with swap) and pids limits for all "
                f"its processes together, and equal cpu.shares; killed at the end with {how}.")

    # ------------------------------------------------------------ finding the hierarchies
    @classmethod
    def open(cls, name: str, prefer: str | None = None, workers: int = 1,
             locks: Path | None = None) -> Batch | None:
        """Make the batch's cgroup; None when this machine gives no usable hierarchy
        (:meth:`opened` says why)."""
        return cls.opened(name, prefer, workers, locks)[0]

    @classmethod
    def opened(cls, name: str, prefer: str | None = None, workers: int = 1,
               locks: Path | None = None) -> tuple[Batch | None, str]:
        """Make the batch's cgroup: (it, its :attr:`note`), or (None, why not) when this machine gives
        no usable hierarchy.

        ``locks``: the grader's lock folder. The batch holds its cgroup's lock file there for as long
        as the cgroup exists, and sweeps the cgroups of the batches whose lock file there is free
        (their graders are gone). Without it nothing is swept, and nothing proves this batch alive
        to others: none of them sweeps its cgroup either.

        The batch's own CPU weight is ``workers`` times the default: its submissions share the
        processors equally among themselves, and together weigh against the rest of the machine
        as much as ``workers`` processes of their own would (one weight for the whole batch would
        halve a two-worker batch's share on a busy machine)."""
        if os.geteuid() != 0:
            return None, "no cgroups: the grader does not run as root"
        try:
            found = mounts()
            own = own_cgroups()
        except OSError as exc:
            return None, f"no cgroups: {exc}"
        # taken before the cgroup is made, let go only once it is removed (:meth:`close`)
        lock = _lock_of(locks, name) if locks is not None else None
        held = lockfiles.take(lock) if lock is not None else None
        if lock is not None and held is None:
            return None, f"no cgroups: another process holds the lock of the cgroup {name}"
        notes = []
        for kind in ([prefer] if prefer else ["v2", "v1"]):
            try:
                batch = (cls._open_v2 if kind == "v2" else cls._open_v1)(name, found, own, locks)
            except (OSError, CgroupUnavailable) as exc:
                notes.append(f"{kind}: {exc}")
                continue
            if held is not None and lock is not None:
                batch._lock = (held[0], lock)
            try:
                if kind == "v2":
                    _write(batch.folders["v2"] / "cpu.weight", str(min(10_000, 100 * max(1, workers))))
                else:
                    _write(batch.folders["cpu"] / "cpu.shares", str(min(262_144, 1024 * max(1, workers))))
            except OSError:
                pass
            return batch, batch.note
        if held is not None and lock is not None:
            lockfiles.drop(held[0], lock)
        return None, "no usable cgroups (" + "; ".join(notes) + ")"

    @classmethod
    def _open_v2(cls, name: str, found: list, own: dict[str, str], locks: Path | None) -> Batch:
        v2 = [m for m in found if m[0] == "cgroup2"]
        if not v2 or "" not in own:
            raise CgroupUnavailable("no cgroup2 hierarchy")
        _fs, root, point, _opts = v2[0]
        here = _place(root, point, own[""])
        available = set(_read(here / "cgroup.controllers").split())
        missing = [c for c in NEEDED if c not in available]
        if missing:
            raise CgroupUnavailable(f"the controllers {', '.join(missing)} are not available in {here}")
        undo: list = []
        if not set(NEEDED) <= set(_read(here / "cgroup.subtree_control").split()):
            try:
                _write(here / "cgroup.subtree_control", " ".join("+" + c for c in NEEDED))
            except OSError:
                # "no internal processes": when the grader is alone in its cgroup (a delegated
                # scope, `systemd-run --scope -p Delegate=yes`), it moves into a leaf of its own
                if set(_procs(here)) != {os.getpid()}:
                    raise CgroupUnavailable(
                        f"{here} holds other processes; controllers can't be enabled below it "
                        "(run the grader in a delegated scope)") from None
                leaf = here / f"{name}-grader"
                leaf.mkdir(exist_ok=True)
                _write(leaf / "cgroup.procs", "0")
                try:
                    _write(here / "cgroup.subtree_control", " ".join("+" + c for c in NEEDED))
                except OSError:
                    _write(here / "cgroup.procs", "0")
                    _rmdir(leaf)
                    raise
                undo = [("leave", here, leaf)]
        batch_dir = here / name
        _sweep_stale([here], locks)
        batch_dir.mkdir()
        try:
            _write(batch_dir / "cgroup.subtree_control", " ".join("+" + c for c in NEEDED))
        except OSError:
            _rmdir(batch_dir)
            raise
        return cls("v2", {"v2": batch_dir}, undo)

    @classmethod
    def _open_v1(cls, name: str, found: list, own: dict[str, str], locks: Path | None) -> Batch:
        folders: dict[str, Path] = {}
        for ctrl in NEEDED + ("freezer",):
            m = [x for x in found if x[0] == "cgroup" and ctrl in x[3]]
            if not m:
                if ctrl == "freezer":
                    continue
                raise CgroupUnavailable(f"no {ctrl} hierarchy")
            _fs, root, point, _opts = m[0]
            folders[ctrl] = _place(root, point, own.get(ctrl, "/"))
        v2 = [x for x in found if x[0] == "cgroup2"]
        if v2:  # a unified hierarchy without controllers still has cgroup.kill (Linux 5.14)
            _fs, root, point, _opts = v2[0]
            here = _place(root, point, own.get("", "/"))
            probe = here / f"{name}-probe"
            try:
                probe.mkdir(exist_ok=True)
                if (probe / "cgroup.kill").exists():
                    folders["kill"] = here
            except OSError:
                pass
            finally:
                _rmdir(probe, wait=0)
        _sweep_stale(list(folders.values()), locks)
        made: dict[str, Path] = {}
        try:
            for key, here in folders.items():
                (here / name).mkdir()
                made[key] = here / name
        except OSError:
            for f in made.values():
                _rmdir(f, wait=0)
            raise
        return cls("v1", made)

    # ------------------------------------------------------------ per submission
    def create(self, name: str, memory_bytes: int, max_tasks: int, cpu_weight: int = 100) -> Group:
        """A submission's cgroup with its limits (all its processes and threads together)."""
        folders = {key: parent / name for key, parent in self.folders.items()}
        for f in folders.values():
            f.mkdir(exist_ok=True)
        group = Group(self.kind, folders)
        try:
            if self.kind == "v2":
                g = folders["v2"]
                _write(g / "memory.max", str(memory_bytes))
                if (g / "memory.swap.max").exists():
                    _write(g / "memory.swap.max", "0")
                _write(g / "pids.max", str(max_tasks))
                _write(g / "cpu.weight", str(cpu_weight))
            else:
                m = folders["memory"]
                _write(m / "memory.limit_in_bytes", str(memory_bytes))
                if (m / "memory.memsw.limit_in_bytes").exists():
                    _write(m / "memory.memsw.limit_in_bytes", str(memory_bytes))
                _write(folders["pids"] / "pids.max", str(max_tasks))
                _write(folders["cpu"] / "cpu.shares", str(max(2, cpu_weight * 1024 // 100)))
        except OSError:
            group.remove()
            raise
        self.groups.append(group)
        return group

    def close(self) -> None:
        """Remove every group and the batch's cgroup (killing anything still in them), then let its
        lock go: removed with the cgroup, or left free where a folder could not be removed, so that
        the next batch sweeps what is left."""
        gone = True
        for g in self.groups:
            gone &= g.remove()
        self.groups = []
        for f in self.folders.values():
            gone &= _rmdir(f)
        for action, here, leaf in self._undo:
            if action == "leave":
                try:
                    _write(here / "cgroup.subtree_control", " ".join("-" + c for c in NEEDED))
                    _write(here / "cgroup.procs", "0")
                    gone &= _rmdir(leaf)
                except OSError:
                    gone = False
        self._undo = []
        if self._lock is not None:
            fd, path = self._lock
            if gone:
                lockfiles.drop(fd, path)
            else:
                os.close(fd)
            self._lock = None


class CgroupUnavailable(RuntimeError):
    """This kind of cgroup can't be used here."""


def _owner(folder: str) -> str:
    """The batch a ``course-grade-...`` folder belongs to (its own, or one it made beside it)."""
    for suffix in SIBLINGS:
        if folder.endswith(suffix):
            return folder[:-len(suffix)]
    return folder


def _sweep_stale(heres: list[Path], locks: Path | None) -> None:
    """Remove the batch cgroups (in every hierarchy ``heres``) whose graders are gone: those whose lock
    file is in ``locks`` and free. Never one without it: a pid cannot say whether a grader in
    another PID namespace lives, and a cgroup this grader cannot prove dead may hold another batch's
    running submissions."""
    if locks is None:
        return
    owners: dict[str, list[Path]] = {}
    for here in heres:
        try:
            entries = list(here.iterdir())
        except OSError:
            continue
        for p in entries:
            if p.name.startswith(PREFIX) and p.is_dir():
                owners.setdefault(_owner(p.name), []).append(p)
    for owner, folders in owners.items():
        lock = _lock_of(locks, owner)
        with lockfiles.left_behind(lock) as gone:
            if not gone:
                continue
            removed = True
            for p in folders:
                try:
                    children = [c for c in p.iterdir() if c.is_dir()]
                except OSError:
                    children = []
                for folder in [*children, p]:
                    # cgroup.kill reaches the members this PID namespace does not show, too
                    if (folder / "cgroup.kill").exists():
                        try:
                            _write(folder / "cgroup.kill", "1")
                        except OSError:
                            pass
                    _kill_members([folder], rounds=20)
                    removed &= _rmdir(folder, wait=0.5)
            if removed:
                lock.unlink(missing_ok=True)


def join(procs_files: list[str]) -> None:
    """Move the calling process into its cgroup (in every hierarchy): its children follow it."""
    for path in procs_files:
        with open(path, "w") as f:
            f.write("0")
