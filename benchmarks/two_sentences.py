"""Benchmark: the three two-sentence networks of the page, trained with the solutions' code.

    python benchmarks/two_sentences.py [--steps 1500] [--seeds 0 1 2]

Trains NoTalking, WithPosition and the 1-block 1-head MyTransformer with TrainTwoSentences
(notebook 01's answer: batches of 64 sentences, DiffusionLoss, Adam 1e-3) for every seed, and
reports the final loss (the mean of the last `--window` steps, as the page's window-averaged
plot shows it) and the fraction of nonsense among `--sentences` sentences undiffused with T=20.
The targets are the page's: 6.55, 1.0 and 0.50 for the losses; about 2 x 0.8 x 0.2 = 0.32
nonsense for WithPosition and (nearly) none for MyTransformer.

"Nearly" because even the exact guesser (GuessX0, also measured) writes nonsense at T=20:
Undiffuse reveals each position at a step drawn uniformly from the T steps, so positions 2
and 4 come out at the same step with probability 1/T = 0.05, and are then drawn independently
(nonsense with probability 0.32): 0.05 x 0.32 = 0.016. MyTransformer's target is therefore
at most 0.03 (the floor plus about two standard errors of a 1000-sentence count).
The last line printed is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.reference import ReferenceNamespace  # noqa: E402
from course import MASK, GuessX0, MakeGuesser, NonsenseFraction, Undiffuse, vocab  # noqa: E402
from course.training import Seed  # noqa: E402

# name: (target loss, tolerance or None for "at most target", target nonsense, tolerance)
TARGETS = {
    "NoTalking": {"loss": 6.55, "loss_tol": 0.15},
    "WithPosition": {"loss": 1.0, "loss_tol": 0.1, "nonsense": 0.32, "nonsense_tol": 0.05},
    "MyTransformer": {"loss_max": 0.60, "nonsense_max": 0.03},
}
EXACT_NONSENSE = 0.05 * 2 * 0.8 * 0.2     # GuessX0 at T=20: see the module docstring


def MakeNets(namespace: dict) -> dict[str, nn.Module]:
    """The page's three networks at the sizes it asks for, on the two-sentence vocabulary."""
    n = len(vocab)
    return {"NoTalking": namespace["NoTalking"](n),
            "WithPosition": namespace["WithPosition"](n),
            "MyTransformer": namespace["MyTransformer"](n, dim=32, heads=1, layers=1)}


def Nonsense(net: nn.Module | None, sentences: int = 1000, T: int = 20, seed: int = 0) -> float:
    """The fraction of `sentences` sentences written with Undiffuse(T) that are nonsense
    (net=None: the exact guesser GuessX0)."""
    torch.manual_seed(seed)
    if net is None:
        return NonsenseFraction([Undiffuse(GuessX0, T) for _ in range(sentences)])
    net.eval()
    guess = MakeGuesser(net, forbidden=[MASK])
    fraction = NonsenseFraction([Undiffuse(guess, T) for _ in range(sentences)])
    net.train()
    return fraction


def Measure(name: str, seed: int, steps: int, window: int = 100, sentences: int = 1000,
            namespace: dict | None = None, progress: bool = True) -> dict:
    """Train one of the three networks with one seed; its final loss and nonsense fraction."""
    namespace = namespace or ReferenceNamespace()
    Seed(seed)
    net = MakeNets(namespace)[name]
    train = namespace["TrainTwoSentences"]
    if progress:
        losses = train(net, steps=steps)
    else:                                   # the solutions' bar, silenced
        from unittest import mock
        with mock.patch.dict(namespace, tqdm=lambda it, **kw: it):
            losses = train(net, steps=steps)
    tail = losses[-window:]
    return {"loss": sum(tail) / len(tail), "nonsense": Nonsense(net, sentences, seed=seed)}


def Verdict(name: str, loss: float, nonsense: float) -> list[str]:
    """What misses the page's targets (an empty list if nothing does)."""
    target, misses = TARGETS[name], []
    if "loss" in target and abs(loss - target["loss"]) > target["loss_tol"]:
        misses.append(f"loss {loss:.3f} is not {target['loss']} +- {target['loss_tol']}")
    if "loss_max" in target and loss > target["loss_max"]:
        misses.append(f"loss {loss:.3f} is above {target['loss_max']}")
    if "nonsense" in target and abs(nonsense - target["nonsense"]) > target["nonsense_tol"]:
        misses.append(f"nonsense {nonsense:.3f} is not {target['nonsense']} +- {target['nonsense_tol']}")
    if "nonsense_max" in target and nonsense > target["nonsense_max"]:
        misses.append(f"nonsense {nonsense:.3f} is above {target['nonsense_max']}")
    return misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--window", type=int, default=100, help="steps averaged for the final loss")
    parser.add_argument("--sentences", type=int, default=1000, help="sentences for the nonsense count")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    namespace = ReferenceNamespace()
    results: dict = {"benchmark": "two_sentences", "steps": args.steps, "seeds": args.seeds,
                     "window": args.window, "sentences": args.sentences, "T": 20}
    failures = []
    for name in TARGETS:
        start = time.perf_counter()
        runs = [Measure(name, seed, args.steps, args.window, args.sentences, namespace,
                        progress=not args.no_progress) for seed in args.seeds]
        losses, nonsense = [r["loss"] for r in runs], [r["nonsense"] for r in runs]
        mean_loss, mean_nonsense = statistics.mean(losses), statistics.mean(nonsense)
        misses = Verdict(name, mean_loss, mean_nonsense)
        failures += [f"{name}: {m}" for m in misses]
        results[name] = {"loss": round(mean_loss, 4), "loss_per_seed": [round(x, 4) for x in losses],
                         "nonsense": round(mean_nonsense, 4),
                         "nonsense_per_seed": [round(x, 4) for x in nonsense],
                         "within_targets": not misses,
                         "seconds": round(time.perf_counter() - start, 1)}
        print(f"{name:14s} loss {mean_loss:.3f} (seeds: {', '.join(f'{x:.3f}' for x in losses)})  "
              f"nonsense at T=20 {mean_nonsense:.3f}  {'ok' if not misses else '; '.join(misses)}")
    exact = statistics.mean(Nonsense(None, args.sentences, seed=seed) for seed in args.seeds)
    results["GuessX0"] = {"nonsense": round(exact, 4), "expected": EXACT_NONSENSE}
    print(f"GuessX0 (the exact guesser): nonsense at T=20 {exact:.3f} (in theory {EXACT_NONSENSE:.3f})")
    results["within_targets"] = not failures
    print(json.dumps(results))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
