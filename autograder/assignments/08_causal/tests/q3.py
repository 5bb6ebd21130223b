from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1


@test_case(
    points=0, hidden=False,
    failure_message='causal_same and noncausal_same should be lists of positions (0 to 3).')
def test_same_positions_types(causal_same, noncausal_same):
    from course.handles import student
    same, other = student(causal_same), student(noncausal_same)
    assert type(same) in (list, tuple) and type(other) in (list, tuple), "causal_same and noncausal_same should be lists of positions, e.g. [0, 3]"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'Think about which sites can hear the last word: with causal=True only the last site can, with '
        'causal=False every site does.'))
def test_same_positions(causal_same, noncausal_same, MyTransformer):
    import torch
    from course import Encode, vocab
    from course.handles import student, close
    same, other = student(causal_same), student(noncausal_same)
    assert type(same) in (list, tuple) and type(other) in (list, tuple), "causal_same and noncausal_same should be lists of positions"
    same, other = sorted(int(i) for i in same), sorted(int(i) for i in other)

    def computes(causal):
        """Your own MyTransformer computes: the same tokens give the same logits, other tokens other
        logits, and its token table and output layer are used."""
        try:
            net = student(MyTransformer)(len(vocab), dim=32, heads=2, layers=2, causal=causal)
            shapes = net.params(values=False)
            x, y = Encode("the cat is alive")[None], Encode("the box is alive")[None]
            a = net(x)
            if type(a) is not torch.Tensor or tuple(a.shape) != (1, 4, len(vocab)) or not torch.isfinite(a).all():
                return False
            if not close(net(x), a, atol=1e-6) or close(net(y), a, atol=1e-6):
                return False
            for name in ("embed.weight", "out.weight"):
                if name not in shapes:
                    return False
                net.set_params({name: torch.randn(shapes[name].shape)})
                b = net(x)
                if type(b) is not torch.Tensor or close(b, a, atol=1e-6):
                    return False
                a = b
            return True
        except Exception:
            return False

    def own(causal):
        """The positions where your own MyTransformer's logits are identical for the two sentences
        (None when your MyTransformer does not compute yet: then only the page's answer counts)."""
        if not computes(False):
            return None
        try:
            torch.manual_seed(0)
            net = student(MyTransformer)(len(vocab), dim=32, heads=2, layers=2, causal=causal)
            a = net(Encode("the cat is alive")[None])[0]
            b = net(Encode("the cat is empty")[None])[0]
            return [i for i in range(4) if torch.allclose(a[i], b[i])]
        except Exception:
            return None
    assert same == [0, 1, 2] or same == own(True), "with causal=True, which positions cannot hear the last word?"
    assert other == [] or other == own(False), "with causal=False, can any position avoid hearing the last word?"
