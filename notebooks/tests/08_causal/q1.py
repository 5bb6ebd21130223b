from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 12

@test_case(points=1, hidden=False, 
    failure_message="Attention(q, k, v, causal=True) should give weights that are zero above the diagonal and whose rows add up to one.")
def test_causal_attention_basic(Attention):
    import torch
    from course.handles import close, student
    Attention = student(Attention)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, w = Attention(q, k, v, causal=True)
    assert type(out) is torch.Tensor and type(w) is torch.Tensor and (tuple(out.shape) == (5, 8)) and (tuple(w.shape) == (5, 5)), 'Attention(q, k, v, causal=True) should return out (5, 8) and weights (5, 5)'
    assert not torch.isnan(w).any(), 'your causal weights contain NaN: is the diagonal (j = i) still allowed?'
    assert close(w.sum(-1), torch.ones(5)), 'the rows of your causal weights should still add up to one'
    assert (w.triu(1) == 0).all(), 'with causal=True the weights above the diagonal (j > i) should be exactly zero'
    q2, k2 = torch.randn(2, 5, 8)
    for other in (Attention(q2, k, v, causal=True), Attention(q, k2, v, causal=True)):
        w2 = other[1] if type(other) in (tuple, list) and len(other) == 2 else None
        assert type(w2) is torch.Tensor and tuple(w2.shape) == (5, 5) and (not close(w2, w, atol=0.0001)), 'your causal weights should depend on q and k (the Boltzmann weights of q_i . k_j over j <= i), not be the same whatever they are'

