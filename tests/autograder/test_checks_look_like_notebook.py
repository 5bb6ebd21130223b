"""A check's call looks like the notebook's own: what the checking side hands the student's code (a
function, a network, a notebook name swapped for the reference) and the random state a request runs
with cannot be told, from inside the notebook's process, from what the notebook itself would have
there. Otherwise an answer could be right only when checked (a Head that calls Attention properly
only when ``type(Attention).__name__`` names a stand-in; a NoPeeking right only when
``torch.initial_seed()`` is not the notebook's own)."""
from __future__ import annotations

import linecache

import pytest
import torch
import torch.nn as nn

from course import handles
from course.serve import Server

# A notebook: its own function, network and seed, and `traits`, what a cell could look at.
CELL = '''
import re, inspect, torch, torch.nn as nn
torch.manual_seed(7)

def Attention(q, k, v):
    return "notebook", q

own_attention = Attention

def reference_attention(q, k, v):
    return "notebook", q

class Peeking(nn.Module):
    def __init__(self):
        super().__init__()
        self.anchor = nn.Parameter(torch.zeros(1))

    def forward(self, ids):
        return ids

def source(x):
    try:
        inspect.getsource(x)
        return "found"
    except (OSError, TypeError) as exc:
        return type(exc).__name__

def traits(x):
    return {"type": type(x).__name__, "type module": type(x).__module__,
            "class qualname": x.__class__.__qualname__, "module": getattr(x, "__module__", None),
            "name": getattr(x, "__name__", None), "qualname": getattr(x, "__qualname__", None),
            "repr": re.sub(" at 0x[0-9a-f]+", "", repr(x)), "str": re.sub(" at 0x[0-9a-f]+", "", str(x)),
            "dir": sorted(dir(x)), "vars": sorted(vars(x)), "module instance": isinstance(x, nn.Module),
            "callable": callable(x), "mro": [f"{c.__module__}.{c.__qualname__}" for c in type(x).__mro__],
            "no closure": getattr(x, "__closure__", None) is None,
            "notebook globals": getattr(x, "__globals__", globals()) is globals(),
            "defaults": repr(getattr(x, "__defaults__", None)), "source": source(x),
            "class source": source(type(x)), "parameters": [n for n, _ in x.named_parameters()]
            if isinstance(x, nn.Module) else None}

def attention_traits():
    return traits(Attention), Attention is own_attention, Attention(1, 2, 3)

def run(net, x):
    return net(x)

def seed_and_draw():
    return torch.initial_seed(), torch.rand(3)
'''


@pytest.fixture
def notebook():
    """The notebook's namespace, its cell registered as IPython does (so that getsource works)."""
    linecache.cache["<cell 1>"] = (len(CELL), None, CELL.splitlines(keepends=True), "<cell 1>")
    env: dict = {"__name__": "__main__"}
    exec(compile(CELL, "<cell 1>", "exec"), env)
    transport = handles.LocalTransport(env)
    handles.use(transport)
    yield env
    handles.use(None)
    linecache.cache.pop("<cell 1>", None)


def reference_attention(q, k, v):      # the checking side's: what the student's code is handed
    return "checking side", q


class Peeking(nn.Module):              # the checking side's network (the notebook has one so named)
    def forward(self, ids):
        return ids + 1


def test_a_function_handed_over_looks_like_the_notebooks_own(notebook):
    traits = handles.student(notebook["traits"])
    handed = traits(reference_attention)
    own = traits(handles.student(notebook["reference_attention"]))
    assert handed["type"] == "function" and handed["module"] == "__main__"
    assert {k: v for k, v in handed.items() if k != "source"} == \
        {k: v for k, v in own.items() if k != "source"}
    assert handed["source"] in ("found", "OSError")   # as for a notebook function: found or not


def test_a_network_handed_over_looks_like_an_ordinary_notebook_network(notebook):
    traits = handles.student(notebook["traits"])
    handed = traits(Peeking())
    own = traits(handles.student(notebook["Peeking"])())
    assert handed["type"] == "Peeking" and handed["type module"] == "__main__"
    assert handed["repr"] == "Peeking()" and handed["module instance"] is True
    differ = {k for k in own if handed[k] != own[k]}
    assert differ <= {"class source"}, differ              # the notebook's class has a source
    assert handed["class source"] in ("OSError", "TypeError")
    assert torch.equal(handles.student(notebook["run"])(Peeking(), torch.tensor([1])), torch.tensor([2]))


def test_a_swapped_name_is_the_notebooks_own_function(notebook):
    probe = handles.student(notebook["attention_traits"])
    alone, same, said = probe()
    assert same is True and said[0] == "notebook"
    with probe.swapped(Attention=reference_attention):
        swapped, same, said = probe()
    assert said[0] == "checking side"                      # the check's Attention ran
    assert same is True and swapped == alone               # and nothing tells it from the notebook's
    assert probe()[2][0] == "notebook"                     # put back after the request


def test_a_swapped_name_that_is_not_a_plain_function_gets_a_plain_one(notebook):
    exec("def made(tag):\n    def Attention(q, k, v):\n        return tag, q\n    return Attention\n"
         "Attention = made('notebook')\n", notebook)       # a closure: its code is not swapped
    probe = handles.student(notebook["attention_traits"])
    with probe.swapped(Attention=reference_attention):
        swapped, _, said = probe()
    assert said[0] == "checking side"
    assert swapped["type"] == "function" and swapped["module"] == "__main__"
    assert swapped["name"] == swapped["qualname"] == "Attention" and swapped["vars"] == []


def test_the_seed_a_check_runs_with_is_the_notebooks_own(notebook):
    assert notebook["seed_and_draw"]()[0] == 7             # the notebook's own call
    draw = handles.student(notebook["seed_and_draw"])
    state = torch.get_rng_state()                          # the check's own random numbers
    seed, numbers = draw()
    assert seed == 7                                       # a check's call: the same
    torch.set_rng_state(state)
    assert torch.equal(draw()[1], numbers)                 # still reproducible for the checking side
    assert not torch.equal(draw()[1], numbers)             # and each request draws its own numbers


def test_the_seed_stays_the_notebooks_across_requests_and_the_numbers_are_the_checks():
    """The grader's server (no state put back after a request): the numbers are those of the
    check's seed, whatever the notebook drew before; initial_seed() stays the notebook's."""
    env: dict = {"__name__": "__main__"}
    exec(compile(CELL, "<cell 1>", "exec"), env)
    server = Server(env)
    target = [server.refer(env["seed_and_draw"])]
    torch.rand(5)
    first = server.handle({"op": "call", "target": target, "seed": 12345})["value"]
    torch.rand(7)
    second = server.handle({"op": "call", "target": target, "seed": 12345})["value"]
    assert first[0] == second[0] == 7 and torch.equal(first[1], second[1])
    assert torch.initial_seed() == 7
    torch.manual_seed(12345)
    assert torch.equal(first[1], torch.rand(3))
