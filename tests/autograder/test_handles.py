"""Handles (course.handles) behave the same in-process (grader.check, Gradescope) and across the
boundary (``course grade``): the same test cases, run both ways against the same notebooks, pass
and fail alike; and what crosses is plain data of exactly the built-in types."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch

from course import handles, wire
from course.serve import Server

REPO = Path(__file__).resolve().parents[2]

NOTEBOOK = {
    "good": '''
import math, torch, torch.nn as nn
from course import *

def Attention(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w

class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
    def forward(self, x):
        out, w = Attention(self.Q(x), self.K(x), self.V(x))
        self.weights = w.detach()
        return out

def Train(net, steps):
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = DiffusionLoss(net, torch.stack([SamplePInit() for _ in range(8)]), MASK)
        loss.backward(); opt.step(); losses.append(loss.item())
    return losses

@torch.no_grad()
def Write(net, n):
    x = torch.zeros(1, 1, dtype=torch.long)
    for _ in range(n):
        net(x.to(next(net.parameters()).device))
    return "ok" + str(n)

value = {"a": (1, 2.5), "b": [torch.tensor([1, 2])]}
''',
}
# the same notebook with a Head that forgets to detach its weights and a Train that returns tensors
NOTEBOOK["bad"] = NOTEBOOK["good"].replace("self.weights = w.detach()", "self.weights = w").replace(
    "losses.append(loss.item())", "losses.append(loss)")

TESTS = '''
@test_case(points=1)
def test_plain_values(value, missing_thing):
    import torch
    from course.handles import student, close
    assert missing_thing is None
    v = student(value)
    assert type(v["a"]) is tuple and close(v["b"][0], torch.tensor([1, 2]))

@test_case(points=1)
def test_params_set_and_values(Head):
    import torch
    from course.handles import student, close
    Head = student(Head)
    torch.manual_seed(0)
    h = Head(8, 4)
    p = h.params()
    assert sorted(p) == ["K.weight", "Q.weight", "V.weight"]
    h.set_params({n: torch.randn_like(t) for n, t in p.items()})
    p = h.params()
    x = torch.randn(2, 5, 8)
    q, k, v = (x @ p[n].T for n in ("Q.weight", "K.weight", "V.weight"))
    assert close(h(x), torch.softmax(q @ k.transpose(-2, -1) / 2, -1) @ v, atol=1e-5)
    assert len(h.modules()) == 4 and h.Q.isa(torch.nn.Linear) and not h.Q.isa(torch.nn.LayerNorm)

@test_case(points=1)
def test_detached_weights(Head):
    import torch
    from course.handles import student
    h = student(Head)(8, 4)
    h(torch.randn(2, 5, 8))
    assert not h.weights.info()["requires_grad"]

@test_case(points=1)
def test_swapped_reference(Head):
    import torch
    from course.handles import student, close
    h = student(Head)(8, 4)
    seen = []
    def ref(q, k, v):
        seen.append(tuple(q.shape))
        return torch.zeros_like(q), torch.zeros(q.shape[:-1] + (q.shape[-2],))
    with h.swapped(Attention=ref):
        assert close(h(torch.randn(2, 5, 8)), torch.zeros(2, 5, 4))
    assert seen == [(2, 5, 4)]
    assert not close(h(torch.randn(2, 5, 8)), torch.zeros(2, 5, 4))

@test_case(points=1)
def test_vjp(Head):
    import torch
    from course.handles import student
    h = student(Head)(8, 4)
    out, grads, param_grads = h.vjp(torch.randn(2, 5, 8), cotangent=torch.ones(2, 5, 4))
    assert grads[0].shape == (2, 5, 8) and param_grads["Q.weight"].shape == (4, 8)

@test_case(points=1)
def test_given_and_training(Train):
    from course.handles import student, given
    net = given("NoTalking")(14, dim=8)
    losses = student(Train)(net, steps=3)
    assert type(losses) is list and len(losses) == 3 and all(type(x) is float for x in losses)

@test_case(points=1)
def test_callback_network(Write):
    import torch, torch.nn as nn
    from course.handles import student
    fed = []
    class Fake(nn.Module):
        def forward(self, x):
            fed.append(tuple(x.shape))
            return torch.zeros(x.shape + (5,))
    assert student(Write)(Fake(), 3) == "ok3"
    assert fed == [(1, 1)] * 3

@test_case(points=1)
def test_meta_device_watch(Head):
    import torch
    from course.handles import student, watching
    from course.handles import StudentError
    h = student(Head)(8, 4).to("meta")
    with watching() as seen:
        out = h.describe(torch.empty(2, 5, 8, device="meta"))
    assert out["device"] == "meta" and out["shape"] == [2, 5, 4] and not seen.mixed_devices
    try:                                     # a tensor without values is never an answer
        h(torch.empty(2, 5, 8, device="meta"))
    except StudentError as e:
        assert "meta" in str(e)
    else:
        raise AssertionError("a meta answer came back")
    shapes = h.params(values=False)
    assert tuple(shapes["Q.weight"].shape) == (4, 8) and shapes["Q.weight"].device.type == "meta"

@test_case(points=1)
def test_rules_and_errors(Attention):
    from course.handles import student, broken_rules, StudentError
    Attention = student(Attention)
    assert broken_rules(Attention) == []
    try:
        Attention(1, 2, 3)
    except StudentError as e:
        assert "AttributeError" in str(e)
    else:
        raise AssertionError("no error")
'''
CASES = ["test_plain_values", "test_params_set_and_values", "test_detached_weights", "test_swapped_reference",
         "test_vjp", "test_given_and_training", "test_callback_network", "test_meta_device_watch",
         "test_rules_and_errors"]
EXPECTED = {"good": set(CASES), "bad": set(CASES) - {"test_detached_weights", "test_given_and_training"}}


def write_assignment(root: Path) -> Path:
    asg = root / "asg"
    (asg / "tests").mkdir(parents=True)
    (asg / "assignment.json").write_text(json.dumps(
        {"name": "handles", "questions": [{"name": "q1", "points": len(CASES), "manual": False}]}))
    (asg / "tests" / "q1.py").write_text("from otter.test_files import test_case\n\nname = 'q1'\n" + TESTS)
    for name, source in NOTEBOOK.items():
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(source)]
        (root / "subs").mkdir(exist_ok=True)
        nbformat.write(nb, root / "subs" / f"{name}.ipynb")
    return asg


def passed_remotely(root: Path) -> dict[str, set[str]]:
    asg = write_assignment(root)
    out = root / "out"
    subprocess.run([sys.executable, "-m", "autograder", str(root / "subs"), "--assignment", str(asg),
                    "--out", str(out), "--no-progress", "--workers", "2"], check=True, cwd=REPO,
                   capture_output=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    with open(out / "grades.csv", newline="") as f:
        assert all(r["grading_status"] == "ok" for r in csv.DictReader(f))
    return {name: {t["name"] for t in json.loads((out / "results" / f"{name}.json").read_text())["tests"]
                   if t["passed"]} for name in NOTEBOOK}


def passed_in_process(name: str) -> set[str]:
    env: dict = {"__name__": "__main__"}
    exec(compile(NOTEBOOK[name], "<cell 1>", "exec"), env)
    transport = handles.LocalTransport(env)
    transport.cells = lambda obj=None: [NOTEBOOK[name]]       # what `In` holds in a kernel

    class Case:
        def __init__(self, **kw):
            pass

        def __call__(self, func):
            self.func = func
            return self

    ns = {"test_case": Case}
    exec(TESTS, ns)
    passed = set()
    handles.use(transport)
    try:
        for case in CASES:
            func = ns[case].func
            torch.manual_seed(0)
            try:
                func(**{p: env.get(p) for p in func.__code__.co_varnames[:func.__code__.co_argcount]})
                passed.add(case)
            except Exception:
                pass
    finally:
        handles.use(None)
    return passed


@pytest.mark.e2e
def test_the_same_cases_pass_in_process_and_through_course_grade(tmp_path):
    remote = passed_remotely(tmp_path)
    for name in NOTEBOOK:
        assert passed_in_process(name) == EXPECTED[name], name
        assert remote[name] == EXPECTED[name], name


# ---------------------------------------------------------------- the wire

def test_values_cross_as_exact_builtin_types():
    class Sneaky(float):
        def __sub__(self, other):
            return 0.0

    class Yes(torch.Tensor):
        pass

    sent = {"f": Sneaky(2.5), "t": torch.ones(3).as_subclass(Yes), "s": torch.Size([2, 3]),
            "n": [1, (2, 3), {"k": None}], "big": 2**62}
    got = wire.decode(wire.encode(sent)[4:])          # what the other side receives (after the length)
    assert type(got["f"]) is float and got["f"] - 2.5 == 0 and got["f"] - 1 == 1.5
    assert type(got["t"]) is torch.Tensor and torch.equal(got["t"], torch.ones(3))
    assert got["s"] == (2, 3) and type(got["s"]) is tuple
    assert got["n"] == [1, (2, 3), {"k": None}]


def test_only_real_numbers_cross_to_the_checks():
    """Tensors without values (meta), sparse tensors and oversized ones never reach a check: the
    sending side refuses them, and the checks' side refuses a frame that claims one."""
    for bad in (torch.empty(4, 5, device="meta"), torch.eye(3).to_sparse(),
                torch.zeros(wire.MAX_ELEMENTS + 1, dtype=torch.bool)):
        with pytest.raises(wire.WireError):
            wire.encode({"v": bad})
    frame = wire.encode({"v": torch.empty(4, 5, device="meta")}, meta=True)   # the checks may send one
    assert wire.decode(frame[4:], meta=True)["v"].device.type == "meta"
    with pytest.raises(wire.WireError):
        wire.decode(frame[4:])                                                 # ... never receive one
    with pytest.raises(wire.WireError):
        wire.decode(wire.encode({"v": torch.ones(2)})[4:].replace(b'"blob"', b'"device":"cuda","blob"'))


