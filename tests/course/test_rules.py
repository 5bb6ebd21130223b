"""The page's rules read from the notebook's code (course/rules/): the bodies of the magics that
still run under the grader are read as the cell's own code."""
from __future__ import annotations

from course.rules import static_uses, suspicious

HONEST = """
def Attention(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w
"""

IN_CAPTURE = """%%capture
import torch.nn.functional as F
def Attention(q, k, v):
    with torch._C.DisableTorchFunction():
        return F.scaled_dot_product_attention(q, k, v), None
"""


def test_an_honest_attention_breaks_no_rule():
    assert static_uses([HONEST], ["Attention"]) == []
    assert suspicious([HONEST]) == []


def test_a_cell_magics_body_is_read_as_the_cells_code():
    for magic in ("capture", "time", "timeit", "prun"):
        cell = IN_CAPTURE.replace("%%capture", f"%%{magic}")
        broken = static_uses([HONEST, cell], ["Attention"])
        assert any("scaled_dot_product_attention" in b for b in broken), (magic, broken)
        odd = suspicious([HONEST, cell])
        assert any("DisableTorchFunction" in o for o in odd), (magic, odd)


def test_a_line_magics_statement_is_read_too():
    cell = "%time Attention = lambda q, k, v: (F.scaled_dot_product_attention(q, k, v), None)"
    broken = static_uses([HONEST, cell], ["Attention"])
    assert any("scaled_dot_product_attention" in b for b in broken), broken


def test_nested_magics_and_a_magic_that_does_not_run():
    body = repr(IN_CAPTURE.split("\n", 1)[1])
    nested = f"%%time\nget_ipython().run_cell_magic('capture', '', {body})\n"
    assert any("scaled_dot_product_attention" in b for b in static_uses([HONEST, nested], ["Attention"]))
    # %%bash does not run under the grader: its text is not Python and changes nothing
    assert static_uses([HONEST, "%%bash\necho def Attention\n"], ["Attention"]) == []


def test_code_from_strings_that_the_rules_cannot_read_is_suspicious():
    body = "body = 'def Attention(q, k, v): return F.scaled_dot_product_attention(q, k, v), None'\n"
    for runs in ("exec(body)", "get_ipython().run_cell_magic('capture', '', body)"):
        odd = suspicious([HONEST, body + runs])
        assert any("runs code built at run time" in o for o in odd), (runs, odd)
    # inside the graded definition it also breaks the rules
    inside = "def Attention(q, k, v):\n    get_ipython().run_line_magic('time', code)\n    return q, k\n"
    assert any("run_line_magic" in b for b in static_uses([inside], ["Attention"]))


def test_a_magic_called_inside_an_expression_is_read_too():
    """`_ = get_ipython().run_cell_magic(...)` and `(run_cell_magic(...),)` are read, not run unread."""
    body = IN_CAPTURE.split("\n", 1)[1]
    for cell in (f"_ = get_ipython().run_cell_magic('capture', '', {body!r})",
                 f"(get_ipython().run_cell_magic('time', '', {body!r}),)",
                 f"if True:\n    print(get_ipython().run_line_magic('time', {body.splitlines()[0]!r}),\n"
                 f"          get_ipython().run_cell_magic('prun', '', {body!r}))"):
        broken = static_uses([HONEST, cell], ["Attention"])
        assert any("scaled_dot_product_attention" in b for b in broken), (cell, broken)
        assert any("DisableTorchFunction" in o for o in suspicious([HONEST, cell])), cell


def test_a_magic_nested_past_the_limit_is_suspicious():
    nested = repr(IN_CAPTURE.split("\n", 1)[1])
    for _ in range(9):
        nested = repr(f"get_ipython().run_cell_magic('time', '', {nested})\n")
    odd = suspicious([HONEST, eval(nested)])
    assert any("runs code built at run time" in o for o in odd), odd
    # magics that do not run code under the grader stay quiet
    assert suspicious([HONEST, "%%bash\necho hi", "%%writefile x.py\nprint(1)", "%matplotlib inline"]) == []


# ---------------------------------------------------------------- rules by what is allowed

SETUP = """import torch
import torch.nn as nn
import torch.nn.functional as F
import math
import numpy as np
import matplotlib.pyplot as plt
import io, os, re, shutil, subprocess, sys, time
"""


