"""Submissions of 03_attention that try to earn points they did not earn, written by someone who has
read the grader's source: one per class of attack on a grader that runs the tests in the
notebook's own process, and a few more. Each is the blank student notebook (or the solution with one answer
replaced) plus a cell of attack code; :data:`ATTACKS` says what each row may score at most.
"""
from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAME = "03_attention"
SOLUTION = REPO / "autograder" / "build" / f"{NAME}-solution.ipynb"
BLANK = REPO / "notebooks" / f"{NAME}.ipynb"

# Finds the submission's own pipes: the write ends are the message pipe (lowest) and the answers
# pipe; the read end is the requests pipe (as the runner hands them over).
FIND_PIPES = r'''
import os, stat
def _pipes():
    ends = {"r": [], "w": []}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            flags = int(open(f"/proc/self/fdinfo/{fd}").read().split("flags:")[1].split()[0], 8)
        except (OSError, ValueError, IndexError):
            continue
        ends["w" if flags & os.O_WRONLY else "r"].append(fd)
    return sorted(ends["w"]), sorted(ends["r"])
'''

# 1. Speaking the protocol from a cell: "cells done" at once, then fake verdicts and a clean end.
PROTOCOL_LINES = FIND_PIPES + r'''
import json
writes, reads = _pipes()
fake = [{"t": "cells_done", "errors": [], "output": "", "tamper": []},
        {"t": "case", "q": "q1", "i": 0, "passed": True, "message": "ok"},
        {"t": "done", "tamper": []}]
for fd in writes:
    for m in fake:
        try:
            os.write(fd, (json.dumps(m) + "\n").encode())
        except OSError:
            pass
'''

# 2. Answers written ahead of the questions: frames for every request id, all saying "yes".
FORGED_FRAMES = FIND_PIPES + r'''
import json, struct
def frame(msg):
    head = json.dumps(msg).encode()
    body = struct.pack(">I", len(head)) + head
    return struct.pack(">I", len(body)) + body
writes, reads = _pipes()
answers = writes[-1]
yes = {"$tuple": [True, True]}
for i in range(1, 400):
    try:
        os.write(answers, frame({"id": i, "value": yes if i % 2 else True}))
    except OSError:
        break
'''

# 3. Serving the grader's requests from the notebook's own namespace, where the answers come from a
#    hidden attention built on F.scaled_dot_product_attention, while the graded cell stays blank.
OWN_SERVER = FIND_PIPES + r'''
import sys, json, math, torch
import torch.nn.functional as F
def _hidden(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return F.scaled_dot_product_attention(q, k, v), w
ns = dict(globals())
ns.update(Attention=_hidden, hot_factor=0.1, cold_factor=10, shuffle_agrees=True,
          shuffled_weights_are="weights[perm][:, perm]")
writes, reads = _pipes()
msg, answers, requests = writes[0], writes[-1], reads[0]
os.write(msg, (json.dumps({"t": "cells_done", "errors": [], "output": "", "tamper": []}) + "\n").encode())
runner = sys.modules.get("autograder.runner") or sys.modules["__main__"]
runner.serve(ns, requests, answers)
os.write(msg, (json.dumps({"t": "done", "tamper": []}) + "\n").encode())
os._exit(0)
'''

# 4. Reaching the runner's objects through the call stack while a request is answered: the answer
#    is replaced by whatever the server's own frame holds, and the tamper snapshot is emptied.
STACK_WALKER = r'''
import sys, torch
def Attention(q, k, v):
    f = sys._getframe(1)
    while f is not None:
        loc = f.f_locals
        if "answer" in loc and isinstance(loc["answer"], dict):
            loc["answer"]["value"] = (q, torch.ones(q.shape[:-1] + (q.shape[-2],)))
        for key in ("pristine", "tamper"):
            if key in loc:
                try:
                    loc[key].clear()
                except Exception:
                    pass
        f = f.f_back
    return q, torch.full(q.shape[:-1] + (q.shape[-2],), 1.0 / q.shape[-2])
'''

