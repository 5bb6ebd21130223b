"""A rule's finding belongs to the question it costs, and honest code is never flagged: a value a
question's cell computes is read as it was computed (not through a later cell's names, nor a name a
function of another cell binds for itself), each finding names the line it is about, and an
attribute of an object of the notebook's own looked up by a computed name is honest, while one of a
module or of anything that may hold the course's pieces is still not allowed."""
from __future__ import annotations

from autograder import exercise_rules
from course.rules import static_uses, suspicious

SETUP = "# GIVEN: setup.\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
# the chapter's GPT (another question's answer: F.dropout is allowed there)
GPT = """
class GPT(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for i in range(2)])

    def forward(self, x):
        return F.dropout(self.blocks[0](x), 0.1, self.training)
"""
# a GIVEN cell of a later section: its loop variable is `block`, its forward uses PyTorch's kernel
FAST = """# GIVEN: the fast path
class FastAttention(nn.Module):
    def forward(self, x):
        return F.dropout(F.scaled_dot_product_attention(x, x, x), 0.1, self.training)


def MakeFast(gpt):
    for block in gpt.blocks:
        block.__class__ = FastAttention
    return gpt
"""
# a later cell of another question, whose names a count by hand may use too
LATER = """
runs = {}
for p in (0.2, 0.0):
    runs[p] = GPT(8)
small = GPT(4)
print(sum(n.numel() for n in small.parameters()))
"""
Q6 = {"names": ["gpt_params"],
      "hint": "q6 asks for gpt_params worked out by hand, not code that counts ({name})",
      "pieces": [], "calls": ["torch.nn", "torch.numel"], "given": ["GPT", "model"],
      "methods": ["parameters", "named_parameters", "numel", "nelement", "state_dict"]}
BY_HAND = """
D, V, T = 128, 1024, 128
block = (D * 3 * D + 3 * D) + (D * D + D) + (D * 4 * D + 4 * D) + (4 * D * D + D) + 2 * (2 * D)
gpt_params = V * D + T * D + 4 * block + 2 * D
"""


def _q6(answer: str, later: str = LATER) -> str | None:
    """The verdict of q6's rules on a notebook of the setup, the GPT, ``answer``, the GIVEN fast
    path and ``later`` (the setup and the GIVEN cell are the blank notebook's)."""
    cells = [SETUP, GPT, answer, FAST, later]
    return exercise_rules.verdict(cells, [SETUP, FAST], Q6, "q6")


def test_a_count_by_hand_is_not_read_through_another_questions_code():
    """09 q6 written with named sizes: `block` is also the loop variable of a GIVEN function (which
    changes its own `block`, not the notebook's), and `p`, `small` are bound by later cells."""
    assert _q6(BY_HAND) is None
    for name in ("p", "small"):
        assert _q6(f"{name} = 4 * 128 * 128\ngpt_params = 1024 * 128 + {name}\n") is None, name
    # a comprehension's variable is its own, not an earlier cell's `n`
    earlier = "n = GPT(8)\n"
    assert _q6(earlier + "sizes = [1024 * 128, 128 * 128]\ngpt_params = sum(n for n in sizes)\n") is None


def test_code_that_counts_is_still_caught_and_the_message_names_its_line():
    said = _q6("D = 128\nblock = sum(p.numel() for p in GPT(D).parameters())\ngpt_params = 4 * block\n")
    assert said is not None and said.startswith(exercise_rules.MARK)
    assert "(in the line `block = sum(p.numel() for p in GPT(D).parameters())`)" in said, said
    counted = "sum(p.numel() for p in GPT(8).parameters())"
    for answer in (
            # the count, then the name rebound at a later cell's top level: read when it was used
            f"def count():\n    return D\nD = {counted}\ngpt_params = count()\nD = 128\n",
            # rebound after its use, but in a loop that comes back to the use
            f"D = 128\nfor i in range(2):\n    gpt_params = D\n    D = {counted}\n",
            # rebound between: the binding live where it is read
            f"D = 128\nD = {counted}\ngpt_params = D\n",
            f"D = 128\nif True:\n    D = {counted}\ngpt_params = D\n",
            # a generator's first iterable where it is made, the rest where it is consumed
            f"it = [{counted}]\ng = (x for x in it)\nit = [128]\ngpt_params = next(g)\n",
            # changed in place after its use (it is the same object)
            f"sizes = [128]\ngpt_params = sizes\nsizes.append({counted})\n",
            # a function that rebinds it, called before the use
            f"D = 128\ndef swap():\n    global D\n    D = {counted}\nswap()\ngpt_params = D\n"):
        assert _q6(answer) is not None, answer


