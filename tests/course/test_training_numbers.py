"""The numbers the page promises, at looser tolerances and few steps (the benchmarks measure them).

benchmarks/two_sentences.py trains for 1500 steps over 3 seeds; here one seed and fewer steps.
"""
from __future__ import annotations

import json
import math

import pytest
import torch

from benchmarks import stories as bench_stories
from benchmarks import two_sentences as bench_two
from benchmarks.reference import ReferenceNamespace


@pytest.fixture(scope="module")
def reference() -> dict:
    return ReferenceNamespace()


@pytest.fixture(scope="module")
def causal_reference() -> dict:
    return ReferenceNamespace(causal=True)


# ---- two sentences ----------------------------------------------------------------------------------
def test_no_talking_learns_the_word_frequencies_655(reference):
    got = bench_two.Measure("NoTalking", seed=0, steps=400, sentences=50, namespace=reference,
                            progress=False)
    assert abs(got["loss"] - 6.55) < 0.3, f"NoTalking ends at {got['loss']:.2f}, the page says 6.55"


def test_with_position_reaches_1_and_writes_a_third_nonsense(reference):
    got = bench_two.Measure("WithPosition", seed=0, steps=700, sentences=400, namespace=reference,
                            progress=False)
    assert abs(got["loss"] - 1.0) < 0.25, f"WithPosition ends at {got['loss']:.2f}, the page says 1.0"
    assert abs(got["nonsense"] - 2 * 0.8 * 0.2) < 0.1, f"nonsense {got['nonsense']:.2f}, expected ~0.32"


def test_one_head_transformer_closes_the_gap(reference):
    got = bench_two.Measure("MyTransformer", seed=0, steps=700, sentences=400, namespace=reference,
                            progress=False)
    assert got["loss"] < 0.8, f"MyTransformer (1 block, 1 head) ends at {got['loss']:.2f}, the page says 0.50"
    assert got["nonsense"] < 0.08, f"{got['nonsense']:.0%} nonsense, the page says nearly none"


def test_verdict_names_what_misses_the_targets():
    assert bench_two.Verdict("NoTalking", 6.6, 1.0) == []
    assert bench_two.Verdict("WithPosition", 1.05, 0.33) == []
    assert bench_two.Verdict("MyTransformer", 0.52, 0.0) == []
    assert len(bench_two.Verdict("WithPosition", 1.3, 0.1)) == 2
    assert bench_two.Verdict("MyTransformer", 0.7, 0.0) == ["loss 0.700 is above 0.6"]


def test_two_sentence_benchmark_ends_with_one_json_line(capsys):
    bench_two.main(["--steps", "30", "--seeds", "0", "--sentences", "10", "--no-progress"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    numbers = json.loads(last)
    assert numbers["benchmark"] == "two_sentences" and numbers["steps"] == 30
    for name in ["NoTalking", "WithPosition", "MyTransformer"]:
        assert set(numbers[name]) >= {"loss", "loss_per_seed", "nonsense", "within_targets"}


# ---- stories ------------------------------------------------------------------------------------------
def _copy_weights(net: torch.nn.Module, scale: float = 0.3, seed: int = 0) -> None:
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(scale * torch.randn_like(p))


@pytest.mark.parametrize("causal", [False, True])
def test_fused_heads_compute_the_same_function(reference, causal_reference, causal):
    namespace = causal_reference if causal else reference
    torch.manual_seed(1)
    kwargs = {"causal": True} if causal else {}
    net = namespace["MyTransformer"](50, dim=24, heads=3, layers=2, **kwargs)
    _copy_weights(net)
    x = torch.randint(50, (4, 11))
    want = net(x)
    params = bench_stories.ParameterCount(net)
    fused = bench_stories.Fused(net, causal=causal)
    assert bench_stories.ParameterCount(fused) == params
    assert torch.allclose(fused(x), want, atol=1e-5)
    for block in fused.blocks:
        block.attention.sdpa = False
    assert torch.allclose(fused(x), want, atol=1e-5)


def test_windows_are_consecutive_tokens_spread_through_the_text():
    tokens = torch.arange(1000)
    w = bench_stories.Windows(tokens, 5, 32)
    assert w.shape == (5, 32)
    assert torch.equal(w[:, 1:] - w[:, :-1], torch.ones(5, 31, dtype=torch.long))
    assert w[0, 0] == 0 and w[-1, 0] == 30 * 32                    # 31 whole windows: first and last
    assert bench_stories.Windows(tokens, 100, 32).shape == (31, 32)


@pytest.mark.parametrize("causal", [False, True])
def test_an_untrained_story_model_pays_the_uniform_76(reference, causal_reference, causal):
    """SmallStart makes a new network guess nearly uniformly: log(2002) = 7.60 per token."""
    namespace = causal_reference if causal else reference
    torch.manual_seed(0)
    net = namespace["MyTransformer"](2002, dim=32, heads=2, layers=1, **({"causal": True} if causal else {}))
    windows = torch.randint(2000, (64, 32))
    loss = bench_stories.LossPerToken(net, windows, causal, mask=2001, repeats=2)
    assert abs(loss - math.log(2002)) < (0.05 if causal else 0.2)    # diffusion: a noisy estimate
    again = bench_stories.LossPerToken(net, windows, causal, mask=2001, repeats=2)
    assert loss == again                                           # a fixed seed: the same number


def test_stories_benchmark_ends_with_one_json_line(shared_stories, capsys):
    bench_stories.main(["--steps", "2", "--eval-windows", "8", "--eval-repeats", "1",
                        "--speed-steps", "2", "--samples", "1", "--no-progress", "--threads", "1"])
    numbers = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert numbers["benchmark"] == "stories" and numbers["steps"] == 2
    for kind in ["diffusion", "causal"]:
        assert set(numbers[kind]) >= {"heldout_loss_per_token", "train_loss_per_token",
                                      "tokens_per_second"}
        assert 6.0 < numbers[kind]["heldout_loss_per_token"] < 8.0     # two steps: near uniform
        assert len(numbers[kind]["samples"]) == 1
    assert 6.0 < numbers["diffusion"]["heldout_loss_per_token_bernoulli"] < 8.0
    assert numbers["beta2"] == 0.95
    assert numbers["causal"]["samples"][0].startswith("once upon a time")
    assert numbers["speed"]["parameters"] == 1314514 and numbers["speed"]["ratio"] > 0


def test_stories_benchmark_can_train_with_the_bernoulli_loss(shared_stories, capsys):
    bench_stories.main(["--steps", "2", "--models", "diffusion", "--train-loss", "bernoulli",
                        "--eval-windows", "8", "--eval-repeats", "1", "--speed-steps", "1",
                        "--samples", "1", "--no-progress", "--threads", "1"])
    numbers = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert numbers["train_loss"] == "bernoulli" and "causal" not in numbers
    assert 6.0 < numbers["diffusion"]["heldout_loss_per_token"] < 8.0


def test_even_the_exact_guesser_writes_some_nonsense_at_t20():
    """Positions 2 and 4 are revealed at the same step 1 time in 20, then drawn independently."""
    assert bench_two.EXACT_NONSENSE == pytest.approx(0.016)
    assert abs(bench_two.Nonsense(None, sentences=1000, seed=0) - 0.016) < 0.012