def test_close_has_no_shortcut_for_tensors_without_values():
    from course.handles import close
    assert not close(torch.empty(3, device="meta"), torch.empty(3, device="meta"))
    assert not close(torch.ones(3), torch.ones(3, device="meta"))
    assert close(torch.ones(3), torch.ones(3))


def test_reported_shapes_are_capped_before_anything_is_allocated():
    from course.handles import StudentError, _shapes
    ok = _shapes([["w", "float32", [3, 4], "cpu"]])
    assert tuple(ok["w"].shape) == (3, 4) and ok["w"].numel() == 12 and ok["w"].dtype == torch.float32
    for bad in ([["w", "float32", [25000, 25000], "meta"]],
                [[f"w{i}", "float32", [2000, 2000], "cpu"] for i in range(5)],
                [["w", "object", [3], "cpu"]], [["w", "float32", [-1], "cpu"]], [["w", "float32", [3]]]):
        with pytest.raises(StudentError):
            _shapes(bad)


@pytest.mark.parametrize("body", [
    b"",                                                       # truncated
    b"\x00\x00\x00\x05[[[[[",                                  # not JSON
    b"\x00\x00\x10\x00" + b"{}",                               # header longer than the frame
    b"\x00\x00\x00\x02[]",                                     # not an object
    (lambda h: len(h).to_bytes(4, "big") + h)(b'{"v":' + b"[" * 100000 + b"]" * 100000 + b"}"),
    (lambda h: len(h).to_bytes(4, "big") + h)(b'{"v":{"$tensor":{"dtype":"float32","shape":[1000000],'
                                              b'"blob":0,"bytes":4000000}}}'),   # bytes missing
    (lambda h: len(h).to_bytes(4, "big") + h)(b'{"v":{"$tensor":{"dtype":"object","shape":[1]}}}'),
    (lambda h: len(h).to_bytes(4, "big") + h)(b'{"v":{"$pickle":"gASVAAAA"}}'),
    (lambda h: len(h).to_bytes(4, "big") + h)(b'{"v":{"$handle":1,"type":"x","callable":true,"extra":1}}'),
    (lambda h: len(h).to_bytes(4, "big") + h)(b'{"v":NaN}'),
])
def test_malformed_frames_are_refused(body):
    with pytest.raises(wire.WireError):
        wire.decode(body)