def _rules(code: str, roots=("Attention",)) -> tuple[list[str], list[str]]:
    """(what costs the rules point, what makes the row suspicious) for a notebook of the course's
    setup cell (given) and ``code``."""
    return (static_uses([SETUP, code], list(roots), [SETUP]), suspicious([SETUP, code], given=[SETUP]))


ALLOWED_STYLES = {
    "einsum": """
def Attention(q, k, v):
    w = torch.einsum("...id,...jd->...ij", q, k).div(math.sqrt(q.shape[-1])).softmax(-1)
    return torch.einsum("...ij,...jd->...id", w, v), w
""",
    "baddbmm and F.softmax": """
def Attention(q, k, v):
    s = torch.baddbmm(torch.zeros(1), q, k.transpose(1, 2), alpha=q.shape[-1] ** -0.5)
    w = F.softmax(s, dim=-1)
    return torch.bmm(w, v), w
""",
    "a helper and masked_fill": """
def scores(q, k):
    return q @ k.mT / q.size(-1) ** 0.5

def Attention(q, k, v, causal=False):
    s = scores(q, k)
    if causal:
        L = s.shape[-1]
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w
""",
    "layers, F.linear, F.layer_norm, self's own state": """
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        for name in "QKV":
            setattr(self, name, nn.Linear(dim, head_dim, bias=False))
        self.embed = nn.Embedding(10, dim)
        self.register_buffer("mask", torch.tril(torch.ones(8, 8)))
        self.apply(self._init_weights)
        self._cache = None

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, x):
        q, k, v = (getattr(self, name)(x) for name in "QKV")
        x = F.layer_norm(x, x.shape[-1:])
        self._cache = F.linear(x, self.Q.weight)
        return q

    def __repr__(self):
        return f"{type(self).__name__} / {self.__class__.__name__}"

def Attention(q, k, v):
    return Head(4, 4)(q), None
""",
    "exploration, plots, timing": """
import random
from dataclasses import dataclass
from tqdm.auto import tqdm
t = time.perf_counter()
print(torch.__version__, np.__version__, F)
help(torch.softmax)
print(dir(nn))
x = torch.randn(3)
plt.plot(x.numpy())
plt.show()
random.seed(0)
np.random.seed(0)
device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
opt = torch.optim.AdamW([x], lr=1e-3)
with torch.no_grad():
    torch.nn.utils.clip_grad_norm_([x], 1.0)
print(F.scaled_dot_product_attention(x[None], x[None], x[None]))   # checking against pytorch: fine here
@dataclass
class Settings:
    dim: int = 8
for _ in tqdm(range(3)):
    pass
%time y = 1
%matplotlib inline
from google.colab import drive          # on Colab; not installed where the grader runs
drive.mount("/content/drive")
def Attention(q, k, v):
    return q, None
""",
}


def test_the_allowed_styles_break_no_rule():
    for name, code in ALLOWED_STYLES.items():
        assert _rules(code) == ([], []), name


def _attention(body: str, before: str = "") -> str:
    """A notebook cell: ``before``, then an Attention whose body is ``body``."""
    return before + "def Attention(q, k, v):\n" + "".join(f"    {line}\n" for line in body.splitlines())


