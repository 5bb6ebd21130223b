"""The process that executes submissions: a fork server ("zygote") and the child that runs one notebook.

The zygote imports torch, numpy, matplotlib and the ``course`` package once (and reads the course's
stories), then forks one child per submission, so that no submission pays for those imports. It never
reads tests, solutions or submissions. The grader talks to it over a socket
(:mod:`autograder.forking`): a job (JSON) plus the pipe ends of that job's child; the zygote answers
with the child's pid and, later, its exit status. At its start it forks the judges' fork server
(:mod:`autograder.judges`), which is handed the tests and forks one *judge* per submission
(:mod:`autograder.judge`): it runs the tests, in the grader's trust domain, sending the requests and
deciding what the answers are worth, and never runs student code.

A *submission* child closes every descriptor but its own pipes, joins its cgroup and walls itself in
(:mod:`autograder.sandbox`: in isolated mode it becomes three processes, the last of which, pid 2 of
a new pid namespace, goes on here), reads the notebook, snapshots torch / numpy / math / builtins /
course, executes the code cells (IPython syntax turned into plain Python, ``%``/``!`` lines made
harmless, ``otter_ignore`` cells skipped, a time limit per cell, output kept up to a cap, the figures
of the cells the grader names drawn to PNG as Jupyter would show them, for the hand-grading pages),
tells the grader it is done, and from then on only *answers requests* (:class:`course.serve.Server`)
that arrive on its ``requests`` pipe, until that pipe closes.

Messages submission -> grader are JSON lines on the ``msg`` pipe; they are progress and
self-reports that can only cost the submission points (the grader checks every field). Requests
and answers are frames of plain data (:mod:`course.wire`).
"""
from __future__ import annotations

import builtins
import io
import json
import os
import signal
import socket
import sys
import time
import types
from typing import Any

from .forking import short as _short
from .notebook import read_notebook

PRELOAD = ["numpy", "torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch._dynamo", "matplotlib",
           "matplotlib.pyplot", "course", "course.plots", "course.data", "course.tinydenoiser", "tqdm.auto",
           "course.training", "course.stories", "course.wire", "course.serve", "course.handles",
           "course.rules", "IPython.core.inputtransformer2",
           # the submission's process needs these after it has entered its new root, where the
           # autograder package (it holds the tests) is not in view
           "autograder.sandbox", "autograder.cgroups", "autograder.snapshot", "tempfile", "random"]
OUTPUT_CAP = 64 * 1024
MESSAGE_CAP = 4000
# figures drawn by the cells whose figures the grader asked for (the manual questions' answers)
FIGURE_DPI = 72                       # as Jupyter's inline backend
FIGURE_PIXELS = 3_000_000             # a larger figure is drawn at a lower resolution
FIGURE_BYTES = 600 * 1024             # one PNG (its base64 fits in one message line)
FIGURES_PER_CELL = 6
FIGURES = 24
FIGURE_TOTAL_BYTES = 4 * 2**20
FIGURE_SECONDS = 30.0


# ---------------------------------------------------------------- zygote

