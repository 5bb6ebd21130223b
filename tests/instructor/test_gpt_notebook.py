"""Notebook 09 (the chapter's GPT): the earlier answers kept apart in `page`, and the sizes it teaches."""
import math

import pytest
import torch

from instructor import build, masters

NAME = "09_gpt"
EXTENSION = "10_gpt_extension"
pytestmark = pytest.mark.skipif(NAME not in build.masters(), reason="09 not written yet")


def test_other_notebooks_get_their_given_cells_as_before():
    """Only a notebook in NAMESPACES gets the namespaced cell; the others' cells are unchanged."""
    for name in build.registry.notebooks()[1:]:
        if name in build.NAMESPACES or build._spaced_before(name):
            continue
        assert build.given_earlier_code(name) == "\n\n\n".join(
            [build.GIVEN_EARLIER_HEADER] + build.earlier_reference_code(name))
        assert build.given_pieces(name) == build.earlier_reference_code(name)


def test_the_extension_gets_the_page_and_the_chapters_gpt_whole():
    """After 09, the given cell is 09's (the page's pieces in `page`), then 09's answers at the top
    level, whole: the chapter's model.py, which 10 starts from."""
    code = build.given_earlier_code(EXTENSION)
    assert code.startswith(build.given_earlier_code(NAME))
    after = code[len(build.given_earlier_code(NAME)):]
    for piece in build.reference_code(NAME):
        assert piece in after
    top_level = build.given_pieces(EXTENSION)[len(build.given_pieces(NAME)):]
    assert [n for piece in top_level for n in build.defined_names(piece)] == \
        ["Config", "SelfAttention", "MLP", "Block", "GPT"]
    space: dict = dict(build.reference_namespace("08_causal"))
    exec(code, space)
    assert sum(p.numel() for p in space["GPT"](space["Config"](vocab_size=1024)).parameters()) == 940_800
    assert space["page"].Block is not space["Block"]


def test_given_cell_keeps_the_latest_version_of_each_piece():
    code = build.given_earlier_code(NAME)
    names = [n for piece in build.latest_definitions(build.earlier_reference_code(NAME))
             for n in build.defined_names(piece)]
    assert len(names) == len(set(names)), "a name is defined twice in the namespace"
    assert {"MyTransformer", "Block", "Attention", "WriteLeftToRight", "TrainTwoSentences"} <= set(names)
    assert code.count("class MyTransformer(") == 1 and "causal=False" in code
    assert code.rstrip().endswith("page = _make_page()")
    compile(code, "<given>", "exec")


def test_page_pieces_use_each_other_whatever_the_notebook_defines_later():
    """The chapter's Block(cfg) defined after the given cell must not reach page.MyTransformer."""
    ns = build.reference_namespace("08_causal")
    plain_names = {k: ns[k] for k in ("math", "torch", "nn", "F", "tqdm", "SmallStart")}
    space: dict = dict(plain_names)
    exec(build.given_earlier_code(NAME), space)

    class Block(torch.nn.Module):           # the chapter's signature, the page's name
        def __init__(self, cfg):
            raise AssertionError("page.MyTransformer used the notebook's Block")
    space["Block"] = Block

    page = space["page"]
    torch.manual_seed(0)
    net = page.MyTransformer(2002, causal=True)
    assert sum(p.numel() for p in net.parameters()) == 1_314_514
    x = torch.randint(0, 2002, (2, 7))
    y = x.clone()
    y[:, -1] = (y[:, -1] + 1) % 2002
    with torch.no_grad():
        assert torch.allclose(net(x)[:, :-1], net(y)[:, :-1])
    assert page.Block is not Block
    assert page.Attention(*torch.randn(3, 4, 8), causal=True)[1].triu(1).abs().max() == 0


def test_reference_namespace_of_09_mirrors_the_notebook():
    ns = build.reference_namespace(NAME)
    assert "MyTransformer" not in ns and "page" in ns          # the page's pieces only in `page`
    GPT, Config = ns["GPT"], ns["Config"]
    assert sum(p.numel() for p in GPT(Config(vocab_size=1024)).parameters()) == 940_800
    stories = GPT(Config(vocab_size=2002))
    assert sum(p.numel() for p in stories.parameters()) == 1_065_984
    assert stories.head.weight is stories.tokens.weight        # tying saves a 2002 x 128 table
    assert 1_065_984 + 2002 * 128 == 1_322_240
    assert sum(p.numel() for p in ns["page"].MyTransformer(2002).parameters()) == 1_314_514


