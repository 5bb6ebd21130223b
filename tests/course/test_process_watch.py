"""The runtime side of "one process" (course/serve.py): a request whose answer was worked out in
another process (a DataLoader worker, a pool started by a cell) says so, and the judge takes the
rules point for it (F.scaled_dot_product_attention run in a DataLoader worker, forward and
backward, is otherwise out of the runtime watch's reach)."""
from __future__ import annotations

import math

import torch

from course.serve import ANOTHER_PROCESS, Server


class _Job(torch.utils.data.Dataset):
    def __init__(self, args):
        self.args = args

    def __len__(self):
        return 1

    def __getitem__(self, i):
        q, k, v = self.args
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return w @ v


def far_attention(q, k, v):
    """The work in a DataLoader worker (a forked process), the answer right."""
    loader = torch.utils.data.DataLoader(_Job((q, k, v)), batch_size=None, num_workers=1)
    out = next(iter(loader))
    return out, None


def attention(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def _call(server: Server, name: str) -> dict:
    handle = server.handle({"op": "global", "name": name})["value"]
    ref = server.refer(handle)
    q = torch.randn(2, 3, 4)
    answer = server.handle({"op": "call", "target": [ref], "args": [q, q, q]})
    assert "error" not in answer, answer
    return answer


def test_work_done_in_a_worker_process_is_seen():
    env = {"Attention": far_attention, "honest": attention}
    for own_children in (False, True):
        server = Server(env, own_children=own_children)
        answer = _call(server, "Attention")
        assert ANOTHER_PROCESS in answer.get("forbidden", []), answer.get("forbidden")
        assert "forbidden" not in _call(server, "honest")       # the next request starts afresh
    assert len(ANOTHER_PROCESS) <= 100                          # the judge keeps 100 characters


def test_a_child_left_alive_by_a_cell_is_seen_in_the_graders_process():
    """A worker started before the request (a cell's persistent workers) does the work while the
    notebook answers: in the grader's process any child of the notebook's counts."""
    loader = torch.utils.data.DataLoader(_Job((torch.ones(1, 1),) * 3), batch_size=None, num_workers=1,
                                         persistent_workers=True)
    it = iter(loader)
    next(it)
    try:
        env = {"honest": attention}
        assert ANOTHER_PROCESS in _call(Server(env, own_children=True), "honest").get("forbidden", [])
        assert "forbidden" not in _call(Server(env), "honest")  # in a notebook's kernel: not its business
    finally:
        it._shutdown_workers()

