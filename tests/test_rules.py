"""The page's rules read from the notebook's code (course/rules.py): the bodies of the magics that
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
    """Red team 4: `_ = get_ipython().run_cell_magic(...)` and `(run_cell_magic(...),)` ran unread."""
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