OWN = """
class Pieces(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.embed = nn.Embedding(10, dim)
        self.out = nn.Linear(dim, 10)


class Big(Pieces):
    pass
"""
# 07 q2: counting the pieces of a big network, by their names
COUNTED = """
big = Big(8)
sizes = {}
for name in ["embed", "out"]:
    sizes[name] = sum(p.numel() for p in getattr(big, name).parameters())
for name, child in big.named_children():
    assert hasattr(big, name) and getattr(big, name) is child
n_params = sum(sizes.values())
"""


def _rules(code: str, given: str = "") -> tuple[list[str], list[str]]:
    """(what costs the rules point of n_params, what makes the row suspicious)."""
    cells = [SETUP, *([given] if given else []), code]
    template = [SETUP, *([given] if given else [])]
    return static_uses(cells, ["n_params"], template), suspicious(cells, given=template)


def test_an_attribute_of_the_notebooks_own_object_by_a_computed_name_is_honest():
    assert _rules(OWN + COUNTED) == ([], [])
    for made in ("Big(8).to('cpu').eval()", "nn.Sequential(nn.Linear(8, 8), Big(8))", "Pieces(8)"):
        assert _rules(OWN + COUNTED.replace("Big(8)", made)) == ([], []), made
    imported = "from torch.nn import Module\n" + OWN.replace("(nn.Module)", "(Module)")
    assert _rules(imported + COUNTED) == ([], [])


def test_a_computed_attribute_of_anything_else_is_still_not_allowed():
    computed = "computed name"
    for code, given in (
            # modules
            ("name = 'soft' + 'max'\nn_params = getattr(F, name)\n", ""),
            ("import course\nn_params = getattr(course, 'tiny' + 'denoiser')\n", ""),
            # an object of the course's, or of a class built on one
            ("from course.tinydenoiser import TinyDenoiser\nbig = TinyDenoiser(10)\n"
             "n_params = getattr(big, 'blo' + 'cks')\n", ""),
            ("from course.tinydenoiser import TinyDenoiser\nclass Big(TinyDenoiser):\n    pass\n"
             "big = Big(10)\nn_params = getattr(big, 'blo' + 'cks')\n", ""),
            # a class of a GIVEN cell (the course's code)
            ("big = Given()\nn_params = getattr(big, 'a' + 'b')\n",
             "# GIVEN: a class\nclass Given(nn.Module):\n    pass\n"),
            # a name that is not only such an object, or is what a lookup gave
            (OWN + "big = Big(8)\nbig = F\nn_params = getattr(big, 'a' + 'b')\n", ""),
            (OWN + "big = Big(8)\npiece = getattr(big, 'em' + 'bed')\n"
             "n_params = getattr(piece, 'we' + 'ight')\n", ""),
            (OWN + "big = Big(8)\nn_params = getattr(getattr(big, 'em' + 'bed'), 'we' + 'ight')\n", ""),
            (OWN + "big = Big(8)\nn_params = getattr(big.embed, 'we' + 'ight')\n", ""),
            (OWN + "for big in [Big(8)]:\n    n_params = getattr(big, 'em' + 'bed')\n", ""),
            # a class built on a ready-made piece, decorated, or whose .to is the notebook's own
            ("class Big(nn.MultiheadAttention):\n    pass\nbig = Big(8, 2)\n"
             "n_params = getattr(big, 'a' + 'b')\n", ""),
            ("def keep(c):\n    return c\n@keep\nclass Big(nn.Module):\n    pass\n"
             "big = Big()\nn_params = getattr(big, 'a' + 'b')\n", ""),
            (OWN + "def to(x):\n    return x\nbig = Big(8).to('cpu')\n"
             "n_params = getattr(big, 'a' + 'b')\n", "")):
        broken, odd = _rules(code, given)
        assert any(computed in b or "module" in b for b in broken), (code, broken)
        assert any(computed in o or "module" in o for o in odd), (code, odd)
    # setattr and delattr by a computed name stay on self only, also on the notebook's own objects
    broken, odd = _rules(OWN + "big = Big(8)\nsetattr(big, 'em' + 'bed', F.softmax)\nn_params = big\n")
    assert any(computed in b for b in broken) and any(computed in o for o in odd)
