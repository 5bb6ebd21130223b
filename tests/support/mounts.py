"""Small file systems that say no, for the tests of the grader's refusals: a full tmpfs, a read-only
bind mount, a private mount namespace (``unshare -m``: /var/tmp full for one command only), and
strace's fault injection (one errno on one path).

They need root (mount rights) and ``strace``. Where either is missing those tests skip, except under
CI (the environment variable ``CI`` set): there they fail, so that CI never passes with the
refusals untested (``apt-get install strace`` where it is missing; CI runs as root).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

CI = bool(os.environ.get("CI"))


def _mount_problem() -> str | None:
    """Why a tmpfs cannot be mounted here, or None."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    with tempfile.TemporaryDirectory() as d:
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                              capture_output=True, text=True)
        if made.returncode != 0:
            return f"mount -t tmpfs is refused here ({made.stderr.strip()[:120]})"
        subprocess.run(["umount", d], check=True)
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    return None


MOUNT_PROBLEM = _mount_problem()
STRACE = shutil.which("strace")
needs_mount = pytest.mark.skipif(MOUNT_PROBLEM is not None and not CI,
                                 reason=f"{MOUNT_PROBLEM}; with CI set, this fails")
needs_strace = pytest.mark.skipif(STRACE is None and not CI,
                                  reason="strace is not installed (apt-get install strace); with CI set, "
                                         "this fails")


def check_mount() -> None:
    """Fails the test when nothing can be mounted (reached only under CI)."""
    if MOUNT_PROBLEM is not None:
        pytest.fail(f"{MOUNT_PROBLEM}, and CI needs it: run the tests as root")


def check_strace() -> str:
    if STRACE is None:
        pytest.fail("strace is not installed, and CI needs it: apt-get install strace")
    return STRACE


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``where`` (made if missing), unmounted after."""
    check_mount()
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(where: Path) -> None:
    """Every free block of the file system of ``where`` taken by one file."""
    with open(where / ".filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


@contextlib.contextmanager
def read_only(where: Path) -> Iterator[Path]:
    """``where`` bound read-only onto itself, unmounted after."""
    check_mount()
    subprocess.run(["mount", "--bind", str(where), str(where)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def tree(folder: Path) -> dict[str, bytes]:
    """{path below ``folder``: its bytes} of every file (what "left as it was" compares)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


# In the namespace: /tmp and /var/tmp replaced by empty tmpfs, as systemd's PrivateTmp and Slurm's
# job_container/tmpfs do, and what must stay (the test's own folder, and the repository with its venv
# when it lies below /tmp, as a fresh clone's may) bound back at its own path through a descriptor
# opened before (a path would lead into the new, empty /tmp).
REPO = Path(__file__).resolve().parents[2]


def _kept(keep: Path) -> list[str]:
    """``keep`` and the repository, where they lie below /tmp or /var/tmp, none inside another."""
    paths: list[str] = []
    for p in (Path(keep).resolve(), REPO):
        if any(p == Path(t) or Path(t) in p.parents for t in ("/tmp", "/var/tmp")) and str(p) not in paths:
            paths.append(str(p))
    return [p for p in paths if not any(q != p and Path(q) in Path(p).parents for q in paths)]


def _private_tmp_script(n: int, first: str) -> str:
    opened = "".join(f'exec {3 + i}<"${i + 1}" && ' for i in range(n))
    bound = "".join(f'mkdir -p "${i + 1}" && mount --no-canonicalize --bind /proc/self/fd/{3 + i} "${i + 1}" '
                    f'&& exec {3 + i}<&- && ' for i in range(n))
    return (f"{opened}mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /var/tmp && {bound}"
            f"shift {n} && {first}\"$@\"")


def private_tmp(argv: list[str], keep: Path, pid_namespace: bool = False, first: str = "") -> list[str]:
    """``argv`` run in a mount namespace of its own whose /tmp and /var/tmp are empty and its own, with
    ``keep`` (a folder below /tmp: the test's) and the repository still there; in a PID namespace of
    its own too where ``pid_namespace`` (its /proc shows its own processes only), ``first`` (shell)
    run before it."""
    check_mount()
    pid = ["--pid", "--fork", "--mount-proc"] if pid_namespace else []
    kept = _kept(keep)
    return ["unshare", "--mount", *pid, "--propagation", "private", "sh", "-c",
            _private_tmp_script(len(kept), first), "sh", *kept, *argv]
