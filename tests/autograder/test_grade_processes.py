"""Through the real ``course grade`` (03_attention): F.scaled_dot_product_attention kept in a
dict by a method call inside an expression, and run in a DataLoader worker process (forward, and
backward through an autograd.Function), loses the rules point, and a notebook whose work ran in
another process is ``suspicious code``; the honest solution keeps every point."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import forgery
import pytest
from test_grade_forgery import grade

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e

STASH = "import torch.nn.functional as F\ntable = {}\n_ = table.update(f=F.scaled_dot_product_attention)\n"
WORKER = '''class _Job(torch.utils.data.Dataset):
    def __init__(self, args):
        self.args = args
    def __len__(self):
        return 1
    def __getitem__(self, i):
        q, k, v, g = self.args
        if g is None:
            return table["f"](q, k, v)
        with torch.enable_grad():
            q, k, v = (t.clone().requires_grad_(True) for t in (q, k, v))
            out = table["f"](q, k, v)
            return torch.autograd.grad(out, (q, k, v), g)

def _far(*args):
    loader = torch.utils.data.DataLoader(_Job(args), batch_size=None, WORKERS)
    return next(iter(loader))

class _Kernel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        ctx.save_for_backward(q, k, v)
        return _far(q.detach(), k.detach(), v.detach(), None)

    @staticmethod
    def backward(ctx, g):
        q, k, v = ctx.saved_tensors
        return tuple(_far(q.detach(), k.detach(), v.detach(), g.detach()))

def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return _Kernel.apply(q, k, v), weights
'''
# the table filled where the static reading cannot tell what it holds, for the runtime side alone
HIDDEN = "table = {}\nkw = {}\nkw['num_workers'] = 1\ntable['f'] = lambda q, k, v: torch.softmax(" \
         "q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v\n"

CASES = {
    # file: (cell after the setup cell, Attention, status starts with, what the rules test says)
    "stash.ipynb": (STASH, "def Attention(q, k, v):\n    weights = torch.softmax(q @ k.transpose(-2, -1) "
                    "/ math.sqrt(q.shape[-1]), dim=-1)\n    return table['f'](q, k, v), weights\n",
                    "ok", "scaled_dot_product_attention"),
    "worker.ipynb": (STASH, WORKER.replace("WORKERS", "num_workers=1"), "suspicious code",
                     "starts worker processes"),
    "hidden worker.ipynb": (HIDDEN, WORKER.replace("WORKERS", "**kw"), "suspicious code: ran another process",
                            "another process while answering"),
}


def _notebook(first: str, attention: str) -> bytes:
    spec = {"base": "solution", "replaces": "Attention", "cells": [attention]}
    nb = json.loads(forgery.attack_notebook(spec))
    setup = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    nb["cells"].insert(setup + 1, forgery._code(first))
    for cell in nb["cells"]:            # the sqrt(d) table calls Attention 600 times: a process each
        if "".join(cell["source"]).startswith("# GIVEN: the largest weight of a row"):
            cell.setdefault("metadata", {}).setdefault("tags", []).append("otter_ignore")
    return (json.dumps(nb, indent=1) + "\n").encode()


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict:
    if not forgery.SOLUTION.exists():
        subprocess.run([sys.executable, "-m", "course", "build", forgery.NAME], cwd=REPO, check=True)
    root = tmp_path_factory.mktemp("processes")
    (root / "class").mkdir()
    (root / "class" / "honest correct.ipynb").write_bytes(forgery.SOLUTION.read_bytes())
    for name, (first, attention, _, _) in CASES.items():
        (root / "class" / name).write_bytes(_notebook(first, attention))
    return {"rows": grade([root / "class"], root / "out", "--workers", "2"), "out": root / "out"}


def test_the_honest_solution_keeps_every_point(batch):
    row = batch["rows"]["honest correct.ipynb"]
    assert row["grading_status"] == "ok", row
    assert float(row["total_points_earned"]) == forgery.points()[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rules_point_is_lost(batch, name):
    row = batch["rows"][name]
    status, why = CASES[name][2:]
    # right answers, no rules point (a question whose own tests call the Attention that starts
    # processes, such as 03 q7's sqrt(d) table, loses its point to the process watch too)
    assert float(row["total_points_earned"]) <= forgery.points()[1], row
    assert row["grading_status"].startswith(status), row["grading_status"]
    result = json.loads((batch["out"] / "results" / f"{Path(name).stem}.json").read_text(encoding="utf-8"))
    q1 = [t for t in result["tests"] if t["question"] == "q1" and t["name"] != "test_rules"]
    assert q1 and all(t["passed"] for t in q1), q1
    rules = [t for t in result["tests"] if t["name"] == "test_rules"]
    assert rules and not any(t["passed"] for t in rules), rules
    assert any(why in json.dumps(t) for t in rules) or why in row["grading_status"], rules
