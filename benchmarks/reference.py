"""The solutions' code (the master notebooks' cells tagged `reference`) as a namespace.

Benchmarks and tests train exactly the networks the solution notebooks define.
"""
from __future__ import annotations

from instructor.build import reference_namespace


def ReferenceNamespace(causal: bool = False) -> dict:
    """Names defined by the solutions: TrainTwoSentences, WithPosition, ..., MyTransformer
    (with `causal=` when `causal` is True, and WriteLeftToRight)."""
    return reference_namespace("08_causal" if causal else "07_my_transformer")
