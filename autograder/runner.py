"""The process that executes submissions: a fork server ("zygote") and the child that runs one notebook.

The zygote imports torch, numpy, matplotlib and the ``course`` package once, then forks one child
per submission, so that no submission pays for those imports. It never reads tests, solutions or
submissions. The grader talks to it over a socket: a job (JSON) plus the two pipe ends of that
job's child; the zygote answers with the child's pid and, later, its exit status.

The child closes the zygote's socket, walls itself in (:mod:`autograder.sandbox`), reads and checks
the notebook, snapshots torch / numpy / math / builtins / course, executes the code cells (IPython
syntax turned into plain Python, ``%``/``!`` lines made harmless, ``otter_ignore`` cells skipped,
a time limit per cell, output kept up to a cap), and tells the grader it is done. Only then does
the grader send the test files and a random nonce; the child runs every test case against the
notebook's namespace, reports each result with the nonce, checks the snapshot again, and exits.

Messages child -> grader are JSON lines on the ``msg`` pipe; the grader -> child message is one JSON
line on the ``ctl`` pipe.
"""
from __future__ import annotations

import builtins
import io
import json
import os
import re
import signal
import socket
import sys
import traceback
import types
from typing import Any

PRELOAD = ["numpy", "torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch._dynamo", "matplotlib",
           "matplotlib.pyplot", "course", "course.plots",
           "course.training", "course.stories", "IPython.core.inputtransformer2"]
OUTPUT_CAP = 64 * 1024
MESSAGE_CAP = 4000


# ---------------------------------------------------------------- zygote

def zygote_main(sock_fd: int) -> None:
    """Serve fork requests on ``sock_fd`` until it closes."""
    import selectors

    os.environ.setdefault("MPLBACKEND", "Agg")
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            pass
    from . import sandbox
    sandbox.set_child_subreaper()
    sock = socket.socket(fileno=sock_fd)
    sock.setblocking(True)
    jobs: dict[int, str] = {}
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    sock.send(json.dumps({"t": "up"}).encode())
    while True:
        for _key, _ in sel.select(timeout=0.05):
            msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 4)
            if not msg:
                _reap(jobs, sock)
                os._exit(0)
            job = json.loads(msg)
            pid = os.fork()
            if pid == 0:
                sock.close()
                code = 70
                try:
                    code = child_main(job, fds[0], fds[1])
                except BaseException as exc:
                    code = 71
                    tb = traceback.format_exc(limit=8)[-1500:]
                    try:
                        os.write(fds[0], (json.dumps({"t": "fatal", "reason": f"grader error: {_short(exc)}",
                                                      "traceback": tb}) + "\n").encode())
                    except OSError:
                        pass
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            jobs[pid] = job["id"]
            sock.send(json.dumps({"t": "pid", "id": job["id"], "pid": pid}).encode())
        _reap(jobs, sock)