def zygote_main(sock_fd: int, judge_fd: int | None = None) -> None:
    """Serve fork requests for submissions on ``sock_fd`` until it closes (:func:`autograder.forking.
    serve_forks`). First, once for the batch: the imports (:data:`PRELOAD`) and the course's stories
    read (when the grader named their file), then, with ``judge_fd``, the judges' fork server forked
    off (:mod:`autograder.judges`: it alone ever holds the tests)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            pass
    warm_stories()
    from . import forking, sandbox
    sandbox.set_child_subreaper()
    sock = socket.socket(fileno=sock_fd)
    if judge_fd is not None:
        if os.fork() == 0:                        # the judges' fork server
            code = 70
            try:
                sock.close()
                from .judges import judge_server_main
                code = judge_server_main(judge_fd)
            finally:
                os._exit(code)
        os.close(judge_fd)
    forking.send_up(sock)
    forking.serve_forks(sock, _run_child)


def _run_child(job: dict, fds: list[int]) -> int:
    return child_main(job, *fds)


def warm_stories() -> None:
    """Read the course's stories into ``course.stories`` once for the batch, when the grader named
    their file (``COURSE_STORIES_FILE``): every notebook and judge that uses them inherits them
    instead of tokenising 2 MB of text each (the same words either way: the file is the one a
    notebook would read)."""
    if not os.path.isfile(os.environ.get("COURSE_STORIES_FILE", "")):
        return
    try:
        from course import stories
        stories._world()
    except Exception:
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
            exec(compile(self._transform(line), "<magic>", "exec"), self._env)

    def run_cell_magic(self, name: str, line: str, body: str) -> None:
        if name in self.RUN_BODY:
            exec(compile(self._transform(body), "<magic>", "exec"), self._env)

    @staticmethod
    def _transform(source: str) -> str:
        """A magic's body as IPython runs it: these magics pass it through the shell's
        ``transform_cell`` first (prompts stripped, nested magics as calls), and the rules read it
        so (course/rules/magics.py); run raw, ``In [1]: x = y`` would store into ``In`` instead."""
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)

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


class Figures:
    """Captures the matplotlib figures a cell draws, as Jupyter's inline backend shows them: at
    ``plt.show()``, at ``display(fig)``, and at the end of the cell; then closes them all (so each
    cell starts with none, as in Jupyter). Only the cells in ``wanted`` (None: every cell) have
    their figures drawn to PNG and sent to the grader, one ``figure`` message each, within caps on
    size and count; the rest are closed undrawn. It holds its own references to matplotlib's
    functions, taken before any student code ran."""

    def __init__(self, chan: _Channel, wanted: list[int] | None) -> None:
        import base64

        import matplotlib.pyplot as plt
        from matplotlib._pylab_helpers import Gcf
        from matplotlib.figure import Figure
        self.chan = chan
        self.wanted = None if wanted is None else set(wanted)
        self.cell: int | None = None
        self.seen: set[int] = set()
        self.count = 0
        self.total = 0
        self.per_cell: dict[int, int] = {}
        self._managers = Gcf.get_all_fig_managers
        self._close = plt.close
        self._figure_type = Figure
        self._b64 = base64.b64encode
        self._savefig = Figure.savefig

        def show(*args: Any, **kwargs: Any) -> None:     # a function: pyplot sets its __signature__
            self.flush()

        plt.show = show                               # type: ignore[assignment]

    def start(self, cell: int) -> None:
        self.cell = cell
        self.seen = set()

    def display(self, obj: Any) -> bool:
        """``display(obj)``: True when ``obj`` was a figure (captured)."""
        if isinstance(obj, self._figure_type):
            self._guarded(lambda: self._capture(obj))
            return True
        return False

    def flush(self) -> None:
        """Capture every open figure, then close them all."""
        def work() -> None:
            try:
                for manager in list(self._managers()):
                    self._capture(manager.canvas.figure)
            finally:
                self._close("all")
        self._guarded(work)

    def _guarded(self, work: Any) -> None:
        """Run ``work`` under its own time limit; whatever goes wrong costs a note, not the cell."""
        before = signal.getitimer(signal.ITIMER_REAL)[0]     # the cell's time left (0: between cells)
        started = time.monotonic()
        _arm_signals()
        _alarm(min(FIGURE_SECONDS, before) if before > 0 else FIGURE_SECONDS)
        try:
            work()
        except BaseException as exc:                # CellTimeout and anything the student's figure does
            _alarm(0)
            self._note(f"figures could not be drawn: {_short(exc)[:150]}")
        finally:
            _alarm(0)
            if before > 0:                          # the cell's clock goes on where it was
                _alarm(max(before - (time.monotonic() - started), 0.001))

    def _note(self, text: str) -> None:
        if self.cell is not None:
            self.chan.send(t="figure", cell=self.cell, png="", note=text[:200])

    def _capture(self, fig: Any) -> None:
        cell = self.cell
        if cell is None or id(fig) in self.seen or (self.wanted is not None and cell not in self.wanted):
            return
        self.seen.add(id(fig))
        if self.count >= FIGURES or self.per_cell.get(cell, 0) >= FIGURES_PER_CELL:
            self._note("more figures than are kept")
            return
        width, height = (float(x) for x in fig.get_size_inches())
        dpi = float(FIGURE_DPI)
        if width * height * dpi * dpi > FIGURE_PIXELS and width * height > 0:
            dpi = max(8.0, (FIGURE_PIXELS / (width * height)) ** 0.5)
        data = b""
        for _ in range(3):
            buf = io.BytesIO()
            self._savefig(fig, buf, format="png", dpi=dpi)
            data = buf.getvalue()
            if len(data) <= FIGURE_BYTES:
                break
            dpi /= 2
        if len(data) > FIGURE_BYTES:
            self._note(f"a figure too large to keep ({len(data) // 1024} KB)")
            return
        if self.total + len(data) > FIGURE_TOTAL_BYTES:
            self._note("more figure bytes than are kept")
            return
        self.count += 1
        self.total += len(data)
        self.per_cell[cell] = self.per_cell.get(cell, 0) + 1
        self.chan.send(t="figure", cell=cell, png=self._b64(data).decode("ascii"))


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




def child_main(job: dict, msg_fd: int, requests_fd: int, answers_fd: int) -> int:
    """Run one submission (in the zygote's forked child), then answer requests. Returns the exit code.

    Only the setting up, before any of the student's code, is in helpers: the cells run here, as
    deep in the stack as ever, in a namespace whose ``display`` is this function's, and what a tracer
    the student's code leaves behind sees of the grader's calls stays the same."""
    chan = _Channel(msg_fd)
    from .snapshot import Snapshot

    notebook_name, data = _staged(job)
    if not _enter_sandbox(job, chan, notebook_name, data):
        return 3
    # read here (the nesting of JSON the parser takes depends on the depth of the stack)
    cells, problem = read_notebook(data, job.get("setup"))
    del data
    if problem is not None:
        chan.send(t="unreadable", reason=problem)
        return 0
    assert cells is not None                    # read_notebook gives one or the other

    _import_course(job)
    from IPython.core.inputtransformer2 import TransformerManager
    transform = TransformerManager().transform_cell

    out = CappedWriter(OUTPUT_CAP)
    figures = Figures(chan, job.get("figure_cells"))
    env: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    shell: _Shell                               # made below, once display is in env
    env["get_ipython"] = lambda: shell

    def display(*objs: Any, **kw: Any) -> None:
        shown = [o for o in objs if not figures.display(o)]
        if shown:
            print(*[repr(o)[:10000] for o in shown], file=out)

    env["display"] = display
    shell = _Shell(env)
    pristine = Snapshot.take()

    sys.stdout = sys.stderr = out  # type: ignore[assignment]
    sys.stdin = io.StringIO()
    sys.argv = [notebook_name]
    errors: list[dict] = []
    marks: list[list[int]] = []              # where each cell's output starts in ``out``
    cell_timeout = job["cell_timeout"]
    _seed_everything()
    for cell in cells:
        if cell["ignore"]:
            continue
        chan.send(t="cell", i=cell["index"])
        if len(marks) < 2000:
            marks.append([cell["index"], out.kept])
        figures.start(cell["index"])
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
        figures.flush()
    _alarm(0)
    sys.settrace(None)
    sys.setprofile(None)
    chan.send(t="cells_done", errors=errors[:200], output=out.text(), tamper=pristine.compare()[:20],
              marks=marks)

    serve(env, requests_fd, answers_fd)
    chan.send(t="done", tamper=pristine.compare()[:20])
    return 0


def _enter_sandbox(job: dict, chan: _Channel, notebook_name: str, data: bytes) -> bool:
    """Into the sandbox with the submission (the grader is told when it cannot be set up: False),
    then the job's environment in it, and the grader told that the child is ready."""
    from . import sandbox

    try:
        sandbox.enter(job["sandbox"], notebook_name, data)
    except Exception as exc:
        chan.send(t="fatal", reason=f"sandbox setup failed: {exc}")
        return False
    _settle_in(job)
    chan.send(t="ready")
    return True


def _staged(job: dict) -> tuple[str, bytes]:
    """The notebook's file name and bytes. They come from the staging folder, read here (after the
    fork): the fork server's memory never holds a student's name or notebook."""
    with open(job["staging"], "rb") as f:
        data = f.read()
    try:
        with open(job["staging"] + ".name", encoding="utf-8") as name_file:
            notebook_name = name_file.read() or "submission.ipynb"
    except OSError:
        notebook_name = "submission.ipynb"
    return notebook_name, data


def _settle_in(job: dict) -> None:
    """Inside the sandbox: the job's environment, and descriptors 0, 1 and 2 on /dev/null (what the
    notebook prints is caught by ``sys.stdout``; nothing reaches the fork server's)."""
    os.environ.update(job["env"])
    import tempfile
    tempfile.tempdir = None  # the zygote's choice came from its own TMPDIR
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _import_course(job: dict) -> None:
    """The course package the notebook imports (this week's, when the job ships one), a stand-in
    for ``otter``, and torch on one thread."""
    repo = job.get("package") or job["repo"]
    if repo not in sys.path:
        sys.path.insert(0, repo)
    if job.get("package"):
        use_package(job["package"])
    sys.modules["otter"] = _otter_stub()
    import torch
    torch.set_num_threads(1)


def use_package(folder: str) -> None:
    """The student package as this week's release ships it (``folder``/course, written by the grader:
    :mod:`autograder.shipped`): ``course`` and its subpackages find their modules there only, and a
    module of it that the fork server imported but this week does not ship is forgotten. Before any
    student code, and before the tamper snapshot."""
    base = os.path.join(folder, "course")
    shipped = set()
    for where, _dirs, files in os.walk(base):
        rel = os.path.relpath(where, base)
        package = "course" if rel == "." else "course." + rel.replace(os.sep, ".")
        shipped |= {package if f == "__init__.py" else f"{package}.{f[:-3]}"
                    for f in files if f.endswith(".py")}
    for name in sorted((n for n in sys.modules if n == "course" or n.startswith("course.")), reverse=True):
        module = sys.modules[name]
        if name not in shipped:
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                vars(sys.modules[parent]).pop(child, None)
        elif isinstance(getattr(module, "__path__", None), list):
            module.__path__[:] = [os.path.join(base, *name.split(".")[1:])]


def serve(env: dict, requests_fd: int, answers_fd: int) -> None:
    """Answer the judge's requests about ``env`` (the notebook's namespace) until the pipe closes.

    Each request comes as two frames: ``{"id", "limit"}`` (the time it may take), then the request.
    The answer carries the same id. A callback (a reference piece that lives in the judge) is a
    frame ``{"callback", "args", "kwargs"}`` sent in the middle of a request; the judge answers it
    before anything else."""
    from course import wire
    from course.serve import GivenPieceError, Server, callback_frame

    reader = _FrameReader(requests_fd)

    def send(message: dict, refer: Any = None) -> None:
        try:
            frame = wire.encode(message, refer)
        except (wire.WireError, TypeError, ValueError, RecursionError) as exc:
            frame = wire.encode({"id": message.get("id"), "error": {
                "type": "WireError", "message": f"the answer could not be sent: {str(exc)[:300]}"}})
        view = memoryview(frame)
        while view:
            view = view[os.write(answers_fd, view):]

    def call_back(ref: Any, args: tuple, kwargs: dict) -> Any:
        frame = callback_frame(ref, args, kwargs, server.refer)     # GivenPieceError if not plain
        view = memoryview(frame)
        while view:
            view = view[os.write(answers_fd, view):]
        reply = reader.read()
        if reply is None:
            raise RuntimeError("the checking side went away")
        if "error" in reply:
            error = reply["error"]
            raise GivenPieceError(str(error.get("message", "") if type(error) is dict else error)[:1000])
        return server._inflate(reply.get("value"))

    server = Server(env, call_back=call_back, own_children=True)
    while True:
        head = reader.read()
        if head is None:
            return
        request = reader.read()
        if request is None:
            return
        request_id = head.get("id")
        limit: Any = head.get("limit")            # what the message says, checked here
        limit = float(limit) if type(limit) in (int, float) and 0 < limit < 7200 else 60.0
        _arm_signals()
        try:
            _alarm(limit)
            answer = server.handle(request)
            _alarm(0)
        except CellTimeout:
            answer = {"error": {"type": "Timeout", "message": f"ran over {limit:.0f} s"}}
        except BaseException as exc:                      # SystemExit, KeyboardInterrupt, ...
            _alarm(0)
            answer = {"error": {"type": type(exc).__name__, "message": _short(exc)}}
        finally:
            _alarm(0)
        answer["id"] = request_id
        try:
            send(answer, server.refer)
        except BrokenPipeError:       # the judge gave up on this request and is gone: nothing to answer
            return


class _FrameReader:
    """Reads frames from a pipe (the judge is trusted, but a frame is checked all the same)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()

    def read(self) -> dict | None:
        from course import wire
        while True:
            if len(self.buf) >= 4:
                n = wire.frame_length(bytes(self.buf[:4]))
                if len(self.buf) >= 4 + n:
                    body = bytes(self.buf[4:4 + n])
                    del self.buf[:4 + n]
                    return wire.decode(body, meta=True)     # the checks may send meta tensors
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--zygote":
        zygote_main(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else None)
    else:
        print("usage: python -m autograder.runner --zygote FD [JUDGE_FD] (from autograder.forkserver)",
              file=sys.stderr)
        sys.exit(2)
