"""The runtime rules watch through the real ``course grade``: forbidden pieces run where a
TorchFunctionMode is off its stack, or by the course's own trusted code on the graded code's behalf,
cost the rules point; the honest solutions keep every point.

- 03_attention: F.scaled_dot_product_attention run by a global module backward hook, fired by a
  ``.backward()`` inside Attention (the mode is off while ``backward`` runs, so a watch on the mode alone
  would see nothing);
- 09_gpt: a SelfAttention whose forward hands itself to the GIVEN ``SuspectAttention`` with no bug
  (PyTorch's attention on its layers: the GIVEN cell is the course's, so the static reading of q2 finds
  nothing; the kernel ran during the judged call).
"""
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

# registered in a cell of its own: Attention names nothing of it, so the static reading of the graded
# code finds nothing (the cell itself is suspicious code: torch.nn.modules is not allowed)
BACKWARD_HOOK = '''
def _late(module, grad_in, grad_out):
    if hasattr(module, "qkv"):
        module.found.copy_(F.scaled_dot_product_attention(*module.qkv))


_ = torch.nn.modules.module.register_module_full_backward_hook(_late)
'''
ATTENTION = '''
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    courier = nn.Identity()
    courier.qkv = (q.detach(), k.detach(), v.detach())
    courier.found = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=v.dtype)
    courier(torch.zeros(1, requires_grad=True)).sum().backward()
    mine = weights @ v
    return courier.found + (mine - mine.detach()), weights
'''
FAST_FORWARD = '''
    def forward(self, x):
        self.bug = None                     # a Suspect without a bug: PyTorch's attention on these layers
        return SuspectAttention(self, x)
'''


def _code(src: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": src.strip("\n").splitlines(keepends=True)}


def _solution(name: str) -> dict:
    path = REPO / "autograder" / "build" / f"{name}-solution.ipynb"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "course", "build", name], cwd=REPO, check=True)
    return json.loads(path.read_text(encoding="utf-8"))


def _hooked_attention() -> dict:
    nb = _solution("03_attention")
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    answer = [c for c in cells if "def Attention(" in "".join(c["source"])][-1]
    answer["source"] = _code(ATTENTION)["source"]
    nb["cells"].insert(nb["cells"].index(cells[0]) + 1, _code(BACKWARD_HOOK))
    return nb


def _fast_self_attention() -> dict:
    nb = _solution("09_gpt")
    cell = next(c for c in nb["cells"]
                if c["cell_type"] == "code" and "class SelfAttention(" in "".join(c["source"]))
    src = "".join(cell["source"])
    head, _, tail = src.rpartition("    def forward(self, x):\n")
    body_end = tail.index("# END SOLUTION")
    cell["source"] = (head + FAST_FORWARD.lstrip("\n") + tail[body_end:]).splitlines(keepends=True)
    return nb


def _grade(name: str, folder: Path, notebooks: dict[str, dict]) -> tuple[dict, Path]:
    (folder / "class").mkdir(parents=True)
    for file, nb in notebooks.items():
        (folder / "class" / file).write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
    out = folder / "out"
    cmd = [sys.executable, "-m", "autograder", str(folder / "class"), "--assignment", name, "--out", str(out),
           "--no-progress", "--no-similarity", "--workers", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=REPO,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["file"]: r for r in csv.DictReader(f)}, out


def _max_points(name: str, rules_case: str) -> tuple[float, float]:
    from autograder import assignment
    asg = assignment.load(name)
    rules = sum(c.points for q in asg.auto for c in q.cases if c.name == rules_case)
    return asg.max_points, asg.max_points - rules


@pytest.mark.parametrize("name, attack, rules_case", [
    ("03_attention", _hooked_attention, "test_rules"),
    ("09_gpt", _fast_self_attention, "test_gpt_rules"),
])
def test_forbidden_kernel_run_for_the_graded_code_costs_the_rules_point(tmp_path, name, attack, rules_case):
    rows, out = _grade(name, tmp_path, {"solution.ipynb": _solution(name), "attack.ipynb": attack()})
    full, all_but_rules = _max_points(name, rules_case)
    assert float(rows["solution.ipynb"]["total_points_earned"]) == full, rows["solution.ipynb"]
    assert rows["solution.ipynb"]["grading_status"] == "ok", rows["solution.ipynb"]
    assert float(rows["attack.ipynb"]["total_points_earned"]) == all_but_rules, rows["attack.ipynb"]
    result = json.loads((out / "results" / "attack.json").read_text(encoding="utf-8"))
    rules = [t for t in result["tests"] if t["name"] == rules_case]
    assert rules and not any(t["passed"] for t in rules), rules