def _reap(jobs: dict[int, str], sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in jobs:
            job_id = jobs.pop(pid)
            try:
                sock.send(json.dumps({"t": "exit", "id": job_id, "status": status}).encode())
            except OSError:
                pass


# ---------------------------------------------------------------- the child

class CellTimeout(BaseException):
    """A cell or a test case ran over its time limit (BaseException: `except Exception` won't catch it)."""


class CappedWriter(io.TextIOBase):
    """A text stream that keeps the first ``cap`` characters written to it and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def write(self, s: str) -> int:
        s = str(s)
        n = len(s)
        if self.kept < self.cap:
            piece = s[: self.cap - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        self.total += n
        return n

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1

    def text(self) -> str:
        out = "".join(self.parts)
        if self.total > self.kept:
            out += f"\n[... output cut: {self.total - self.kept} more characters]"
        return out


class _Channel:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._write = os.write
        self._dumps = json.dumps

    def send(self, **msg: Any) -> None:
        data = (self._dumps(msg) + "\n").encode()
        while data:
            n = self._write(self.fd, data)
            data = data[n:]


class _Stub:
    """Does nothing, whatever is asked of it (the notebook's ``grader`` and friends)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return _Stub()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return None

    def __repr__(self) -> str:
        return ""


class _Shell:
    """A stand-in for ``get_ipython()``: magics and shell commands do nothing, except that the
    bodies of ``%%time``/``%%capture``-like cell magics and ``%time`` statements still run."""

    RUN_BODY = {"time", "timeit", "capture", "prun"}

    def __init__(self, env: dict) -> None:
        self._env = env

    def run_line_magic(self, name: str, line: str, *args: Any) -> None:
        if name in self.RUN_BODY and line.strip():
            exec(compile(line, "<magic>", "exec"), self._env)

    def run_cell_magic(self, name: str, line: str, body: str) -> None:
        if name in self.RUN_BODY:
            exec(compile(body, "<magic>", "exec"), self._env)

    def system(self, *args: Any, **kwargs: Any) -> None:
        return None

    def getoutput(self, *args: Any, **kwargs: Any) -> list:
        return []

    def __getattr__(self, name: str) -> Any:
        return _Stub()


def _otter_stub() -> types.ModuleType:
    mod = types.ModuleType("otter")
    mod.Notebook = _Stub  # type: ignore[attr-defined]
    mod.__path__ = []  # type: ignore[attr-defined]
    mod.__version__ = "stub"  # type: ignore[attr-defined]
    return mod


def read_notebook(data: bytes) -> tuple[list[dict] | None, str | None]:
    """The code cells of a notebook, or why it cannot be graded."""
    if not data.strip():
        return None, "unreadable notebook: empty file"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "unreadable notebook: not valid JSON (not UTF-8 text)"
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError):
        return None, "unreadable notebook: not valid JSON"
    if not isinstance(nb, dict):
        return None, "unreadable notebook: not a notebook (JSON is not an object)"
    major = nb.get("nbformat")
    if "worksheets" in nb or (isinstance(major, int) and major < 4):
        old = major if isinstance(major, int) else 3
        return None, f"unreadable notebook: nbformat {old} is too old (needs 4)"
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return None, "unreadable notebook: not a notebook (no cells)"
    if major is not None and major != 4:
        return None, f"unreadable notebook: unknown nbformat {major!r}"
    code = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            return None, f"unreadable notebook: cell {i + 1} is not a cell"
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        if isinstance(src, list):
            if not all(isinstance(s, str) for s in src):
                return None, f"unreadable notebook: cell {i + 1} has a bad source"
            src = "".join(src)
        if not isinstance(src, str):
            return None, f"unreadable notebook: cell {i + 1} has a bad source"
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
        code.append({"index": i + 1, "source": src, "ignore": "otter_ignore" in tags})
    return code, None


CHECK_RE = re.compile(r"""\.check\(\s*["']([A-Za-z_][\w\-]*)["']""")  # as in assignment.py


def _seed_everything() -> None:
    import random

    import numpy as np
    import torch
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


def _alarm(seconds: float) -> None:
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.0))


def _on_alarm(signum: int, frame: Any) -> None:
    raise CellTimeout()


def _arm_signals() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGALRM, _on_alarm)


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= 500 else text[:500] + "..."


def child_main(job: dict, msg_fd: int, ctl_fd: int) -> int:
    """Run one submission (in the zygote's forked child). Returns the exit code."""
    os.setsid()
    chan = _Channel(msg_fd)
    from . import sandbox
    from .snapshot import Snapshot

    with open(job["staging"], "rb") as f:
        data = f.read()
    try:
        sandbox.enter(job["sandbox"], job["notebook_name"], data)
    except Exception as exc:
        chan.send(t="fatal", reason=f"sandbox setup failed: {exc}")
        return 3
    os.environ.update(job["env"])
    import tempfile
    tempfile.tempdir = None  # the zygote's choice came from its own TMPDIR
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    chan.send(t="ready")

    cells, problem = read_notebook(data)
    del data
    if problem is not None:
        chan.send(t="unreadable", reason=problem)
        return 0

    repo = job["repo"]
    if repo not in sys.path:
        sys.path.insert(0, repo)
    sys.modules["otter"] = _otter_stub()
    import torch
    torch.set_num_threads(1)
    from IPython.core.inputtransformer2 import TransformerManager
    transform = TransformerManager().transform_cell

    out = CappedWriter(OUTPUT_CAP)
    env: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    env["get_ipython"] = lambda: shell
    env["display"] = lambda *objs, **kw: print(*[repr(o)[:10000] for o in objs], file=out)
    shell = _Shell(env)
    pristine = Snapshot.take()
    run_case = _make_case_runner(pristine, chan)

    sys.stdout = sys.stderr = out  # type: ignore[assignment]
    sys.stdin = io.StringIO()
    sys.argv = [job["notebook_name"]]
    errors: list[dict] = []
    checks: set[str] = set()
    cell_timeout = job["cell_timeout"]
    _seed_everything()
    for cell in cells:
        checks.update(CHECK_RE.findall(cell["source"]))
        if cell["ignore"]:
            continue
        chan.send(t="cell", i=cell["index"])
        try:
            code = compile(transform(cell["source"]), f"<cell {cell['index']}>", "exec")
        except BaseException as exc:  # SyntaxError and friends
            errors.append({"cell": cell["index"], "kind": "error", "error": _short(exc)})
            continue
        _arm_signals()
        try:
            _alarm(cell_timeout)
            exec(code, env)
            _alarm(0)
        except CellTimeout:
            errors.append({"cell": cell["index"], "kind": "timeout", "error": f"ran over {cell_timeout:g} s"})
        except SystemExit as exc:
            _alarm(0)
            errors.append({"cell": cell["index"], "kind": "exit", "error": f"sys.exit({exc.code!r}) called"})
        except MemoryError:
            _alarm(0)
            errors.append({"cell": cell["index"], "kind": "memory", "error": "MemoryError"})
        except BaseException as exc:
            _alarm(0)
            kind = "memory" if "memory" in str(exc).lower() and "alloc" in str(exc).lower() else "error"
            errors.append({"cell": cell["index"], "kind": kind, "error": _short(exc)})
        finally:
            _alarm(0)
    _alarm(0)
    sys.settrace(None)
    sys.setprofile(None)
    tamper = pristine.compare()
    chan.send(t="cells_done", errors=errors, checks=sorted(checks), output=out.text(), tamper=tamper)

    # The tests arrive only now.
    buf = b""
    while not buf.endswith(b"\n"):
        piece = os.read(ctl_fd, 1 << 16)
        if not piece:
            return 4
        buf += piece
    os.close(ctl_fd)
    ctl = json.loads(buf)
    nonce = ctl["nonce"]
    for test in ctl["tests"]:
        run_case(test, env, nonce, ctl["case_timeout"])
    tamper_after = pristine.compare()
    chan.send(t="done", nonce=nonce, tamper=tamper_after)
    return 0


