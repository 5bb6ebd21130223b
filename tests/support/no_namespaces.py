"""Run a command with new namespaces refused, as Docker's default seccomp profile refuses them.

    python tests/support/no_namespaces.py COMMAND [ARG...]

Installs a seccomp filter (libseccomp, through ctypes: Debian's libseccomp2, which systemd and apt
already need) that makes ``unshare``, ``setns``, ``mount``, ``umount2`` and ``pivot_root`` fail with
EPERM, then executes COMMAND. The filter is inherited by every process COMMAND starts and cannot
be removed, so the grader's probe (:func:`autograder.sandbox.detect_mode`) meets a real refusal from
the kernel, as in a Gradescope container. The filter is installed without ``no_new_privs`` when
the caller is root (CAP_SYS_ADMIN), so root's privileges are otherwise kept: the grader can still
change to the sandbox's uid.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys

REFUSED = ("unshare", "setns", "mount", "umount2", "pivot_root")
SCMP_ACT_ALLOW = 0x7FFF0000


def SCMP_ACT_ERRNO(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def install() -> None:
    path = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    lib = ctypes.CDLL(path, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    if os.geteuid() == 0:
        SCMP_FLTATR_CTL_NNP = 3
        if lib.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0:
            raise OSError("seccomp_attr_set(NNP) failed")
    for name in REFUSED:
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr < 0:
            continue
        if lib.seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errno.EPERM), nr, 0) != 0:
            raise OSError(f"seccomp_rule_add({name}) failed")
    if lib.seccomp_load(ctx) != 0:
        raise OSError("seccomp_load failed")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    install()
    os.execvp(argv[0], argv)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