CAUGHT = {
    # name: (code, a word the message names)
    "an alias by assignment": (_attention("return G.softmax(q, -1), None", "G = F\n"), "module F"),
    "an alias passed as an argument": (
        _attention("return use(F, q), None", "def use(m, q):\n    return m.softmax(q, -1)\n"), "module F"),
    "getattr with a computed name": (
        _attention("f = getattr(F, 'scaled_dot_product_' + 'attention')\nreturn f(q, k, v), None"),
        "computed name"),
    "getattr on an alias, the overrides popped": (
        _attention("with torch.overrides._pop_mode_temporarily():\n    return _kernel(q, k, v), None",
                   "_ns = F\n_kernel = getattr(_ns, '_'.join(['scaled', 'dot', 'product', 'attention']))\n"),
        "torch.overrides"),
    "vars()": (_attention("return vars(F)['softmax'](q, -1), None"), "vars"),
    "torch's private API": (_attention("return torch._native_multi_head_attention(q, k, v, 4, 1), None"),
                            "torch._native_multi_head_attention"),
    "torch.ops.aten": (_attention("return torch.ops.aten.scaled_dot_product_attention(q, k, v), None"),
                       "torch.ops"),
    "torch.overrides": (_attention("with torch.overrides.TorchFunctionMode():\n    return q, None"),
                        "torch.overrides"),
    "torch._C._nn": (_attention("return torch._C._nn.scaled_dot_product_attention(q, k, v), None"),
                     "torch._C"),
    "torch.DisableTorchFunction": (_attention("with torch.DisableTorchFunction():\n    return q, None"),
                                   "DisableTorchFunction"),
    "a __class__ walk": (_attention("return q.__class__.__mro__[-1].__subclasses__(), None"), "__class__"),
    "a __globals__ walk": (_attention("return helper.__globals__['F'], None", "def helper():\n    pass\n"),
                           "__globals__"),
    "from ... import ... as s": (
        _attention("return s(q, k, v), None",
                   "from torch.nn.functional import scaled_dot_product_attention as s\n"),
        "F.scaled_dot_product_attention"),
    "import ... as G": (
        _attention("return G.scaled_dot_product_attention(q, k, v), None",
                   "import torch.nn.functional as G\n"),
        "G.scaled_dot_product_attention"),
    "nn.MultiheadAttention through torch.nn.modules": (
        _attention("return torch.nn.modules.activation.MultiheadAttention(8, 2), None"), "torch.nn.modules"),
    "globals()": (_attention("return globals()['F'].softmax(q, -1), None"), "globals"),
    "sys.modules": (_attention("return sys.modules['torch.nn.functional'].softmax(q, -1), None"), "sys"),
    "importlib": (_attention("return importlib.import_module('torch'), None", "import importlib\n"),
                  "importlib"),
    "__builtins__": (_attention("return __builtins__['getattr'](F, 'softmax'), None"), "__builtins__"),
    "getattr passed around": (
        _attention("return functools.partial(getattr, q)('softmax')(-1), None", "import functools\n"),
        "getattr"),
    "a generator's frame": (_attention("g = (x for x in [1])\nreturn g.gi_frame.f_back, None"), "gi_frame"),
    "an error's object": (
        _attention("return G.softmax(q, -1), None",
                   "try:\n    F.nope\nexcept AttributeError as e:\n    G = e.obj\n"),
        "e.obj"),
    "a method that trusts self, taken off its class": (
        _attention("return H.get(torch.softmax, '__self__'), None",
                   "class H:\n    def get(self, name):\n        return getattr(self, name)\n"), "H.get"),
    "get_ipython's namespace": (_attention("return get_ipython().user_ns['F'].softmax(q, -1), None"),
                                "get_ipython"),
    "code in a string annotation": (
        "def Attention(q: \"__import__('torch')\", k, v):\n    return q, None\n", "__import__"),
}


def test_what_is_not_allowed_is_caught_and_named():
    for name, (code, word) in CAUGHT.items():
        broken, odd = _rules(code)
        assert any(word in b for b in broken), (name, broken)
        assert any(word in o for o in odd) or "scaled_dot_product_attention" in word, (name, odd)
        assert all(o.startswith("cell 2 ") for o in odd), (name, odd)


def test_ready_made_pieces_cost_the_rules_point_only_where_graded():
    """The page checks answers against F.scaled_dot_product_attention in a cell of its own."""
    checking = _attention("return q, None") + \
        "agrees = torch.allclose(Attention(q, k, v)[0], F.scaled_dot_product_attention(q, k, v))\n"
    assert _rules(checking) == ([], [])
    using = _attention("return F.scaled_dot_product_attention(q, k, v), None")
    assert _rules(using) == (["uses F.scaled_dot_product_attention"], [])
    block = "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
            "        self.a = nn.MultiheadAttention(8, 2)\n"
    assert _rules(block, ["Block"]) == (["uses nn.MultiheadAttention"], [])


