"""Is the grader in the user namespace its pod asked for? If not, it gives up CAP_SYS_ADMIN.

A Kubernetes pod with ``hostUsers: false`` runs in a user namespace of its own: its root is an
unprivileged user on the node, and the ``SYS_ADMIN`` capability the manifest grants (for the
isolated mode's namespaces) holds inside that namespace only. A runtime without user namespaces
(containerd 1.6, a node whose kubelet lacks the feature) ignores the field without a word, and the
container's root is then the node's root with ``SYS_ADMIN`` and no seccomp or AppArmor profile.

``course kubernetes`` sets :data:`EXPECT` in such pods. :func:`enforce` then reads
``/proc/self/uid_map``: in the node's own user namespace (uid 0 mapped to uid 0, the whole range),
it drops ``CAP_SYS_ADMIN`` from this thread's bounding, effective, permitted and inheritable sets
(and every ambient capability) before anything else starts, so that nothing this process starts
can have it. The sandbox then finds namespaces refused and runs in the mode it can prove
(``user``: a separate uid per submission), and the report says why. Where the capability cannot be
dropped, grading stops rather than run as root with it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

EXPECT = "COURSE_EXPECT_USER_NAMESPACE"
UID_MAP = "/proc/self/uid_map"
CAP_SYS_ADMIN = 21
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPABILITY_VERSION_3 = 0x20080522


class UnsafePod(RuntimeError):
    pass


def in_user_namespace(uid_map: str) -> bool:
    """False for the node's own user namespace: one line mapping 0 to 0 for all 2**32 - 1 ids."""
    rows = [line.split() for line in uid_map.splitlines() if line.strip()]
    return rows != [["0", "0", "4294967295"]]


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_sys_admin() -> None:
    """CAP_SYS_ADMIN out of this thread's capability sets, for good (and no ambient ones)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0:
        raise UnsafePod(f"cannot drop CAP_SYS_ADMIN from the bounding set: {os.strerror(ctypes.get_errno())}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = _Header(CAPABILITY_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise UnsafePod(f"cannot read the capabilities: {os.strerror(ctypes.get_errno())}")
    bit = ~(1 << CAP_SYS_ADMIN) & 0xFFFFFFFF
    data[0].effective &= bit
    data[0].permitted &= bit
    data[0].inheritable &= bit
    if libc.capset(ctypes.byref(header), data) != 0:
        raise UnsafePod(f"cannot drop CAP_SYS_ADMIN: {os.strerror(ctypes.get_errno())}")
    if has_sys_admin():
        raise UnsafePod("CAP_SYS_ADMIN is still held after dropping it")


def has_sys_admin() -> bool:
    """Whether this thread still has CAP_SYS_ADMIN in any set that reaches what it starts."""
    with open(f"/proc/self/task/{threading.get_native_id()}/status") as f:
        caps = {k: int(v, 16) for k, _, v in (line.partition(":\t") for line in f) if k.startswith("Cap")}
    return any(caps.get(k, 0) >> CAP_SYS_ADMIN & 1 for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb"))


def enforce(uid_map_path: str = UID_MAP) -> list[str]:
    """Where the pod asked for a user namespace (:data:`EXPECT`) and the grader is not in one: drop
    CAP_SYS_ADMIN; the report's warning (empty when nothing was asked or all is as asked).
    UnsafePod when the capability cannot be dropped."""
    if os.environ.get(EXPECT) != "1":
        return []
    try:
        with open(uid_map_path) as f:
            uid_map = f.read()
    except OSError as exc:
        uid_map = ""
        if not os.path.exists(uid_map_path):
            raise UnsafePod(f"cannot read {uid_map_path}: {exc}") from None
    if in_user_namespace(uid_map):
        return []
    drop_sys_admin()
    return ["The pod asked for a user namespace of its own (hostUsers: false) but runs in the node's "
            f"({uid_map_path}: {' '.join(uid_map.split())}): the container runtime ignored the field. "
            "The grader dropped CAP_SYS_ADMIN and graded without namespaces (mode 'user' at best), "
            "never as the node's root with it. Use a runtime with user namespaces (containerd 2.0+ or "
            "CRI-O 1.25+, Linux 6.3+) for the isolated mode."]
