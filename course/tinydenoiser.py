"""TinyDenoiser: the network the masked-diffusion page handed you, and its `Rotate`.

It is a transformer like your `MyTransformer(vocab_size)` (same width, heads, blocks, norms and
mlp), with two differences, which notebook 08 ("What you built") asks you to find:

1. All heads at once. One matrix `qkv` makes the queries, keys and values of every head together,
   and a reshape makes "which head" one more index of the tensor. The same calculation as a list
   of heads called one by one, only faster.
2. Position by rotation. There is no table of position vectors. Instead each query and key is
   rotated by an angle proportional to its position (`Rotate`, the rotary position embedding of
   Su et al., RoFormer, 2021), so that the energy E_ij depends on how far apart i and j are.

    net = TinyDenoiser(len(story_vocab))      # 1,306,322 parameters with 2002 tokens
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from .nets import SmallStart


def Rotate(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate the vector at position i (the second-to-last index) by angles proportional to i.

    x has shape (..., L, d) with d even. The components are taken in pairs (0, 1), (2, 3), ...;
    pair p of the vector at position i is turned, as a little 2-d arrow, by the angle
    i * base**(-2p/d): fast turns for the first pairs, very slow ones for the last.

    Why: turning two arrows by angles a and b changes their dot product only through a - b. So
    Rotate(q)[i] . Rotate(k)[j] depends on the positions only through i - j, how far apart they are.
    """
    L, d = x.shape[-2], x.shape[-1]
    position = torch.arange(L, device=x.device, dtype=x.dtype)                          # (L,)
    speed = base ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)        # (d/2,)
    angle = position[:, None] * speed[None, :]                                          # (L, d/2)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]                        # the two components of every pair
    turned = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1)   # (..., L, d/2, 2)
    return turned.flatten(-2)                                # back to (..., L, d), pairs in place


class AllHeads(nn.Module):
    """MultiHead with every head computed at once, and queries and keys rotated by position."""

    def __init__(self, dim: int, heads: int, causal: bool = False):
        super().__init__()
        self.heads = heads
        self.see_everything = not causal                      # False: site i hears only j <= i
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)        # Q, K and V of all heads: one matrix
        self.mix = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:      # x: (batch, L, dim)
        batch, L, dim = x.shape
        head_dim = dim // self.heads
        qkv = self.qkv(x).view(batch, L, 3, self.heads, head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)                  # each (batch, heads, L, head_dim)
        q, k = Rotate(q), Rotate(k)                           # position goes in here
        dots = q @ k.transpose(-2, -1) / math.sqrt(head_dim)  # minus the energies, every head
        if not self.see_everything:
            future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=x.device), diagonal=1)
            dots = dots.masked_fill(future, -math.inf)
        weights = torch.softmax(dots, dim=-1)                 # (batch, heads, L, L)
        self.weights = weights.detach()                       # a copy to look at later
        out = weights @ v                                     # (batch, heads, L, head_dim)
        out = out.transpose(1, 2).reshape(batch, L, dim)      # the heads side by side again
        return self.mix(out)


class DenoiserBlock(nn.Module):
    """A block exactly like yours: x + attention(norm1(x)), then x + mlp(norm2(x))."""

    def __init__(self, dim: int, heads: int, causal: bool = False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)                        # before talking
        self.attention = AllHeads(dim, heads, causal)
        self.norm2 = nn.LayerNorm(dim)                        # before thinking
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),      # 4 times wider,
                                 nn.Linear(4 * dim, dim))                 # and back

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))                 # talk
        x = x + self.mlp(self.norm2(x))                       # think
        return x


class TinyDenoiser(nn.Module):
    """Tokens (batch, L) -> logits (batch, L, vocab_size); also one sentence (L,) -> (L, vocab_size).

    Your MyTransformer without the position table: position enters through Rotate in every
    attention instead, so any length works (there is no max_length).
    """

    def __init__(self, vocab_size: int, dim: int = 128, heads: int = 4, layers: int = 4,
                 causal: bool = False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)            # no position table
        self.blocks = nn.ModuleList([DenoiserBlock(dim, heads, causal) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)                         # the last norm
        self.out = nn.Linear(dim, vocab_size)                 # a vector -> one logit per token
        SmallStart(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 1:                                      # one sentence: a batch of one
            return self.forward(x[None])[0]
        h = self.embed(x)
        for block in self.blocks:                             # talk and think, layers times
            h = block(h)
        return self.out(self.norm(h))                         # logits
