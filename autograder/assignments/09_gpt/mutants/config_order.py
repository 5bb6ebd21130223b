# question: q1
# expect: fail
# replaces: Config
# why: the fields in another order (dim before context)
from dataclasses import dataclass


@dataclass
class Config:
    vocab_size: int
    dim: int = 128
    context: int = 128
    heads: int = 4
    layers: int = 4
    dropout: float = 0.2
