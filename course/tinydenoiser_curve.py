"""TinyDenoiser's loss per token on the stories, from one run of the solutions' recipe.

Made by (do not edit by hand)

    python benchmarks/stories.py --models tinydenoiser --steps 5000 --write-curve course/tinydenoiser_curve.py

TinyDenoiser(2002) trained with DiffusionLoss as in notebook 07
(batch 64, L 32, Adam lr 0.001, betas (0.9, 0.95), seed 0) on 477,116 tokens
of TinyStories, on cpu (AMD EPYC, 2 cores, torch 2.13.0+cpu, 1 threads).
Held-out loss per token at the end: 3.582.

STEPS[n] is a training step and LOSS[n] the loss per token averaged over the 100 steps
up to it (what PlotLosses draws). TinyDenoiserCurve(steps) cuts the curve at `steps`.
"""
from __future__ import annotations

WINDOW = 100
STEPS = list(range(25, 5001, 25))
LOSS = [
    6.329, 5.905, 5.787, 5.704, 5.485, 5.477, 5.438, 5.421, 5.397, 5.379, 5.365, 5.352,
    5.338, 5.314, 5.290, 5.253, 5.221, 5.179, 5.125, 5.074, 4.994, 4.922, 4.886, 4.828,
    4.792, 4.763, 4.705, 4.664, 4.632, 4.588, 4.571, 4.540, 4.517, 4.497, 4.449, 4.426,
    4.398, 4.382, 4.360, 4.330, 4.310, 4.271, 4.274, 4.277, 4.267, 4.270, 4.247, 4.213,
    4.191, 4.186, 4.172, 4.177, 4.177, 4.150, 4.137, 4.131, 4.118, 4.100, 4.090, 4.085,
    4.067, 4.070, 4.068, 4.055, 4.050, 4.031, 4.022, 4.008, 4.001, 4.002, 3.991, 3.983,
    3.977, 3.984, 3.967, 3.977, 3.994, 3.959, 3.952, 3.936, 3.898, 3.899, 3.902, 3.880,
    3.891, 3.893, 3.886, 3.908, 3.894, 3.893, 3.899, 3.872, 3.878, 3.879, 3.878, 3.866,
    3.862, 3.860, 3.844, 3.862, 3.836, 3.821, 3.822, 3.800, 3.812, 3.803, 3.786, 3.786,
    3.777, 3.771, 3.773, 3.776, 3.775, 3.774, 3.764, 3.769, 3.770, 3.762, 3.769, 3.751,
    3.747, 3.745, 3.744, 3.756, 3.753, 3.768, 3.757, 3.742, 3.737, 3.721, 3.725, 3.723,
    3.720, 3.725, 3.719, 3.718, 3.703, 3.683, 3.672, 3.647, 3.642, 3.644, 3.647, 3.656,
    3.657, 3.661, 3.646, 3.667, 3.664, 3.655, 3.661, 3.630, 3.627, 3.621, 3.618, 3.628,
    3.637, 3.627, 3.620, 3.625, 3.606, 3.629, 3.634, 3.643, 3.649, 3.635, 3.625, 3.595,
    3.583, 3.576, 3.581, 3.577, 3.593, 3.603, 3.614, 3.615, 3.593, 3.583, 3.565, 3.567,
    3.578, 3.565, 3.561, 3.564, 3.563, 3.579, 3.584, 3.586, 3.576, 3.563, 3.555, 3.546,
    3.556, 3.568, 3.582, 3.587, 3.583, 3.567, 3.577, 3.562,
]
HELDOUT_LOSS_PER_TOKEN = 3.582


def TinyDenoiserCurve(steps: int | None = None) -> tuple[list[int], list[float]]:
    """(steps, loss per token) of the course's TinyDenoiser run, up to `steps` steps."""
    keep = [i for i, s in enumerate(STEPS) if steps is None or s <= steps]
    return [STEPS[i] for i in keep], [LOSS[i] for i in keep]