def _make_case_runner(pristine: Any, chan: _Channel) -> Any:
    """A test runner built from references taken before any student code ran."""
    exec_ = exec
    compile_ = compile
    isinstance_ = isinstance
    b_dict = dict(vars(builtins))
    seed = _seed_everything
    short = _short
    tb_extract = traceback.extract_tb
    arm = _arm_signals
    alarm = _alarm
    inspect_sig = __import__("inspect").signature

    class _Case:
        def __init__(self, **kw: Any) -> None:
            self.kw = kw
            self.func: Any = None

        def __call__(self, func: Any) -> _Case:
            self.func = func
            return self

    def run_file(test: dict, env: dict, nonce: str, timeout: float) -> None:
        q = test["question"]
        filename = f"<test {q}>"
        lines = test["source"].split("\n")
        chan.send(t="test", q=q, nonce=nonce)
        glob: dict[str, Any] = {"__builtins__": b_dict, "__name__": f"test_{q}", "test_case": _Case}
        seed()
        try:
            exec_(compile_(test["source"], filename, "exec"), glob)
            cases = [v for v in glob.values() if isinstance_(v, _Case)]
        except BaseException as exc:  # a broken test file: every case fails
            cases = []
            msg = "the test file did not load: " + short(exc)
            for i in range(test["cases"]):
                chan.send(t="case", q=q, i=i, passed=False, message=msg, nonce=nonce)
            return
        for i, case in enumerate(cases):
            seed()
            params = list(inspect_sig(case.func).parameters)
            missing = [p for p in params if p != "env" and p not in env]
            kwargs = {p: (env if p == "env" else env.get(p)) for p in params}
            arm()
            try:
                alarm(timeout)
                case.func(**kwargs)
                alarm(0)
                passed, message = True, "Test case passed"
            except CellTimeout:
                passed, message = False, f"Test case failed: it ran over {timeout:g} s"
            except BaseException as exc:
                alarm(0)
                line_no = None
                for fr in tb_extract(exc.__traceback__):
                    if fr.filename == filename:
                        line_no = fr.lineno
                passed = False
                message = "Test case failed"
                if line_no is not None and 0 < line_no <= len(lines):
                    message += f"\nError at line {line_no} in test {q}:\n  {lines[line_no - 1].strip()}"
                message += "\n" + short(exc)
                if missing:
                    message += "\n(not defined in the notebook: " + ", ".join(missing) + \
                               " -- was its cell deleted or not run?)"
            finally:
                alarm(0)
            chan.send(t="case", q=q, i=i, passed=passed, message=message[:MESSAGE_CAP], nonce=nonce)

    return run_file


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        zygote_main(int(sys.argv[2]))
    else:
        print("usage: python -m autograder.runner --zygote FD (started by autograder.grade)", file=sys.stderr)
        sys.exit(2)