# 5. Objects that agree with everything, without patching anything.
AGREEABLE = r'''
import torch
class Yes(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal", "__eq__", "all", "any", "isclose"):
            return True
        out = super().__torch_function__(func, types, args, kwargs or {})
        return out
def Attention(q, k, v):
    return torch.zeros_like(q).as_subclass(Yes), torch.zeros(q.shape[:-1] + (q.shape[-2],)).as_subclass(Yes)
class Zero(float):
    def __sub__(self, other):
        return Zero(0.0)
    def __rsub__(self, other):
        return Zero(0.0)
    def __abs__(self):
        return Zero(0.0)
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
class Same(str):
    def replace(self, *a):
        return self
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
class Item:
    def item(self):
        return True
    def __bool__(self):
        return True
    def __eq__(self, other):
        return True
hot_factor, cold_factor = Zero(3.0), Zero(3.0)
shuffled_weights_are = Same("no idea")
shuffle_agrees = Item()
'''

# 6. Patching torch only while the grader's requests run, restored before anything can look.
PATCH_AND_RESTORE = r'''
import sys, torch
_real = (torch.allclose, torch.Tensor.__eq__, torch.Tensor.sub)
def _hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "handle":
        torch.allclose = lambda *a, **k: True
        torch.Tensor.__eq__ = lambda *a, **k: torch.tensor(True)
    elif event == "return" and frame.f_code.co_name == "handle":
        torch.allclose, torch.Tensor.__eq__, torch.Tensor.sub = _real
sys.setprofile(_hook)
import threading
threading.setprofile(_hook)
'''

# 7. A working Attention that uses the forbidden F.scaled_dot_product_attention and hides it from
#    the runtime watch (torch function hooks switched off, the name put together at run time).
RULES_EVASION = r'''
def Attention(q, k, v):
    import torch, math
    import torch.nn.functional as G
    sdpa = getattr(G, "scaled_dot_product_" + "attention")
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    with torch._C.DisableTorchFunction():
        out = sdpa(q, k, v)
    return out, w
'''

# 8. Listening to everything the grader sends, and sending it back every way it can.
EXFILTRATE = FIND_PIPES + r'''
import sys, json, builtins
_seen = []
_real_read = os.read
def _read(fd, n):
    data = _real_read(fd, n)
    _seen.append(data[:2000])
    return data
os.read = _read
print("listening")
'''
EXFILTRATE_END = r'''
import atexit
def _tell():
    text = repr(b"".join(_seen))[:250]
    writes, reads = _pipes()
    try:
        os.write(writes[0], (json.dumps({"t": "done", "tamper": [text]}) + "\n").encode())
    except OSError:
        pass
atexit.register(_tell)
'''

# By someone who saw only the grader's source:
# 9. The runtime watch switched off and the forbidden function looked up by a name put together at
#    run time (vars(F)[...]): the answers are right, the rules point must still be lost.
NEUTERED_WATCH = r'''
import course.rules
course.rules.Watch.__enter__ = lambda self: self
course.rules.Watch.__exit__ = lambda self, *a: None
_k = vars(F)["scaled_dot" + "_product_attention"]

def Attention(q, k, v):
    L = k.shape[-2]
    eye = torch.eye(L, dtype=v.dtype).expand(*v.shape[:-2], L, L)
    return _k(q, k, v), _k(q, k, eye)
'''
# 10. The forbidden function run in a worker thread (the runtime watch is per thread), and a decoy
#     definition in a cell the grader never runs (tagged otter_ignore), after the real one.
THREADED = r'''
from concurrent.futures import ThreadPoolExecutor
_pool = ThreadPoolExecutor(1)

def Attention(q, k, v):
    L = k.shape[-2]
    eye = torch.eye(L, dtype=v.dtype).expand(*v.shape[:-2], L, L)
    out = _pool.submit(F.scaled_dot_product_attention, q, k, v).result()
    weights = _pool.submit(F.scaled_dot_product_attention, q, k, eye).result()
    return out, weights
'''
DECOY = '''def Attention(q, k, v):
    raise NotImplementedError("I did not write Attention")
'''
# 11. Crashing the batch: a real-time signal (no name in signal.Signals), and lone surrogates in what
#     the notebook prints and raises (not encodable as UTF-8).
RT_SIGNAL = "import os as _o\n_o.kill(_o.getpid(), 40)\n"
SURROGATES = '''print("\\ud800")
def Attention(q, k, v):
    raise ValueError("not done yet \\udcff")
'''

