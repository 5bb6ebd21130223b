from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2

@test_case(points=1, hidden=False, 
    failure_message="shuffle_agrees should be True, the result of torch.allclose(shuffled_out, out[perm], atol=1e-6).")
def test_shuffle_agrees(shuffle_agrees):
    import torch
    from course.handles import student
    agrees = student(shuffle_agrees)
    assert agrees is True or (type(agrees) is torch.Tensor and agrees.numel() == 1 and (bool(agrees.item()) is True))

@test_case(points=1, hidden=True, 
    failure_message="Shuffling the sites should shuffle both the output rows and the weights. Site perm[i] is now site i, so the new weights are weights[perm][:, perm] (rows and columns reordered); and your Attention should behave this way for any sizes.")
def test_permutation(Attention, shuffled_weights_are):
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    answer = student(shuffled_weights_are)
    assert type(answer) is str and answer.replace(' ', '') == 'weights[perm][:,perm]', 'wrong expression'
    torch.manual_seed(6)
    for L, d in [(7, 4), (4, 9)]:
        q, k, v = torch.randn(3, L, d)
        perm = torch.randperm(L)
        out, weights = Attention(q, k, v)
        out2, weights2 = Attention(q[perm], k[perm], v[perm])
        assert close(out2, out[perm]), 'the shuffled output is not the output shuffled'
        assert close(weights2, weights[perm][:, perm]), 'the shuffled weights are not the weights shuffled'

