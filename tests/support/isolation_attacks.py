"""Attacks on the isolation of ``course grade``, as real notebooks and uploads of the toy assignment.

Each builder returns notebook (or zip) bytes; the tests in ``test_isolation.py`` grade them in
batches beside honest rows through the real command. What the attacks print is read back from the
rows' ``results/*.json`` ``output``.
"""
from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from hostile import BLANK, SOLUTION, replace_answer, with_cells, zip_of

IPC_KEY = 0x1C0FFEE                      # the SysV IPC key the attacks use
MARK = "iso-leftover"                    # in the names of the files they leave behind
SLEEPER = "613.5151"                     # a daemon's unusual sleep, to find it afterwards
KEY_NAME = "iso-leftover-key"            # the name of the key they leave in the user key ring

# ---------------------------------------------------------------- the message pipe and the answer pipe

PIPES = """
import fcntl, os, stat
def _pipes(mode):
    out = []
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == mode:
                out.append(fd)
        except OSError:
            pass
    return out
MSG, ANS = _pipes(os.O_WRONLY)[0], _pipes(os.O_WRONLY)[-1]
"""

MALFORMED: dict[str, tuple[str, str]] = {
    # name: (what the cell writes, the start of the row's status)
    "m_deep_nesting": ('os.write(MSG, b"[" * 100000 + b"\\n")', "a message nested too deeply"),
    "m_wrong_types": ('os.write(MSG, b\'{"t": "cells_done", "tamper": 1}\\n\')',
                      "a 'cells_done' message without 'errors'"),
    "m_wrong_field_types": ('os.write(MSG, b\'{"t": "cells_done", "errors": 5, "output": [], '
                            '"tamper": 1}\\n\')', "errors is not a list"),
    "m_wrong_cell_type": ('os.write(MSG, b\'{"t": "cell", "i": "1; rm -rf /"}\\n\')',
                          "i is not a cell number"),
    "m_unknown_kind": ('os.write(MSG, b\'{"t": "case", "q": "q1", "i": 0, "passed": true}\\n\')',
                       "an unknown message 'case'"),
    "m_not_an_object": ('os.write(MSG, b"[1, 2, 3]\\n")', "a message without a kind"),
    "m_truncated": ('os.write(MSG, b\'{"t": "cells_done", "errors": [\\n\')', "a message that is not JSON"),
    "m_not_utf8": ('os.write(MSG, b"\\xff\\xfe\\x00garbage\\n")', "a message that is not JSON"),
    "m_huge_line": ('os.write(MSG, b\'{"t": "fatal", "reason": "\' + b"x" * (3 * 2**20) + b\'"}\\n\')',
                    "a message too long"),
    "m_never_ending_line": ("data = b'x' * 2**20\nfor _ in range(40):\n    os.write(MSG, data)",
                            "a message too long"),
    "m_out_of_order": ('os.write(MSG, b\'{"t": "done", "tamper": []}\\n\')', "a 'done' message out of order"),
}
MALFORMED_STATUS = "tampering detected: malformed message from the notebook's process ({})"

TRUNCATED_AT_EXIT = PIPES + 'os.write(MSG, b\'{"t": "cells_done", "err\')\nos._exit(0)'
GARBAGE_ANSWERS = PIPES + 'os.write(ANS, b"\\xff" * 64 + b"garbage that is no frame")'


def malformed(name: str) -> bytes:
    """The solution with one malformed message written in a cell before the answers."""
    return with_cells([PIPES + MALFORMED[name][0]])


# ---------------------------------------------------------------- the fork server's descriptors

EPOLL = """
import os, select
seen = []
for fd in sorted(int(x) for x in os.listdir('/proc/self/fd')):
    try:
        target = os.readlink(f'/proc/self/fd/{fd}')
    except OSError:
        continue
    seen.append(target.split('[')[0])
    if 'eventpoll' in target:            # the fork server's epoll: make it always ready
        ep = select.epoll.fromfd(fd)
        ep.register(os.eventfd(1), select.EPOLLIN)
        seen.append('REGISTERED')
print('DESCRIPTORS', sorted(seen))
"""

# ---------------------------------------------------------------- resources of the whole tree

MEMORY = """
import subprocess, sys
hold = ("import sys, time\\nx = bytearray(900 * 2**20)\\nfor i in range(0, len(x), 4096):\\n    x[i] = 1\\n"
        "print('held', flush=True)\\ntime.sleep(60)")
procs = [subprocess.Popen([sys.executable, '-c', hold], stdout=subprocess.PIPE, start_new_session=True)
         for _ in range(3)]
said = [p.stdout.readline().strip().decode() for p in procs]
for p in procs:
    p.kill()
    p.wait()
print('HELD', said.count('held'), 'OF', len(procs))
"""

HOG = "import time\\nend = time.time() + 15.25\\nwhile time.time() < end: pass"   # 15 s of busy work
CPU_HOG = f"""
import subprocess, sys
for _ in range(40):
    subprocess.Popen([sys.executable, '-c', '{HOG}'], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""
SLEEP = "import time\ntime.sleep({s})"

# ---------------------------------------------------------------- what one submission leaves for the next

LEAVE = f"""
import ctypes, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
left = []
shmid = libc.shmget({IPC_KEY}, 16 * 2**20, 0o1666)
if shmid >= 0:
    addr = libc.shmat(shmid, None, 0)
    ctypes.memmove(addr, b'a classmate secret', 18)
    left.append('shm')
if libc.msgget({IPC_KEY} + 1, 0o1666) >= 0:
    left.append('msg')
