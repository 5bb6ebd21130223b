"""The checks 08 and 09 (and 03) share: causality by values and by gradient
(autograder.checks.causality), and rows that add up to one (course.checking.rows_add_to_one, which
the public tests call too), against right and broken attentions (fast, in-process)."""
from __future__ import annotations

import math

import pytest
import torch

from autograder.checks import causality, reference
from course.checking import rows_add_to_one


def causal(q, k, v):
    return reference.causal_attention(q, k, v, causal=True)


def plain(q, k, v):
    return reference.causal_attention(q, k, v)


def masked_after_softmax(q, k, v):
    """The weights look causal, but the softmax was taken over every site before the future was
    zeroed and the rows renormalised: a rounding-sized gradient leaks to the future."""
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    w = w * torch.ones(q.shape[-2], q.shape[-2]).tril()
    w = w / w.sum(dim=-1, keepdim=True)
    return w @ v, w


def gradients(attention, q, k, v):
    """vjp(r): the gradients of q, k and v of attention's output against the cotangent r."""
    def vjp(r):
        args = [t.clone().requires_grad_() for t in (q, k, v)]
        attention(*args)[0].backward(r)
        return [a.grad for a in args]
    return vjp


def future_heard(attention, q, k, v) -> bool:
    try:
        vjp = gradients(attention, q, k, v)
        for i, grads in causality.site_gradients(vjp, tuple(v.shape), range(v.shape[1])):
            causality.no_later_derivative(i, dict(zip("qkv", grads, strict=True)))
    except AssertionError:
        return True
    return False


def test_by_gradient_a_causal_attention_passes_and_one_that_hears_the_future_fails():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 6, 5)
    q = 3 * q
    assert not future_heard(causal, q, k, v)
    assert future_heard(plain, q, k, v)
    assert future_heard(masked_after_softmax, q, k, v)        # right by values, not by gradient
    with pytest.raises(AssertionError, match="the output at site 2 has a nonzero derivative .* with respect "
                                             "to the input at the sites after 2"):
        causality.no_later_derivative(2, {"the input": torch.ones(1, 4, 3)})


def test_by_values_later_sites_drawn_anew_leave_the_earlier_outputs():
    torch.manual_seed(1)
    q = torch.randn(2, 7, 4)

    def redraw(x, s):
        return torch.randn(x[:, s:].shape)
    for attention, unchanged in ((causal, True), (plain, False), (masked_after_softmax, True)):
        def call(x, attention=attention):
            return attention(x, x, x)[0]
        assert causality.earlier_unchanged(call, q, call(q), (1, 3, 6), redraw, atol=1e-5) is unchanged


def test_rows_add_to_one_for_the_public_tests_and_the_hidden_ones():
    q, k = torch.randn(2, 5, 3)
    rows_add_to_one(reference.attention_weights(q, k), 5)
    rows_add_to_one(causal(q, k, k)[1], 5, "your causal weights")
    for wrong in (torch.full((5, 5), 0.3), reference.attention_weights(q, k).T, torch.ones(5, 4) / 5,
                  torch.ones(4, 5) / 5, reference.attention_weights(q, k) - 0.01):
        with pytest.raises(AssertionError, match="^the rows of your causal weights do not add up to one$"):
            rows_add_to_one(wrong, 5, "your causal weights")