def test_changes_and_code_from_strings_anywhere_cost_the_rules_point():
    """They can change the graded code from afar: reached or not, they cost the point."""
    for code, word in (("torch.softmax = lambda *a, **k: 0", "changes torch.softmax"),
                       ("setattr(torch, 'softmax', len)", "changes torch.softmax"),
                       ("type(torch.zeros(1)).softmax = len", "changes type(...).softmax"),
                       ("exec('Attention = None')", "exec"),
                       ("import course.rules\ncourse.rules.Watch.__enter__ = lambda self: self",
                        "course.rules")):
        broken, odd = _rules(_attention("return q, None") + code)
        assert any(word in b for b in broken), (code, broken)
        assert any(word in o for o in odd), (code, odd)


def test_names_are_read_in_their_scope():
    """A parameter called like a module is the notebook's own value; a module imported inside a
    function is a module there; a builtin shadowed only later is still the builtin before."""
    own = "def Attention(q, k, v, np=None):\n    return np.softmax(q), None\n"   # np: a parameter
    assert _rules(own) == ([], [])
    inner = _attention("import torch.nn.functional as G\nreturn G(q), None")
    assert any("module G" in b for b in _rules(inner)[0])
    later = _attention("return K, None",
                       "def f(s):\n    return eval(s)\nK = f('F')\ndef eval(s):\n    return s\n")
    assert any("eval" in b for b in _rules(later)[0])


def test_a_given_cell_is_the_courses():
    """Cells identical to one of the blank notebook's are read for what they bind, not searched."""
    odd = suspicious([SETUP, "x = os.getcwd()"], given=[SETUP])
    assert odd == ["cell 2 uses os.getcwd: os is not allowed"]
    assert suspicious([SETUP], given=[SETUP]) == []


def test_every_binding_that_may_hold_is_followed():
    """Not only a graded name's last definition: any later one inside if/for/with/match, and any
    function that rebinds it as a global, may be the one that answers."""
    evil = "def evil(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v), None\n"
    honest = _attention("return q, None")
    for code in (evil + "if True:\n    Attention = evil\nelse:\n"
                        "    def Attention(q, k, v):\n        return q, None\n",
                 honest + evil + "for Attention in [evil]:\n    pass\n",
                 honest + evil + "def swap():\n    global Attention\n    Attention = evil\nswap()\n",
                 honest + evil + "import contextlib\n"
                                 "with contextlib.nullcontext(evil) as Attention:\n    pass\n",
                 honest + evil + "match evil:\n    case Attention:\n        pass\n"):
        assert "uses F.scaled_dot_product_attention" in _rules(code)[0], code
    # an earlier attempt that a later definition replaces at a cell's top level no longer counts
    assert _rules(evil.replace("evil", "Attention") + honest) == ([], [])


def test_what_changes_a_followed_object_in_place_is_followed_too():
    """h.kernel = ..., setattr(h, ...), h.update(...), also from inside a function, where the graded
    code uses h."""
    graded = "class H:\n    pass\nh = H()\n" + _attention("return h.kernel(q, k, v), None")
    for change in ("h.kernel = F.scaled_dot_product_attention",
                   "setattr(h, 'kernel', F.scaled_dot_product_attention)",
                   "def setup():\n    h.kernel = F.scaled_dot_product_attention\nsetup()",
                   "h.__init__()\nh.kernel = F.scaled_dot_product_attention"):
        assert "uses F.scaled_dot_product_attention" in _rules(graded + change)[0], change


