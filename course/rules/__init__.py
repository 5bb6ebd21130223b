"""The page's rules: your own code, built from what the course allows, and no ready-made
transformer pieces in the code that is graded.

The reading is in small modules of this package, one job each: ``allowed`` (what may be used, as
data) and ``resolve`` (how a chain is resolved against the real modules), ``magics`` (IPython
syntax as Python), ``scopes`` (the first pass: scopes and bindings), ``checker`` (the second pass:
findings, by job: ``visitor``, ``chains``, ``calls``, ``definitions``), ``reading`` (one notebook
read), ``follow`` (what the graded definitions depend on), ``stubs`` (a definition that is still
only a template), ``check`` (the verdicts) and ``runtime`` (what runs in the submission's
process). What other code may use is imported here.

**What a notebook may use.** Rules by what is allowed, read from the notebook's code on the
grader's side (never in the submission's process):

- *Modules*: only those in :data:`ALLOWED_MODULES` may be imported or reached (torch with its
  public tensor, layer, optimiser, autograd and data modules; numpy, math, random, time, ...;
  matplotlib.pyplot, tqdm; the course's own public modules). A name bound by ``import`` may only
  start an attribute chain (``F.softmax(x)``) or appear in an import (and in ``help``/``dir``/
  ``print``): as a value (``G = F``, ``f(F)``, ``[F][0]``, ``getattr(F, name)``, ``vars(F)``) it is
  not allowed, for that is how a module is reached other than by import.
- *Chains that start at a module* (``torch.nn.functional.softmax``) are resolved here against the
  real modules, step by step: every step public (no ``_``), every module on the way allowed, and
  what is reached neither torch's machinery (``torch.overrides``, ``torch.jit``, ``torch.ops``,
  ``torch._C``'s context managers, ...) nor one of the ready-made pieces the page forbids
  (:data:`FORBIDDEN_NAMES`, compared by identity, and ``torch.nn.attention``). A chain that does
  not resolve (a typo) breaks no rule.
- *Attributes on other objects* (tensors, your modules): public names; ``self._x`` (and ``cls._x``)
  in a method; of the dunder attributes only :data:`DUNDER_ATTRIBUTES` (``super().__init__``,
  ``type(x).__name__``, ...); no interpreter internals (``gi_frame``, ``f_back``, ...).
  ``getattr``/``setattr``/``hasattr``/``delattr`` with a constant name are the attribute itself;
  with a computed name they are allowed only on ``self`` in a method (``getattr(self, f"head{i}")``)
  and, to read one (``getattr``, ``hasattr``), on a name the notebook binds only to an object it made
  of a class of its own cells or of torch's layers (``getattr(big, name)``, ``big = MyTransformer(...)``),
  and such a method may then only be called on its own objects (not taken off its class with
  ``Class.method``, passed around or wrapped in a decorator of the notebook's own).
- *No code from strings, no namespaces*: ``exec``, ``eval``, ``compile``, ``globals``, ``locals``,
  ``vars``, ``breakpoint``, ``__import__``, ``__builtins__``, ``get_ipython()`` other than for a
  magic written as a plain string, special methods other than :data:`SPECIAL_METHODS`.
- *One process*: ``multiprocessing``, ``os``, ``subprocess`` are on no allow-list, and a
  ``DataLoader``'s ``num_workers`` other than a plain ``0`` is not allowed (work in a worker
  process is out of the runtime watch's reach).

Two checks, and the autograder uses both:

- :func:`static_uses` (the rules point): the definitions being graded (say ``Attention``) and every
  notebook-level name they use, followed to each definition of it that may hold once the notebook
  has run (the last one at a cell's top level, any later one inside if/for/with/try/match, any
  function that rebinds it as a global); a ready-made piece or anything not allowed there costs
  the point, and so does, anywhere in the notebook, anything that changes PyTorch or the course,
  runs code from strings or reads a namespace (it could change the graded code from afar).
- :func:`suspicious` (the status): anything not allowed in any cell of the notebook's own (cells
  identical to a cell of the blank notebook are the course's); a ready-made piece alone is fine
  there (the page's own checks use ``F.scaled_dot_product_attention`` in a cell of their own).
- :class:`Watch` records forbidden pieces that actually run while your code is called (torch's
  operators behind them, whoever called them, and the Python ones by name). It runs inside your
  own process, so it is a second signal only: it can take points away, never give them.

What static reading cannot see is listed in docs/honest-grading.md: code that public library
functions run on the notebook's behalf from data (a pickle, a name in a string passed to a
library function), and what a notebook's process does to itself at run time.
"""
from __future__ import annotations

from .allowed import ALLOWED_MODULES, DUNDER_ATTRIBUTES, FORBIDDEN_NAMES, SPECIAL_METHODS
from .check import static_uses, suspicious
from .exercise import Exercise, Use
from .exercise import unread as exercise_unread
from .exercise import uses as exercise_uses
from .runtime import Watch, forbidden_modules
from .whole import held as exercise_held

__all__ = ["static_uses", "suspicious", "exercise_uses", "exercise_unread", "exercise_held", "Exercise",
           "Use", "Watch", "forbidden_modules", "FORBIDDEN_NAMES", "ALLOWED_MODULES", "DUNDER_ATTRIBUTES",
           "SPECIAL_METHODS"]
