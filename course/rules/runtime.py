"""The rules inside the submission's own process: a second signal only, which can take points
away and never give them (the verdicts are read from the code, on the grader's side)."""
from __future__ import annotations

import functools

from .allowed import FORBIDDEN_NAMES, forbidden_word


@functools.cache
def _mode_class() -> type:
    """The TorchFunctionMode that records into a set, made once (every request of a check enters a
    watch; making the class each time was most of its cost)."""
    from torch.overrides import TorchFunctionMode

    class _Mode(TorchFunctionMode):
        def __init__(self, used: set[str]) -> None:
            super().__init__()
            self.used = used

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            word = forbidden_word(name) if type(name) is str else None
            if word:
                self.used.add(word)
            return func(*args, **(kwargs or {}))

    return _Mode


class Watch:
    """Records forbidden torch functions and modules used while it is on (a TorchFunctionMode)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self._mode = None

    def __enter__(self) -> Watch:
        self._mode = _mode_class()(self.used)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None


def forbidden_modules(module) -> list[str]:
    """The forbidden nn modules inside ``module`` (found by their classes)."""
    import torch.nn as nn
    bad = tuple(getattr(nn, n) for n in FORBIDDEN_NAMES if hasattr(nn, n))
    if not isinstance(module, nn.Module):
        return []
    return sorted({f"uses nn.{type(m).__name__}" for m in module.modules() if isinstance(m, bad)})