def test_a_method_called_inside_an_expression_is_followed_too():
    """`_ = table.update(f=F.scaled_dot_product_attention)` stores the piece by a method call inside
    an expression, not a whole statement: any method called on a followed name, anywhere in an
    expression, may change its object."""
    graded = _attention("return table['f'](q, k, v), None")
    for stash in ("table = {}\n_ = table.update(f=F.scaled_dot_product_attention)",
                  "table = {}\nprint(table.setdefault('f', F.scaled_dot_product_attention))",
                  "table = []\nok = [table.append(F.scaled_dot_product_attention)]",
                  "table = []\nok = [table.append(f) for f in (F.scaled_dot_product_attention,)]",
                  "table = {}\nok = bool(table.update(f=F.scaled_dot_product_attention)) or 1",
                  "table = {}\ndef fill():\n    return table.update(f=F.scaled_dot_product_attention)\n"
                  "x = fill()",
                  "table = {}\nif table.update(f=F.scaled_dot_product_attention) is None:\n    pass"):
        broken, odd = _rules(graded + stash)
        assert "uses F.scaled_dot_product_attention" in broken, (stash, broken)
    # an honest notebook's own check beside a method call on a name the graded code also uses
    # (here a parameter named like a notebook-level tensor) costs nothing: q.transpose(-2, -1)
    # is handed constants only, and a module's functions (F.softmax(x)) change no object of its own
    honest = _attention("return torch.softmax(q @ k.transpose(-2, -1), -1) @ v, None")
    check = ("q = torch.randn(2, 3, 4)\nk = v = q\n"
             "ref = F.scaled_dot_product_attention(q.transpose(-2, -1).transpose(-2, -1), k, v)\n"
             "y = F.softmax(q, -1)\n")
    assert _rules(honest + check) == ([], [])
    # 09's check 1: a method called on a function's own parameter changes no notebook-level name
    # of that name (here t, which the graded code also uses)
    graded = _attention("t = q @ k.transpose(-2, -1)\nreturn torch.softmax(t, -1) @ v, None")
    check = ("t = torch.randn(2, 3, 4)\ndef same(x, B, T):\n    def by_head(t):\n"
             "        return t.view(B, T, -1)\n"
             "    return F.scaled_dot_product_attention(by_head(x), by_head(x), by_head(x))\n")
    assert _rules(graded + check) == ([], [])


def test_a_blank_template_is_still_blank_when_its_objects_call_methods():
    """The graded name's last *binding* is compared with the blank notebook's, not a statement
    that calls a method on it (08's blank `model = MyTransformer(cfg).to(device)`)."""
    blank = "class MyT(nn.Module):\n    pass\n"
    cells = [SETUP, blank, "device = 'cpu'\nmodel = MyT().to(device)\n_ = MyT.mro(MyT)\n"]
    assert static_uses(cells, ["MyT"], [SETUP, blank]) == ["MyT is still the blank template"]


STUB_BLOCK = "class Block(nn.Module):\n    def __init__(self, dim, heads):\n        ...\n\n" \
    "    def forward(self, x):\n        ...\n"


def test_a_placeholder_answer_is_no_answer_with_or_without_the_blank_notebook():
    """The student's kernel has no blank notebook (Otter's self-check, nbgrader's kernel): a
    definition of nothing but placeholders is still no answer there, and in the judge when its
    signature was changed (no rules point for a question left unanswered)."""
    for code in (STUB_BLOCK, STUB_BLOCK.replace("heads", "heads, causal=False"),
                 "def Attention(q, k, v):\n    \"\"\"Write me.\"\"\"\n    raise NotImplementedError\n",
                 "@torch.no_grad()\ndef Write(net, L=32):\n    pass\n",
                 "class Block(nn.Module):\n    pass\n",
                 # 09's and 07's blank classes keep a line or two around the `...`
                 "class Block(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
                 "        ...\n        SmallStart(self)\n\n"
                 "    @staticmethod\n    def init(m):\n        ...\n",
                 # one line that computes nothing beside the `...`
                 STUB_BLOCK.replace("    def forward(self, x):\n        ...\n",
                                    "    def forward(self, x):\n        todo = None\n        return None\n")):
        name = "Attention" if "Attention" in code else "Write" if "Write" in code else "Block"
        kernel = static_uses([SETUP, code], [name], [SETUP])
        assert len(kernel) == 1 and "not written yet" in kernel[0], (code, kernel)
        judge = static_uses([SETUP, code], [name], [SETUP, STUB_BLOCK])
        assert judge in (kernel, ["Block is still the blank template"]), judge
    # the blank notebook's own definition is named once, as the blank template
    blank = static_uses([SETUP, STUB_BLOCK], ["Block"], [SETUP, STUB_BLOCK])
    assert blank == ["Block is still the blank template"]


