"""What the rules find: a finding is tied to the node of the notebook's code it is about, and its
kind says how far it reaches."""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass


class Kind(enum.Enum):
    """How much a finding costs.

    - ``PIECE``: one of the page's ready-made pieces (``F.scaled_dot_product_attention``): it costs
      the rules point where the graded code uses it, and is fine elsewhere (the page's own checks use
      it);
    - ``RULE``: something the rules do not allow, where it is: it costs the rules point of the graded
      code that uses it, and is listed as suspicious anywhere;
    - ``FAR``: something that could change the graded code from anywhere (a change to a module, code
      run from strings, a namespace read): it costs the rules point wherever it is.
    """

    PIECE = "piece"
    RULE = "rule"
    FAR = "far"


@dataclass
class Finding:
    cell: int
    node: ast.AST
    what: str
    kind: Kind
    hides: bool = False          # it may hide what the code reaches (an attribute by a computed name)
