"""The rules inside the submission's own process: a second signal only, which can take points
away and never give them (the verdicts are read from the code, on the grader's side).

Two watches run while a request is answered:

- torch's operator profiler (the legacy one: no files, no threads, no output), which records every
  operator that enters the dispatcher on the answering thread, whoever called it: a tensor hook
  during ``backward()``, ``Tensor.apply_``'s callback, a forward hook, an ``autograd.Function``, a
  ``__torch_function__`` subclass, the notebook's own mode, code under ``DisableTorchFunction``, a
  GIVEN class's method. Its callbacks are thread-local state in C++, not a stack of Python modes
  that a callback could run beside; ``F.scaled_dot_product_attention`` is recorded under its own
  name before it is split into matmuls (a dispatch mode sees only the pieces of its CPU fallback);
- a TorchFunctionMode, for the forbidden pieces written in Python that leave no operator of their
  own behind (``F.multi_head_attention_forward``, which ``nn.MultiheadAttention`` runs when it
  returns the weights).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .allowed import FORBIDDEN_NAMES, forbidden_word

if TYPE_CHECKING:
    from torch.overrides import TorchFunctionMode

_SDPA = "F.scaled_dot_product_attention"
_MHA = "nn.MultiheadAttention"
# torch's operators behind the forbidden pieces, as the operator registry and the profiler name them
# (no overload): every backend of F.scaled_dot_product_attention, and the fused paths of
# nn.MultiheadAttention and nn.TransformerEncoderLayer. tests/course/test_runtime_watch.py checks
# it against torch's registry (every operator whose name speaks of attention is here).
FORBIDDEN_OPS: dict[str, str] = {
    "aten::scaled_dot_product_attention": _SDPA,
    "aten::_fused_sdp_choice": _SDPA,
    "aten::_scaled_dot_product_attention_math": _SDPA,
    "aten::_scaled_dot_product_attention_math_for_mps": _SDPA,
    "aten::_scaled_dot_product_flash_attention": _SDPA,
    "aten::_scaled_dot_product_flash_attention_backward": _SDPA,
    "aten::_scaled_dot_product_flash_attention_for_cpu": _SDPA,
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _SDPA,
    "aten::_scaled_dot_product_efficient_attention": _SDPA,
    "aten::_scaled_dot_product_efficient_attention_backward": _SDPA,
    "aten::_scaled_dot_product_cudnn_attention": _SDPA,
    "aten::_scaled_dot_product_cudnn_attention_backward": _SDPA,
    "aten::_scaled_dot_product_fused_attention_overrideable": _SDPA,
    "aten::_scaled_dot_product_fused_attention_overrideable_backward": _SDPA,
    "aten::_flash_attention_forward": _SDPA,
    "aten::_flash_attention_forward_no_dropout_inplace": _SDPA,
    "aten::_flash_attention_backward": _SDPA,
    "aten::_efficient_attention_forward": _SDPA,
    "aten::_efficient_attention_backward": _SDPA,
    "aten::_cudnn_attention_forward": _SDPA,
    "aten::_cudnn_attention_backward": _SDPA,
    "aten::_triton_scaled_dot_attention": _SDPA,
    "aten::_native_multi_head_attention": _MHA,
    "aten::_triton_multi_head_attention": _MHA,
    "aten::_transformer_encoder_layer_fwd": "nn.TransformerEncoderLayer",
}
# what the watch reports when it could not see the whole request: another profiler was on when it
# started (none is, in the course), or the profiler was switched off while the notebook answered
WATCH_BLIND = "code the runtime watch could not see (a profiler was switched on or off while answering)"


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


@functools.cache
def _profiler() -> tuple[Any, Any, Any]:
    """(enable, disable, config) of torch's legacy operator profiler, CPU events only: it records
    the name of every operator on this thread and the autograd engine's, and nothing else."""
    import torch
    from torch._C._autograd import _disable_profiler_legacy, _enable_profiler_legacy
    from torch.autograd import ProfilerConfig, ProfilerState
    config = ProfilerConfig(ProfilerState.CPU, False, False, False, False, False,
                            torch._C._profiler._ExperimentalConfig())
    return _enable_profiler_legacy, _disable_profiler_legacy, config


# the watches whose requests are under way on this thread, outermost first: a request answered
# inside another (a checking-side piece that calls the notebook back) is part of both
_open: list[Watch] = []
# whether the profiler running now is the watch's (it is not when another was on when it started)
_recording = [False]


def _collect() -> None:
    """Stop the profiler and give what it saw to every open watch. The profiler cannot nest, so a
    watch starting or ending inside another splits the outer one's recording in two."""
    if not _recording[0]:
        if _profiler_on():                    # one the watch did not start is recording instead
            for w in _open:
                w.used.add(WATCH_BLIND)
        return
    _recording[0] = False
    _, disable, _ = _profiler()
    try:
        events = disable()
    except RuntimeError:                      # switched off, or another profiler in its place
        events, seen = [], {WATCH_BLIND}
    else:
        seen = set()
    names = FORBIDDEN_OPS.keys() & {e.name() for thread in events for e in thread}
    seen.update(FORBIDDEN_OPS[n] for n in names)
    for w in _open:
        w.used.update(seen)


def _profiler_on() -> bool:
    from torch._C._autograd import _profiler_enabled
    return bool(_profiler_enabled())


def _start() -> None:
    enable, _, config = _profiler()
    try:
        enable(config)
        _recording[0] = True
    except RuntimeError:                      # another profiler is on: this request goes unseen
        for w in _open:
            w.used.add(WATCH_BLIND)


class Watch:
    """Records the forbidden pieces that ran while it is on: torch's operators behind them (the
    profiler) and the Python ones by name (a TorchFunctionMode)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self._mode: TorchFunctionMode | None = None     # a _mode_class() while the watch is on

    def __enter__(self) -> Watch:
        if _open:
            _collect()
        _open.append(self)
        _start()
        self._mode = _mode_class()(self.used)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None
        if self in _open:
            _collect()
            del _open[_open.index(self):]
            if _open:
                _start()


def forbidden_modules(module) -> list[str]:
    """The forbidden nn modules inside ``module`` (found by their classes)."""
    import torch.nn as nn
    bad = tuple(getattr(nn, n) for n in FORBIDDEN_NAMES if hasattr(nn, n))
    if not isinstance(module, nn.Module):
        return []
    return sorted({f"uses nn.{type(m).__name__}" for m in module.modules() if isinstance(m, bad)})
