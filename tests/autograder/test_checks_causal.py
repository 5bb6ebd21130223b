"""autograder.checks.nb08.causal and .writing: 08's switch handed on, and WriteLeftToRight read with
pretend networks, against right and broken pieces (fast, in-process)."""
from __future__ import annotations

import pytest
import torch
from checks_helpers import notebook

from autograder.checks import Hint, reference
from autograder.checks.nb08 import causal, writing

PIECES = '''
def Attention(q, k, v, causal=False):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
    w = torch.softmax(dots, dim=-1)
    return w @ v, w

class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.causal = causal
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
    def forward(self, x):
        out, w = Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)
        self.weights = w.detach()
        return out

class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal) for _ in range(heads)])
        self.mix = nn.Linear(dim, dim)
    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
'''


def test_the_reference_attention_is_causal_with_the_switch_only():
    q, k, v = torch.randn(3, 5, 4)
    out, w = reference.causal_attention(q, k, v, causal=True)
    assert (w.triu(1) == 0).all() and torch.allclose(w.sum(-1), torch.ones(5))
    assert torch.allclose(reference.causal_attention(q, k, v)[1], reference.attention_weights(q, k))


def test_gates_of_the_switch():
    with notebook(PIECES) as nb:
        assert causal.attention_computes(nb.Attention) and causal.switch_used(nb.Attention, nb.Head)
    with notebook(PIECES.replace("if causal:", "if False:").replace(", causal=self.causal)", ")")) as nb:
        assert causal.attention_computes(nb.Attention) and not causal.switch_used(nb.Attention, nb.Head)


def test_multihead_hands_causal_on_or_is_told_so():
    torch.manual_seed(0)
    with notebook(PIECES) as nb:
        causal.hands_on(causal.MULTIHEAD, nb.MultiHead, nb.Head, [(8, 2)])
    forgets = PIECES.replace("Head(dim, dim // heads, causal)", "Head(dim, dim // heads)")
    with notebook(forgets) as nb, pytest.raises(Hint, match="hand causal on to every Head"):
        causal.hands_on(causal.MULTIHEAD, nb.MultiHead, nb.Head, [(8, 2)])
    with notebook(forgets) as nb:
        made = causal.handed_on(nb.MultiHead, "Head", lambda: nb.MultiHead(8, 2, causal=True))
        assert made == [False, False]


WRITE = '''
from course.stories import StoryText, StoryTokens, STORY_MASK, STORY_UNK
def WriteLeftToRight(net, start, L=32, temperature=1.0, position=-1):
    x = StoryTokens(start)
    while len(x) < L:
        logits = net(x[None])[0, position] / temperature
        logits[[STORY_MASK, STORY_UNK]] = -math.inf
        x = torch.cat([x, torch.multinomial(torch.softmax(logits, -1), 1)])
    return StoryText(x)
'''


def test_pretend_networks_find_which_position_a_writer_reads():
    torch.manual_seed(0)
    last, elsewhere = writing.some_words(2)
    for code, wrote in [(WRITE, last), (WRITE.replace("position=-1", "position=0"), elsewhere)]:
        with notebook(code) as nb:
            net = writing.last_and_elsewhere(writing.favour([last], [30.0]),
                                             writing.favour([elsewhere], [30.0]))
            assert writing.story(nb.WriteLeftToRight(net, "the big", L=6))[2:].tolist() == [wrote] * 4
    with notebook(WRITE) as nb:
        a, b = writing.some_words(2)
        logits = writing.favour([a, b], [2.0, 0.0])
        net = writing.last_and_elsewhere(logits, logits)
        share = writing.fractions(nb.WriteLeftToRight, net, 1.0, 2, (a, b))
        assert 0.6 < share[0] < 0.99 and share[0] + share[1] == 1


def test_a_writer_cannot_change_the_pretend_networks_numbers():
    """The fixed-logit pretend network lives in the notebook's process; its numbers
    are in a closure (no buffers to overwrite) and every call answers with a new tensor."""
    tamper = WRITE.replace("    x = StoryTokens(start)\n",
                           "    x = StoryTokens(start)\n    for b in net.buffers():\n        b.fill_(0)\n"
                           "    net(x[None])[0].fill_(0)\n")
    torch.manual_seed(0)
    last, elsewhere = writing.some_words(2)
    with notebook(tamper) as nb:
        net = writing.last_and_elsewhere(writing.favour([last], [30.0]), writing.favour([elsewhere], [30.0]))
        assert net.buffers() == {}
        assert writing.story(nb.WriteLeftToRight(net, "the big", L=6))[2:].tolist() == [last] * 4
