"""The runtime rules watch (course/rules/runtime.py): the forbidden pieces that ran while the
notebook answered a request are seen whoever called them, also from where a TorchFunctionMode is off
its stack (a tensor hook during backward, ``apply_``'s callback, code under DisableTorchFunction)."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from course.rules import runtime
from course.serve import Server

SDPA = "F.scaled_dot_product_attention"


def honest(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def in_backward_hook(q, k, v):
    box = []
    x = torch.zeros((), requires_grad=True)
    x.register_hook(lambda g: box.append(F.scaled_dot_product_attention(q, k, v)) or g)
    (x * 1).backward()
    return box[0], honest(q, k, v)[1]


def in_apply(q, k, v):
    box = []
    torch.zeros(1).apply_(lambda s: box.append(F.scaled_dot_product_attention(q, k, v)) or s)
    return box[0], honest(q, k, v)[1]


def in_forward_hook(q, k, v):
    box = []
    layer = nn.Identity()
    layer.register_forward_hook(lambda m, a, out: box.append(F.scaled_dot_product_attention(q, k, v)))
    layer(q)
    return box[0], honest(q, k, v)[1]


class _Kernel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        ctx.save_for_backward(q, k, v)
        return honest(q, k, v)[0]

    @staticmethod
    def backward(ctx, g):
        q, k, v = ctx.saved_tensors
        with torch.enable_grad():
            q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
            out = F.scaled_dot_product_attention(q, k, v)
        return torch.autograd.grad(out, (q, k, v), g)


def in_function_backward(q, k, v):
    q = q.detach().requires_grad_()
    out = _Kernel.apply(q, k, v)
    out.sum().backward()
    return out.detach(), honest(q, k, v)[1].detach()


class _Sneaky(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunction():
            plain = [a.as_subclass(torch.Tensor) if isinstance(a, torch.Tensor) else a for a in args]
            if func is torch.Tensor.sum:
                return F.scaled_dot_product_attention(*plain[:1] * 3).sum()
            return func(*plain, **(kwargs or {}))


def in_torch_function_subclass(q, k, v):
    q.as_subclass(_Sneaky).sum()
    return honest(q, k, v)


class _OwnMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunction():
            if func is torch.softmax:
                F.scaled_dot_product_attention(args[0], args[0], args[0])
            return func(*args, **(kwargs or {}))


def in_own_mode(q, k, v):
    with _OwnMode():
        return honest(q, k, v)


def torch_function_disabled(q, k, v):
    with torch._C.DisableTorchFunction():
        out = F.scaled_dot_product_attention(q, k, v)
    return out, honest(q, k, v)[1]


class Fast(nn.Module):
    """A GIVEN-like fast path (the course's own code, trusted where it is written)."""

    def forward(self, x):
        return F.scaled_dot_product_attention(x, x, x, is_causal=True)


class Delegating(nn.Module):
    def forward(self, x):
        return Fast.forward(self, x)


def native_mha(q, k, v):
    d = q.shape[-1]
    eye, zero = torch.eye(d), torch.zeros(d)
    out, _ = torch._native_multi_head_attention(q, k, v, d, 1, torch.cat([eye] * 3), torch.cat([zero] * 3),
                                                eye, zero)
    return out, honest(q, k, v)[1]


def mha_with_weights(q, k, v):
    """nn.MultiheadAttention returning its weights runs no fused operator: the Python side sees it."""
    mha = nn.MultiheadAttention(q.shape[-1], 1, batch_first=True)
    return mha(q, k, v, need_weights=True)


ATTACKS = {f.__name__: f for f in (in_backward_hook, in_apply, in_forward_hook, in_function_backward,
                                   in_torch_function_subclass, in_own_mode, torch_function_disabled,
                                   native_mha)}


def _call(server: Server, name: str, *args) -> dict:
    ref = server.refer(server.handle({"op": "global", "name": name})["value"])
    answer = server.handle({"op": "call", "target": [ref], "args": list(args)})
    assert "error" not in answer, answer
    return answer


def _qkv():
    return [torch.randn(2, 3, 4) for _ in range(3)]


def test_forbidden_ops_match_the_registry():
    """Every operator of torch's registry whose name speaks of attention (or of SDPA's choice of
    backend, or of the fused transformer layer) is on the list, and every one listed exists."""
    names = {n.partition(".")[0] for n in torch._C._dispatch_get_all_op_names()}
    words = ("attention", "sdp_", "multi_head", "transformer")
    assert {n for n in names if any(w in n for w in words)} == set(runtime.FORBIDDEN_OPS)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_way_around_a_mode_is_seen(name):
    server = Server({"Attention": ATTACKS[name], "honest": honest})
    want = "nn.MultiheadAttention" if name == "native_mha" else SDPA
    assert want in _call(server, "Attention", *_qkv()).get("forbidden", []), name
    assert "forbidden" not in _call(server, "honest", *_qkv())       # the next request starts afresh
    assert not torch._C._autograd._profiler_enabled()


def test_a_given_method_called_by_the_graded_code_is_seen():
    server = Server({"SelfAttention": Delegating()})
    assert SDPA in _call(server, "SelfAttention", torch.randn(1, 2, 3, 4)).get("forbidden", [])


def test_python_pieces_without_an_operator_of_their_own_are_seen():
    server = Server({"Attention": mha_with_weights})
    assert "F.multi_head_attention_forward" in _call(server, "Attention", *_qkv()).get("forbidden", [])


def test_nested_watches_each_see_their_own_work():
    q = torch.randn(1, 2, 3, 4)
    with runtime.Watch() as outer:
        honest(q, q, q)
        with runtime.Watch() as inner:
            torch_function_disabled(q, q, q)
        with runtime.Watch() as clean:
            honest(q, q, q)
        honest(q, q, q)
    assert SDPA in inner.used and SDPA in outer.used and not clean.used
    assert not torch._C._autograd._profiler_enabled()


def test_a_profiler_left_on_or_switched_off_is_reported():
    with torch.autograd.profiler.profile():
        with runtime.Watch() as watch:
            honest(*_qkv())
    assert runtime.WATCH_BLIND in watch.used
    with runtime.Watch() as watch:
        torch._C._autograd._disable_profiler_legacy()
        torch_function_disabled(*_qkv())
    assert runtime.WATCH_BLIND in watch.used
    assert not torch._C._autograd._profiler_enabled()