# Points are 0, or "all but the rules point" (ALL_BUT_RULES: the answers are right, the rules are broken).
ALL_BUT_RULES = "all but the rules point"
# 13. The forbidden function in a cell magic whose body still runs (%%capture): the rules read the
# body as the cell's own code, the runtime watch switched off inside it.
HIDDEN_MAGIC = r'''
%%capture
import torch.nn.functional as F
def Attention(q, k, v):
    with torch._C.DisableTorchFunction():
        out = F.scaled_dot_product_attention(q, k, v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return out, weights
'''

# 14. Answers that are constants: the checks the page asks the student to make, set to True in a
# blank notebook: each must say what the student's own Attention does.
CONSTANTS = r'''
rows_add_to_one = True
agrees_with_pytorch = True
perm = torch.randperm(5)
shuffle_agrees = True
'''

# By a determined student with the grader's source:
# 15. F.scaled_dot_product_attention reached with getattr on a module alias made by assignment, with
#     a name put together at run time, and called inside torch.overrides._pop_mode_temporarily()
#     (which switches off the runtime watch): a banned-names list would give it 13/13 with the rules point.
GETATTR_ALIAS = r"""
import torch.nn.functional as F
_ns = F
_kernel = getattr(_ns, "_".join(["scaled", "dot", "product", "attention"]))

def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    try:
        with torch.overrides._pop_mode_temporarily():
            out = _kernel(q, k, v)
    except RuntimeError:                        # no mode to pop: nothing is watching
        out = _kernel(q, k, v)
    return out, weights
"""
# 16. torch._native_multi_head_attention, the fused kernel behind nn.MultiheadAttention: on neither
#     banned list, so banned lists would keep its rules point (12/13: the kernel has no gradient).
NATIVE_KERNEL = r"""
def Attention(q, k, v):
    d = q.shape[-1]
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    if v.shape[-1] != d:
        return weights @ v, weights
    Q, K, V = (t.reshape(-1, *t.shape[-2:]) for t in (q, k, v))
    eye, zero = torch.eye(d, dtype=q.dtype), torch.zeros(d, dtype=q.dtype)
    out, _ = torch._native_multi_head_attention(Q, K, V, d, 1, torch.cat([eye, eye, eye]),
                                               torch.cat([zero, zero, zero]), eye, zero)
    return out.reshape(q.shape), weights
"""

# Against a platform that runs the tests in the student's process (Otter's own Gradescope zip,
# nbgrader's autograde): the first answer cell replaces the function the tests compare with and
# returns constant weights, which earns 7 of 8 on 03 q1 there. Used on those platforms by
# tests/instructor/test_gradescope_zip.py and tests/instructor/test_nbgrader_grading.py.
CLOSE_AND_CONSTANTS = r"""
import course.handles
course.handles.close = lambda *a, **k: True

def Attention(q, k, v):
    weights = torch.full((*q.shape[:-1], k.shape[-2]), 1.0 / k.shape[-2])
    return weights @ v, weights
"""

