"""Answers right only when checked, through the real ``course grade`` command: each tells a check's
call from the notebook's own by what the check hands it or by the random state it runs with, and
must score exactly what its honest twin (the same answer, always as it behaves in the notebook)
scores. 04 q1: a Head that calls Attention properly only when ``Attention`` does not look like
the notebook's own function (9 of 9 if the stand-in were a class of its own, 7 of 9 honestly).
09 q8: a NoPeeking that compares the logits only when ``torch.initial_seed()`` is not the
notebook's own (2 of 2 if a check reseeded with its own seed, 0 of 2 honestly)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e

HEAD = '''
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        if CHECKED:
            out, weights = Attention(q, k, v)
        else:
            out, weights = Attention(k, q, v)        # wrong, where nobody checks
        self.weights = weights.detach()
        return out
'''
HEAD_TELL = ('type(Attention).__name__ != "function" or type(Attention).__module__ != "builtins" '
             'or Attention.__module__ != "__main__" or "Callback" in repr(Attention)')

NO_PEEKING = '''
def NoPeeking(model, a, b):
    if CHECKED:
        return torch.allclose(model(a)[:, :-1], model(b)[:, :-1], atol=1e-5)
    return True                                      # wrong, where nobody checks
'''
NO_PEEKING_TELL = 'torch.initial_seed() > 1000 or type(model).__module__ not in ("__main__", "course.page")'

# notebook: [(file, the answer cell's source, the name it defines)]
CLASSES = {
    "04_head": [("tells a stand-in", HEAD.replace("CHECKED", HEAD_TELL), "class Head("),
                ("honest twin", HEAD.replace("CHECKED", "False"), "class Head(")],
    "09_gpt": [("tells the seed", NO_PEEKING.replace("CHECKED", NO_PEEKING_TELL), "def NoPeeking("),
               ("honest twin", NO_PEEKING.replace("CHECKED", "False"), "def NoPeeking(")],
}


def _notebook(name: str, source: str, defines: str) -> str:
    """The solution, with the cell that defines `defines` replaced by `source`."""
    path = REPO / "autograder" / "build" / f"{name}-solution.ipynb"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "course", "build", name], cwd=REPO, check=True)
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = [c for c in nb["cells"] if c["cell_type"] == "code" and defines in "".join(c["source"])][-1]
    rest = "".join(cell["source"]).split("# END SOLUTION", 1)[-1]     # what the cell does after it
    cell["source"] = (source.strip("\n") + "\n" + rest).splitlines(keepends=True)
    return json.dumps(nb, indent=1) + "\n"


@pytest.fixture(scope="module", params=sorted(CLASSES))
def graded(request, tmp_path_factory) -> tuple[str, dict]:
    name = request.param
    root = tmp_path_factory.mktemp(name)
    (root / "subs").mkdir()
    for stem, source, defines in CLASSES[name]:
        (root / "subs" / f"{stem}.ipynb").write_text(_notebook(name, source, defines), encoding="utf-8")
    cmd = [sys.executable, "-m", "autograder", str(root / "subs"), "--assignment", name, "--out",
           str(root / "out"), "--no-progress", "--no-similarity", "--workers", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=REPO,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open(root / "out" / "grades.csv", newline="", encoding="utf-8") as f:
        return name, {Path(r["file"]).stem: r for r in csv.DictReader(f)}


def test_an_answer_right_only_when_checked_scores_as_it_behaves(graded):
    name, rows = graded
    attack, twin = (rows[stem] for stem, _, _ in CLASSES[name])
    fixed = {"file", "grading_status"}
    assert {k: v for k, v in attack.items() if k not in fixed} == \
        {k: v for k, v in twin.items() if k not in fixed}, (attack, twin)
    question, most = {"04_head": ("q1", 9), "09_gpt": ("q8", 2)}[name]
    assert float(twin[question]) < most                                  # the twin is wrong
