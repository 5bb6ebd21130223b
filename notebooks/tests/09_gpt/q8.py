from otter.test_files import test_case

OK_FORMAT = False

name = "q8"
points = 2

@test_case(points=1, hidden=False, 
    failure_message="NoPeeking(model, a, b) should say True for a model that cannot see the future and False for one that peeks at the last token: return torch.allclose(model(a)[:, :-1], model(b)[:, :-1], atol=1e-5). (It is tried on small networks of the check's own, with the chapter's a and b.)")
def test_no_peeking(NoPeeking):
    import torch
    from course.handles import student

    def as_bool(said, name):
        """The answer of a check: True or False (a one-element bool tensor is fine too)."""
        if type(said) is bool:
            return said
        if type(said) is torch.Tensor and said.numel() == 1 and (said.dtype == torch.bool):
            return bool(said.item())
        raise AssertionError(f'{name} should return True or False, not {type(said).__name__}')

    class Model(torch.nn.Module):
        """Logits at site i from the tokens at sites 0..i (a running mean of their vectors); with
        `peek`, plus `size` times what it should not see: the next token, the last one, or all."""

        def __init__(self, V, peek=None, size=1.0, loud_last=False):
            super().__init__()
            self.E, self.W = (torch.randn(V, 8), torch.randn(8, V))
            self.peek, self.size, self.loud_last = (peek, size, loud_last)

        def forward(self, ids):
            e = self.E[ids]
            T = ids.shape[-1]
            h = torch.ones(T, T).tril() @ e / torch.arange(1, T + 1).unsqueeze(-1)
            if self.peek == 'next':
                h = h + self.size * torch.cat([e[..., 1:, :], torch.zeros_like(e[..., :1, :])], dim=-2)
            elif self.peek == 'last':
                h = h + self.size * e[..., -1:, :]
            elif self.peek == 'all':
                h = h + self.size * e.mean(dim=-2, keepdim=True)
            logits = h @ self.W
            if self.loud_last:
                logits[..., -1, :] *= 100
            return logits

    def asks(NoPeeking, model, a, b):
        """(what your NoPeeking says, what it should say: the logits before the last site agree)."""
        right = torch.allclose(model(a)[:, :-1], model(b)[:, :-1], atol=1e-05)
        return (as_bool(NoPeeking(model, a, b), 'NoPeeking'), right)

    def pair(B, T, V):
        """Token ids a and b of shape (B, T) that differ only in their last token."""
        a = torch.randint(0, V, (B, T))
        b = a.clone()
        b[:, -1] = (a[:, -1] + torch.randint(1, V, (B,))) % V
        return (a, b)
    NoPeeking = student(NoPeeking)
    torch.manual_seed(0)
    a = torch.tensor([[1, 5, 6, 7, 8, 9]])
    b = torch.tensor([[1, 5, 6, 7, 8, 3]])
    said, right = asks(NoPeeking, Model(10), a, b)
    assert right and said is True, f'for a model that sees only the past your NoPeeking said {said}'
    said, right = asks(NoPeeking, Model(10, peek='last'), a, b)
    assert not right and said is False, f'for a model that peeks at the last token your NoPeeking said {said}'