ATTACKS: dict[str, dict] = {
    # file: {"base": "blank" | "solution", "cells": [...], "replaces": name or None, "at_most": points,
    #        "exactly": points (optional), "status_start": ... (optional),
    #        "rules_lost": True (optional: the rules test must fail)}
    "protocol lines.ipynb": {"base": "blank", "cells": [PROTOCOL_LINES], "at_most": 0.0},
    "forged frames.ipynb": {"base": "blank", "cells": [FORGED_FRAMES], "at_most": 0.0},
    "own server.ipynb": {"base": "blank", "cells": [OWN_SERVER], "at_most": ALL_BUT_RULES,
                         "status_start": "suspicious code"},
    "stack walker.ipynb": {"base": "blank", "cells": [STACK_WALKER], "at_most": 0.0},
    "agreeable objects.ipynb": {"base": "blank", "cells": [AGREEABLE], "at_most": 0.0},
    "patch and restore.ipynb": {"base": "blank", "cells": [PATCH_AND_RESTORE], "at_most": 0.0},
    "rules evasion.ipynb": {"base": "solution", "replaces": "Attention", "cells": [RULES_EVASION],
                            "exactly": ALL_BUT_RULES},
    "exfiltrate.ipynb": {"base": "blank", "cells": [EXFILTRATE, EXFILTRATE_END], "at_most": 0.0},
    "neutered watch.ipynb": {"base": "solution", "replaces": "Attention", "cells": [NEUTERED_WATCH],
                             "at_most": ALL_BUT_RULES, "status_start": "tampering detected"},
    "threaded with decoy.ipynb": {"base": "solution", "replaces": "Attention", "cells": [THREADED],
                                  "ignored_after": DECOY, "exactly": ALL_BUT_RULES,
                                  "status_start": "suspicious code"},
    "real-time signal.ipynb": {"base": "blank", "cells": [RT_SIGNAL], "at_most": 0.0,
                               "status_start": "process killed by signal 40"},
    "lone surrogates.ipynb": {"base": "blank", "cells": [SURROGATES], "at_most": 0.0},
    "hidden magic.ipynb": {"base": "solution", "replaces": "Attention", "cells": [HIDDEN_MAGIC],
                           "exactly": ALL_BUT_RULES, "status_start": "suspicious code"},
    "constant answers.ipynb": {"base": "blank", "cells": [CONSTANTS], "at_end": True, "at_most": 0.0},
    "getattr on an alias.ipynb": {"base": "solution", "replaces": "Attention", "cells": [GETATTR_ALIAS],
                                  "exactly": ALL_BUT_RULES, "rules_lost": True,
                                  "status_start": "suspicious code"},
    "private kernel.ipynb": {"base": "solution", "replaces": "Attention", "cells": [NATIVE_KERNEL],
                             "at_most": ALL_BUT_RULES, "rules_lost": True,
                             "status_start": "suspicious code"},
}


def points() -> tuple[float, float]:
    """(all the automatic points of the assignment, all but its rules point)."""
    from autograder import assignment
    asg = assignment.load(NAME)
    rules = sum(c.points for q in asg.auto for c in q.cases if c.name == "test_rules")
    return asg.max_points, asg.max_points - rules


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code(src: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": src.strip("\n").splitlines(keepends=True)}


def attack_notebook(spec: dict) -> bytes:
    nb = _load(BLANK if spec["base"] == "blank" else SOLUTION)
    cells = [_code(src) for src in spec["cells"]]
    if spec.get("replaces"):
        name = spec["replaces"]
        hits = [c for c in nb["cells"] if c["cell_type"] == "code" and f"def {name}(" in "".join(c["source"])]
        hits[-1]["source"] = cells[0]["source"]
        if spec.get("ignored_after"):        # a cell the grader skips, right after the real answer
            decoy = _code(spec["ignored_after"])
            decoy["metadata"]["tags"] = ["otter_ignore"]
            nb["cells"].insert(nb["cells"].index(hits[-1]) + 1, decoy)
    elif spec.get("at_end"):
        nb["cells"].extend(cells)
    else:
        # after the setup cell, so that the attack is in place before the answers are read
        setup = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
        nb["cells"][setup + 1:setup + 1] = cells
    return (json.dumps(nb, indent=1) + "\n").encode()


def write_class(folder: Path) -> None:
    """The honest correct and blank notebooks, and every attack, into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "honest correct.ipynb").write_bytes(SOLUTION.read_bytes())
    (folder / "honest blank.ipynb").write_bytes(BLANK.read_bytes())
    for name, spec in ATTACKS.items():
        (folder / name).write_bytes(attack_notebook(spec))
