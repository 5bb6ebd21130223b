"""Notebook 09 (the chapter's GPT): the earlier answers kept apart in `page`, and the sizes it teaches."""
import math

import pytest
import torch

from instructor import build

NAME = "09_gpt"
pytestmark = pytest.mark.skipif(NAME not in build.masters(), reason="09 not written yet")


def test_other_notebooks_get_their_given_cells_as_before():
    """Only a notebook in NAMESPACES gets the namespaced cell; the others' cells are unchanged."""
    for name in build.NAMES[1:]:
        if name in build.NAMESPACES:
            continue
        assert build.given_earlier_code(name) == "\n\n\n".join(
            [build.GIVEN_EARLIER_HEADER] + build.earlier_reference_code(name))
        assert build.given_pieces(name) == build.earlier_reference_code(name)


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
    ns = build.reference_namespace(NAME)
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
