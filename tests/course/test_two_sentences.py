"""The two-sentence world and the diffusion tools behave as the page says."""
import math

import pytest
import torch
from torch import nn

from course import (
    MASK,
    Decode,
    DiffusionLoss,
    Encode,
    GuessX0,
    MakeGuesser,
    NonsenseFraction,
    NoTalking,
    SamplePInit,
    SentenceCounts,
    Undiffuse,
    UndiffuseGreedy,
    UndiffuseTemperature,
    vocab,
)


class Exact(nn.Module):
    """The exact guesser as a network: logits = log GuessX0."""

    def forward(self, x):
        cache = {}                      # only 16 masked patterns of two sentences exist
        rows = [cache.setdefault(tuple(s.tolist()), GuessX0(s)) for s in x]
        return torch.stack(rows).clamp_min(1e-30).log()


class Frequencies(nn.Module):
    """Knows only how often each word appears anywhere: the best NoTalking can do."""

    def forward(self, x):
        counts = torch.zeros(len(vocab))
        for sentence, p in (("the cat is alive", 0.8), ("the box is empty", 0.2)):
            counts[Encode(sentence)] += p
        return (counts / counts.sum()).clamp_min(1e-30).log().expand(*x.shape, len(vocab))


def test_encode_decode_round_trip():
    assert Encode("the cat is alive").tolist() == [0, 1, 3, 4]
    assert Decode(Encode("nobody knows if the box is empty")) == "nobody knows if the box is empty"
    assert vocab[MASK] == "_"


def test_sample_p_init_frequencies():
    draws = [Decode(SamplePInit()) for _ in range(20000)]
    assert set(draws) == {"the cat is alive", "the box is empty"}
    share = draws.count("the cat is alive") / len(draws)
    assert abs(share - 0.8) < 0.015          # 5 standard deviations of a 20000-draw estimate


@pytest.mark.parametrize("sentence, cat, box", [
    ("_ _ _ _", 0.8, 0.2), ("_ _ is alive", 1.0, 0.0), ("the _ _ empty", 0.0, 1.0)])
def test_guess_x0_exact_probabilities(sentence, cat, box):
    p = GuessX0(Encode(sentence))
    assert p.shape == (4, len(vocab))
    assert torch.allclose(p.sum(-1), torch.ones(4))
    assert p[1, vocab.index("cat")].item() == pytest.approx(cat)
    assert p[1, vocab.index("box")].item() == pytest.approx(box)
    assert p[0, vocab.index("the")].item() == pytest.approx(1.0)


def test_guess_x0_keeps_unmasked_tokens():
    x = Encode("the cat is alive")
    x[3] = MASK
    p = GuessX0(x)
    assert p[3, vocab.index("alive")] == pytest.approx(1.0)


def test_diffusion_loss_of_exact_guesser_is_the_entropy():
    x_0 = torch.stack([SamplePInit() for _ in range(40000)])
    entropy = -(0.8 * math.log(0.8) + 0.2 * math.log(0.2))      # 0.500
    assert DiffusionLoss(Exact(), x_0, MASK).item() == pytest.approx(entropy, abs=0.02)


def test_diffusion_loss_of_frequency_guesser_is_6_55():
    x_0 = torch.stack([SamplePInit() for _ in range(20000)])
    p = torch.tensor([0.25, 0.25, 0.2, 0.2, 0.05, 0.05])
    expected = -4 * (p * p.log()).sum().item()                  # 4 x 1.64 = 6.55
    assert expected == pytest.approx(6.55, abs=0.01)
    assert DiffusionLoss(Frequencies(), x_0, MASK).item() == pytest.approx(expected, abs=0.1)


def test_diffusion_loss_masks_exactly_t_of_the_positions():
    seen = []

    def spy(x_t: torch.Tensor) -> torch.Tensor:
        seen.append(x_t.clone())
        return torch.zeros(*x_t.shape, 7)                       # every word equally likely
    x_0 = torch.randint(0, 6, (6000, 5))
    loss = DiffusionLoss(spy, x_0, 6)
    # Every sentence pays (T/t) * t * log 7 = L log 7: no noise from how many got masked.
    assert loss.item() == pytest.approx(5 * math.log(7), rel=1e-6)
    counts = (seen[0] == 6).sum(dim=1)
    share = torch.bincount(counts, minlength=6).float() / len(counts)
    assert share[0] == 0 and torch.allclose(share[1:], torch.full((5,), 0.2), atol=0.03)
    where = (seen[0] == 6).float().mean(dim=0)                  # every position equally often
    assert torch.allclose(where, torch.full((5,), 0.6), atol=0.03)
    kept = seen[0] != 6
    assert torch.equal(seen[0][kept], x_0[kept])


def test_diffusion_loss_with_other_t_masks_the_right_share_on_average():
    seen = []

    def spy(x_t: torch.Tensor) -> torch.Tensor:
        seen.append(x_t.clone())
        return torch.zeros(*x_t.shape, 7)
    x_0 = torch.randint(0, 6, (20000, 4))
    loss = DiffusionLoss(spy, x_0, 6, T=10)
    assert loss.item() == pytest.approx(4 * math.log(7), rel=0.03)
    assert (seen[0] == 6).float().mean().item() == pytest.approx(0.55, abs=0.01)   # mean of t/10


def test_diffusion_loss_is_differentiable_and_trains():
    net = NoTalking(len(vocab))
    x_0 = torch.stack([SamplePInit() for _ in range(64)])
    loss = DiffusionLoss(net, x_0, MASK)
    loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in net.parameters())


def test_undiffuse_exact_guesser_nonsense_falls_with_more_steps():
    one_step = NonsenseFraction([Undiffuse(GuessX0, 1) for _ in range(3000)])
    twenty = NonsenseFraction([Undiffuse(GuessX0, 20) for _ in range(3000)])
    assert one_step == pytest.approx(2 * 0.8 * 0.2, abs=0.04)
    assert twenty < 0.06


def test_undiffuse_reveals_everything_and_keeps_given_words():
    start = torch.tensor([MASK, MASK, vocab.index("is"), vocab.index("empty")])
    for _ in range(50):
        x = Undiffuse(GuessX0, 5, start=start)
        assert Decode(x) == "the box is empty"
    assert (UndiffuseGreedy(GuessX0, 4) != MASK).all()


def test_undiffuse_temperature_sharpens():
    cold = [Decode(UndiffuseTemperature(GuessX0, 1, temperature=0.05)) for _ in range(300)]
    assert cold.count("the cat is alive") / 300 > 0.95


def test_sentence_counts():
    xs = [Encode("the cat is alive"), Encode("the cat is empty"), Encode("nobody knows if the")]
    counts = SentenceCounts(xs)
    assert counts["the cat is alive"] == 1 and counts["the cat is empty"] == 1
    assert counts["other"] == 1
    assert NonsenseFraction(xs) == pytest.approx(2 / 3)


def test_make_guesser_forbids_exactly():
    net = NoTalking(len(vocab))
    guess = MakeGuesser(net, forbidden=[MASK, 0])
    p = guess(Encode("the cat is alive"))
    assert p.shape == (4, len(vocab))
    assert (p[:, MASK] == 0).all() and (p[:, 0] == 0).all()
    assert torch.allclose(p.sum(-1), torch.ones(4))
