"""The rules' second pass over a notebook's code: what each statement and expression does against
the rules, as findings tied to their nodes. Each job is a module of its own, put together here:
names (:mod:`course.rules.visitor`), attribute chains (:mod:`course.rules.chains`), calls
(:mod:`course.rules.calls`), definitions and imports (:mod:`course.rules.definitions`)."""
from __future__ import annotations

from .calls import Calls
from .definitions import Definitions


class Checker(Calls, Definitions):
    """Second pass: what the code does against the rules, as findings tied to their nodes."""
