"""The solutions' code (the master notebooks' cells tagged `reference`) as a namespace.

Benchmarks and tests train exactly the networks the solution notebooks define. When
`course.build.reference_namespace` exists and all the masters up to the one needed are in
solutions/, it is used;
until then the answers are exec'd from dev/reference_answers.py (the authors' scratch file).
"""
from __future__ import annotations

import math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / "dev" / "reference_answers.py"
CAUSAL_MARKER = "# ---- 08_causal"


def _base_namespace() -> dict:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from tqdm.auto import tqdm

    import course
    import course.stories

    namespace: dict = {"math": math, "torch": torch, "nn": nn, "F": F, "tqdm": tqdm}
    namespace.update({name: getattr(course, name) for name in course.__all__})
    namespace.update({name: value for name, value in vars(course.stories).items()
                      if not name.startswith("_")})
    return namespace


def _from_scratch_file(causal: bool) -> dict:
    source = SCRATCH.read_text()
    if not causal:
        source = source.split(CAUSAL_MARKER)[0]
    namespace = _base_namespace()
    exec(compile(source, str(SCRATCH), "exec"), namespace)
    return namespace


def _from_masters(upto: str) -> dict | None:
    """The lead's builder, if it is there and every master up to `upto` exists; else None."""
    try:
        from course.build import NAMES, reference_namespace
    except ImportError:
        return None
    needed = NAMES[:NAMES.index(upto) + 1]
    if not all((ROOT / "solutions" / f"{name}.ipynb").exists() for name in needed):
        return None
    return reference_namespace(upto)


def ReferenceNamespace(causal: bool = False) -> dict:
    """Names defined by the solutions: TrainTwoSentences, WithPosition, ..., MyTransformer
    (with `causal=` when `causal` is True, and WriteLeftToRight)."""
    upto = "08_causal" if causal else "07_my_transformer"
    return _from_masters(upto) or _from_scratch_file(causal)