def test_answers_that_only_look_short_are_answers():
    """A class that names a working base, a method that returns, a placeholder method beside a
    working one: answers, not templates."""
    honest = "class Mine(nn.Module):\n    def forward(self, x):\n        return x\n\n"
    for code in (honest + "class Block(Mine):\n    pass\n",
                 honest + "class Block(Mine):\n    def forward(self, x):\n        return 2 * x\n",
                 "class Block(nn.Module):\n    def extra(self):\n        ...\n\n"
                 "    def forward(self, x):\n        return x\n",
                 "def Attention(q, k, v):\n    return q, k\n",
                 # a data class of constants is an answer (09's Config)
                 "class Block:\n    dim: int = 128\n    heads: int = 4\n",
                 # a subclass of a working class that only passes its arguments on
                 honest + "class Block(Mine):\n    def __init__(self, d):\n        super().__init__(d)\n",
                 # code written above a `...` the student forgot to delete
                 "class Block(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
                 "        self.l = nn.Linear(d, d)\n        ...\n\n    def forward(self, x):\n"
                 "        ...\n        return self.l(x)\n"):
        name = "Attention" if "Attention" in code else "Block"
        assert static_uses([SETUP, code], [name], [SETUP]) == [], code

WORKER = """class Job(torch.utils.data.Dataset):
    def __init__(self, args):
        self.args = args
    def __len__(self):
        return 1
    def __getitem__(self, i):
        return table["f"](*self.args)
def far(*args):
    return next(iter(torch.utils.data.DataLoader(Job(args), batch_size=None, num_workers=1)))
"""


def test_work_in_another_process_is_not_allowed():
    """Attention's work done in a DataLoader worker (a forked process) is out of
    the runtime watch's reach. multiprocessing, os.fork, subprocess, concurrent.futures and
    torch.multiprocessing are on no allow-list; a DataLoader's num_workers other than a plain 0
    is not allowed either: in the graded code it costs the point, anywhere it is suspicious."""
    graded = _attention("return far(q, k, v), None", WORKER)
    broken, odd = _rules("table = {'f': torch.matmul}\n" + graded)
    assert any("starts worker processes (num_workers=1" in b for b in broken), broken
    assert any(o.startswith("cell 2 starts worker processes") for o in odd), odd
    for loader in ("torch.utils.data.DataLoader([1], num_workers=n)",
                   "torch.utils.data.DataLoader([1], **{'num_workers': 2})",
                   "torch.utils.data.DataLoader([1], None, False, None, None, 1)"):
        broken, odd = _rules(_attention("return q, None") + f"n = 1\ndl = {loader}\n")
        assert broken == [] and any("starts worker processes" in o for o in odd), (loader, odd)
    for code in ("import multiprocessing\np = multiprocessing.Process(target=print)",
                 "pid = os.fork()", "p = torch.multiprocessing.Process(target=print)",
                 "import concurrent.futures", "subprocess.run(['ls'])"):
        assert _rules(_attention("return q, None") + code)[1], code
    # a plain loader (the course's training helpers use none with workers) is fine
    for plain in ("torch.utils.data.DataLoader([1], batch_size=1)",
                  "torch.utils.data.DataLoader([1], num_workers=0)",
                  "torch.utils.data.DataLoader([1], None, False, None, None, 0)"):
        assert _rules(_attention("return q, None") + f"dl = {plain}\n") == ([], []), plain


def test_attributes_named_in_strings_cannot_be_copied():
    """functools.update_wrapper / wraps(assigned=...) copy attributes by the names they are given
    (f.__globals__ into an object of the notebook's): not allowed, and they cost the point anywhere."""
    trusting = "import functools\nclass H:\n    def get(self, n):\n        return getattr(self, n)\nh = H()\n"
    for code in ("functools.update_wrapper(h, F.softmax, assigned=('__globals__',), updated=())",
                 "functools.wraps(F.softmax, ('__globals__',), ())(h)",
                 "w = functools.wraps\nw(F.softmax, ('__globals__',))(h)"):
        broken, odd = _rules(trusting + code + "\n" + _attention("return q, None"))
        assert any("functools" in b for b in broken), (code, broken)
        assert any("functools" in o for o in odd), (code, odd)
    plain = "import functools\ndef deco(f):\n    @functools.wraps(f)\n    def inner(*a):\n" \
            "        return f(*a)\n    return inner\n@deco\n" + _attention("return q, None")
    assert _rules(plain) == ([], [])


