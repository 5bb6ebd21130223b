"""The page's GIVEN network pieces: the device, MakeGuesser, NoTalking, SmallStart, NextTokenLoss."""
from __future__ import annotations

import math
from collections.abc import Iterable

import torch
import torch.nn as nn
import torch.nn.functional as F


def pick_device() -> str:
    """'cuda' if there is an NVIDIA GPU, else 'mps' on an Apple GPU, else 'cpu'."""
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


device = pick_device()


def MakeGuesser(net: nn.Module, forbidden: Iterable[int] = ()):
    """Wrap a network as a guessing function for Undiffuse: x_t (L,) -> probabilities (L, vocab_size).

    `forbidden` lists tokens that the guess may never be (their probability is exactly 0).
    """
    forbidden = list(forbidden)

    def Guess(x_t: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            logits = net(x_t[None].to(next(net.parameters()).device))[0].float().cpu()
        logits[:, forbidden] = -math.inf
        return logits.softmax(dim=-1)
    return Guess


class NoTalking(nn.Module):
    """The simplest network with the right shape: each position guesses on its own."""

    def __init__(self, vocab_size: int, dim: int = 32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)   # stage 1: one vector per token
        self.out = nn.Linear(dim, vocab_size)        # stage 3: a vector -> one logit per token

    def forward(self, x: torch.Tensor) -> torch.Tensor:   # x: (batch, L) integers
        return self.out(self.embed(x))                     # (batch, L, vocab_size)


def SmallStart(net: nn.Module) -> None:
    """Start every table and matrix small (std 0.02), so a new network is not confidently wrong."""
    for piece in net.modules():
        if isinstance(piece, (nn.Linear, nn.Embedding)):
            nn.init.normal_(piece.weight, std=0.02)


def NextTokenLoss(net: nn.Module, x_0: torch.Tensor) -> torch.Tensor:
    """Loss of a left-to-right model: from tokens 0..L-2 guess tokens 1..L-1 (cross entropy per token)."""
    logits = net(x_0[:, :-1])
    return F.cross_entropy(logits.transpose(1, 2), x_0[:, 1:])