def test_the_chapter_checks_pass_on_the_solution():
    ns = build.reference_namespace(EXTENSION)           # 09's GPT, and 10's fast path beside it
    GPT, Config = ns["GPT"], ns["Config"]
    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, dropout=0.0)
    model = GPT(cfg).eval()
    ids, targets = torch.randint(0, 1024, (2, 2, 16))
    with torch.no_grad():
        logits = model(ids)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, 1024), targets.view(-1)).item()
        assert abs(loss - math.log(1024)) < 0.15
        fast = ns["MakeFast"](model)
        assert torch.allclose(fast(ids), logits, atol=1e-5)
        a, b = torch.tensor([[1, 5, 6, 7, 8, 9]]), torch.tensor([[1, 5, 6, 7, 8, 3]])
        assert torch.allclose(model(a)[:, :5], model(b)[:, :5], atol=1e-5)


def chapter_namespace() -> dict:
    """The solution's reference namespace plus the definitions (def, class, and names bound to plain
    literals) of the other code cells of 09 and its extension, 10: the GIVEN Suspect, the three checks,
    MakeFast and GPTWeights."""
    import ast

    ns = build.reference_namespace(EXTENSION)
    for cell in build.read_master(NAME).cells + build.read_master(EXTENSION).cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or "reference" in tags or "given-earlier" in tags:
            continue
        try:
            tree = ast.parse(masters.answer_code(cell.source))
        except SyntaxError:
            continue
        keep = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                keep.append(node)
            elif isinstance(node, ast.Assign):
                try:
                    ast.literal_eval(node.value)
                except ValueError:
                    continue
                keep.append(node)
        exec(compile(ast.Module(body=keep, type_ignores=[]), f"<{NAME}>", "exec"), ns)
    return ns


def test_the_checks_can_say_no():
    """The chapter's three checks as the solution writes them: each says no to the GIVEN suspects
    with a bug and to a model that peeks, and the starting loss is the cross entropy itself."""
    ns = chapter_namespace()
    Config, Suspect, SameAsPyTorch = ns["Config"], ns["Suspect"], ns["SameAsPyTorch"]
    cfg = Config(vocab_size=1024, dropout=0.0)
    torch.manual_seed(0)
    x = torch.randn(2, 16, cfg.dim)
    with torch.no_grad():
        said = {bug: SameAsPyTorch(Suspect(cfg, bug).eval(), x) for bug in ns["SUSPECT_BUGS"]}
        assert said.pop(None) is True and not any(said.values()), said
        model = ns["GPT"](cfg).eval()
        a, b = torch.tensor([[1, 5, 6, 7, 8, 9]]), torch.tensor([[1, 5, 6, 7, 8, 3]])
        assert ns["NoPeeking"](model, a, b) is True
        assert ns["NoPeeking"](ns["page"].MyTransformer(1024, causal=False).eval(), a, b) is False
        ids, targets = torch.randint(0, 1024, (2, 2, 16))
        loss = torch.nn.functional.cross_entropy(model(ids).reshape(-1, 1024), targets.reshape(-1)).item()
        assert ns["StartingLoss"](model, ids, targets) == pytest.approx(loss, rel=1e-6)


def test_fast_path_and_gpt_weights_need_nothing_the_questions_leave_open():
    """MakeFast works for a SelfAttention without self.drop (F.dropout is accepted), and GPTWeights
    has the chapter's names, sizes and tied head (what CopyToMyTransformer reads)."""
    ns = chapter_namespace()
    F = torch.nn.functional

    class NoDrop(ns["SelfAttention"]):
        def __init__(self, cfg):
            super().__init__(cfg)
            del self.drop
            self.p = cfg.dropout

        def forward(self, x):
            B, T, D = x.shape
            q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2)
                       for t in self.qkv(x).split(D, dim=-1))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
            return F.dropout(self.out(y), self.p, training=self.training)

    Config, GPT = ns["Config"], ns["GPT"]
    cfg = Config(vocab_size=50, context=16, dim=32, heads=4, layers=2, dropout=0.0)
    torch.manual_seed(0)
    net = GPT(cfg).eval()
    for block in net.blocks:
        block.attn.__class__ = NoDrop
        del block.attn.drop
        block.attn.p = 0.0
    ids = torch.randint(0, 50, (3, 16))
    with torch.no_grad():
        assert torch.allclose(ns["MakeFast"](net)(ids), net(ids), atol=1e-5)
    weights = ns["GPTWeights"](cfg)
    assert weights.head.weight is weights.tokens.weight
    mine = {n: tuple(t.shape) for n, t in weights.state_dict().items()}
    theirs = {n: tuple(t.shape) for n, t in GPT(cfg).state_dict().items()}
    assert mine == theirs