def test_a_self_check_counts_the_notebooks_setup_cell_as_the_courses():
    """grader.check runs in the student's own process, where the blank notebook is not at hand:
    the real setup cell (it uses sys and pip) must not cost an honest notebook the rules point,
    and a root defined in a cell that only pretends to be the setup cell is no answer."""
    import json
    from pathlib import Path

    from autograder.notebook import SETUP_MARK, is_setup
    from course import handles
    nb = json.loads((Path(__file__).parents[2] / "notebooks" / "03_attention.ipynb").read_text())
    setup = next("".join(c["source"]) for c in nb["cells"]
                 if c["cell_type"] == "code" and is_setup("".join(c["source"])))
    assert handles.SETUP_MARK == SETUP_MARK
    assert static_uses([setup, HONEST], ["Attention"]) != []           # sys, read as the student's
    otter = 'import sys\nsys.path.append(r"/autograder/submission")'       # otter's executor adds it
    local = handles.LocalTransport({"In": ["", otter, setup, HONEST]})
    assert static_uses(local.cells(), ["Attention"], local.template()) == []
    # nbgrader runs its test cells in the notebook: tests, not the notebook's code (they import
    # course.handles and bind torch in every function, which the reading must not follow)
    test_cell = ("# test q1 test_rules (1 point): hidden, run when your notebook is graded\n"
                 "### BEGIN HIDDEN TESTS\nfrom course.nbgrader_check import check\n\n"
                 "def test_rules(Attention):\n    import torch\n    from course.handles import student\n"
                 "    torch.manual_seed(0)\n    return F.scaled_dot_product_attention\n")
    given = ("# GIVEN: the page's check\nimport torch.nn.functional as F\n"
             "sdpa = F.scaled_dot_product_attention\n")
    local = handles.LocalTransport({"In": ["", setup, given, HONEST, test_cell]})
    assert test_cell not in local.cells()
    assert static_uses(local.cells(), ["Attention"], local.template()) == []
    fake = handles.LocalTransport({"In": ["", SETUP_MARK + "\n" + IN_CAPTURE]})
    assert static_uses(fake.cells(), ["Attention"], fake.template()) != []


def test_a_piece_put_into_a_list_by_a_second_name_with_plus_equals_is_followed():
    """``stack = shelf; stack += [F.scaled_dot_product_attention]`` grows the list the graded code
    reads, as ``stack.append(...)`` does, and is followed as that is; a local ``+=`` in a function
    is not the notebook's name."""
    graded = "def Attention(q, k, v):\n    return shelf[0](q, k, v), None\n"
    for grow in ("stack += [F.scaled_dot_product_attention]\n",
                 "stack.append(F.scaled_dot_product_attention)\n"):
        broken, _ = _rules("shelf = []\nstack = shelf\n" + grow + graded)
        assert any("scaled_dot_product_attention" in b for b in broken), (grow, broken)
    local = ("shelf = [torch.softmax]\nstack = shelf\n"
             "def total(xs):\n    stack = []\n    stack += [F.scaled_dot_product_attention]\n"
             "    return stack\n")
    assert _rules(local + graded)[0] == []


def test_the_rules_read_each_cell_as_ipython_runs_it():
    """`In [1]: NAME = VALUE` is valid Python (an annotated assignment to `In[1]`) that binds
    nothing, while IPython strips the prompt and rebinds NAME: the rules read what runs."""
    evil = "def evil(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v), None\n"
    honest = _attention("return q, None")
    assert static_uses([SETUP, honest, evil], ["Attention"], [SETUP]) == []
    for hidden in ("In [1]: Attention = evil\n", ">>> Attention = evil\n",
                   "In [3]: x = 1\n   ...: Attention = evil\n"):
        broken = static_uses([SETUP, honest, evil, hidden], ["Attention"], [SETUP])
        assert any("uses F.scaled_dot_product_attention" in b for b in broken), (hidden, broken)


def test_a_magics_body_runs_as_the_rules_read_it():
    """The grader's shell runs a `%%time` body after IPython's transformation, as IPython's own
    magics do and as the rules read it: run raw, `In [1]: norm = piece` stores into `In` while the
    rules read `norm = piece`."""
    from autograder.runner import _Shell
    from course.rules.magics import strip_magics

    body = "eps = 1e-5\nIn [1]: norm = 3\n"
    env: dict = {}
    shell = _Shell(env)
    shell.run_cell_magic("time", "", body)
    ran = {k: v for k, v in env.items() if k != "__builtins__"}
    read = {}
    exec(strip_magics("%%time\n" + body), read)
    assert ran == {k: v for k, v in read.items() if k != "__builtins__"} == {"eps": 1e-5, "norm": 3}