def test_a_frame_announcing_too_much_is_refused():
    with pytest.raises(wire.WireError):
        wire.frame_length((wire.MAX_FRAME + 1).to_bytes(4, "big"))


def test_server_never_hands_out_what_it_cannot_encode_as_data():
    env = {"f": lambda x: x * 2, "obj": object()}
    server = Server(env)
    answer = server.handle({"op": "global", "name": "obj"})
    frame = wire.encode(answer, server.refer)
    got = wire.decode(frame[4:])
    assert isinstance(got["value"], wire.Ref) and got["value"].kind == "handle"
    bad = server.handle({"op": "call", "target": [wire.Ref("handle", 999)], "args": []})
    assert bad["error"]["type"] == "RequestError"
    assert server.handle({"op": "no_such_op"})["error"]["type"] == "RequestError"
    dunder = server.handle({"op": "get", "target": [got["value"], "__class__"]})
    assert dunder["error"]["type"] == "RequestError"


def test_one_request_hands_a_check_all_its_names():
    """``globals`` (what the judge asks before each check) gives each name as ``global`` alone would:
    plain data as data, objects as handles named after the notebook name, and a name that is not
    there or whose value cannot cross listed as missing without failing the names beside it; with
    ``reset`` the last check's handles are forgotten first."""
    env = {"n": 3, "net": torch.nn.Linear(2, 2), "ghost": torch.empty(2, device="meta"), "xs": [1.5]}
    t = handles.LocalTransport(env)
    found, missing = t.lookup(["n", "net", "ghost", "nowhere", "xs"])
    assert found["n"] == 3 and found["xs"] == [1.5] and sorted(missing) == ["ghost", "nowhere"]
    assert isinstance(found["net"], handles.Handle) and found["net"].name == "net"
    assert found["net"].weight.name == "net.weight"
    assert tuple(found["net"].weight.get().shape) == (2, 2)
    t.lookup(["n"], reset=True)
    with pytest.raises(handles.StudentError, match="expired"):
        found["net"].weight.get()
    for bad in (["not a name"], "net", [1], ["n"] * 65):
        assert t.server.handle({"op": "globals", "names": bad})["error"]["type"] == "RequestError"


def test_an_answer_that_does_not_match_the_names_asked_is_refused():
    class Liar(handles.LocalTransport):
        def exchange(self, frame: bytes) -> dict:
            answer = super().exchange(frame)
            answer["value"]["found"]["extra"] = 1          # a name nobody asked for
            answer["value"]["missing"] = []                # and one asked for, not accounted for
            return answer

    with pytest.raises(handles.StudentError, match="malformed"):
        Liar({"n": 3}).lookup(["n", "gone"])