if libc.semget({IPC_KEY} + 2, 1, 0o1666) >= 0:
    left.append('sem')
for d in ('/tmp', '/var/tmp', '/dev/shm', '/run/lock'):
    with open(f'{{d}}/{MARK}-{{os.getpid()}}', 'w') as f:
        f.write('a classmate secret ' * 1000)
    left.append(d)
libc.syscall.restype = ctypes.c_long
for ring in (-4, -5):                    # the user and user-session key rings
    if libc.syscall(ctypes.c_long(248), b'user', b'{KEY_NAME}', b'a classmate secret', ctypes.c_long(18),
                    ctypes.c_long(ring)) > 0:
        left.append(('key', ring))
subprocess.Popen(['sleep', '{SLEEPER}'], start_new_session=True)
print('LEFT', left)
"""

FIND = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
found = []
if libc.shmget({IPC_KEY}, 0, 0) >= 0:
    found.append('shm')
if libc.msgget({IPC_KEY} + 1, 0) >= 0:
    found.append('msg')
if libc.semget({IPC_KEY} + 2, 0, 0) >= 0:
    found.append('sem')
for kind in ('shm', 'msg', 'sem'):
    with open(f'/proc/sysvipc/{{kind}}') as f:
        rows = f.read().splitlines()[1:]
    if rows:
        found.append((kind, len(rows)))
with open('/proc/self/mountinfo') as f:
    mounts = [line.split()[4] for line in f]       # the grader's own read-only view is mounted
for d in ('/tmp', '/var/tmp', '/dev/shm', '/run/lock'):
    try:
        names = os.listdir(d)
    except OSError:
        continue
    for n in names:                                  # (a repository cloned under /tmp shows there)
        p = os.path.join(d, n)
        if not any(m == p or m.startswith(p + '/') for m in mounts):
            found.append((d, n))
for ring in (-4, -5):
    if libc.syscall(ctypes.c_long(250), ctypes.c_long(10), ctypes.c_long(ring), b'user', b'{KEY_NAME}',
                    ctypes.c_long(0)) > 0:
        found.append(('key', ring))
with open('/proc/keys') as f:
    found += [line for line in f if '{KEY_NAME}' in line]
for pid in os.listdir('/proc'):
    try:
        with open(f'/proc/{{pid}}/cmdline', 'rb') as f:
            if b'{SLEEPER}' in f.read():
                found.append(('process', pid))
    except OSError:
        pass
print('FOUND', found)
"""

# ---------------------------------------------------------------- other submissions' names

NAMES = """
import gc, os, sys
names = {names!r}
texts = []
for pid in os.listdir('/proc'):
    for part in ('cmdline', 'environ'):
        try:
            with open(f'/proc/{{pid}}/{{part}}', 'rb') as f:
                texts.append(f.read().decode(errors='replace'))
        except OSError:
            pass
jobs = [o for o in gc.get_objects() if isinstance(o, dict) and ('sandbox' in o or 'staging' in o)]
frame = sys._getframe()
while frame is not None:
    jobs += [v for k, v in frame.f_locals.items() if k in ('job', 'spec', 'msg') and isinstance(v, dict)]
    frame = frame.f_back
texts += [repr(j) for j in jobs]
texts += os.listdir('/') + os.listdir(os.path.dirname(os.getcwd()))
print('PROCESSES', sorted(p for p in os.listdir('/proc') if p.isdigit()))
print('JOBS', len(jobs), sorted({{k for j in jobs for k in j}}))
print('LEAKED', sorted({{n for n in names for t in texts if n in t}}))
"""


def names_probe(other_names: list[str]) -> bytes:
    return with_cells(after=[NAMES.format(names=other_names)])


# ---------------------------------------------------------------- uploads

def bomb(members: int = 6, size: int = 256 * 2**20) -> bytes:
    """A zip of ``members`` members of ``size`` zero bytes each, a few KB in all (deflated once,
    the same compressed stream written under every name)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(2**20)
    parts, crc = [], 0
    for _ in range(size // len(chunk)):
        parts.append(comp.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    parts.append(comp.flush())
    data = b"".join(parts)
    out, central = bytearray(), bytearray()
    for k in range(members):
        name = f"part{k}.ipynb".encode()
        offset = len(out)
        out += struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size, len(name), 0)
        out += name + data
        central += struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(data), size,
                               len(name), 0, 0, 0, 0, 0, offset) + name
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, members, members, len(central), len(out), 0)
    return bytes(out + central + end)


def deflated_zip_of(members: dict[str, bytes]) -> bytes:
    """A zip of deflated members (as Canvas's bulk download is)."""
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def many_entries(n: int = 25_000) -> bytes:
    """A zip whose directory lists ``n`` tiny files (one notebook among them)."""
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("hw.ipynb", SOLUTION.read_bytes())
        for k in range(n - 1):
            zf.writestr(f"junk/{k}.txt", b"")
    return buf.getvalue()


def class_files() -> dict[str, bytes]:
    """The honest rows every batch holds (graded alone too, for comparison)."""
    return {
        "a1_honest_correct.ipynb": SOLUTION.read_bytes(),
        "a2_honest_blank.ipynb": BLANK.read_bytes(),
        "a3_honest_buggy.ipynb": replace_answer("Softmax", "def Softmax(x):\n    e = torch.exp(x)\n"
                                                          "    return e / e.sum(0, keepdim=True)\n"),
    }


def write(folder: Path, files: dict[str, bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


__all__ = ["BLANK", "SOLUTION", "with_cells", "zip_of"]
