from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 1


@test_case(points=0, hidden=False, failure_message='unscaled_512 and scaled_512 should be numbers between 0 and 1: the largest weight of a row, on average.')  # noqa: E501
def test_read_off_are_numbers(unscaled_512, scaled_512):
    from course.handles import number, student
    for name, answer in [("unscaled_512", student(unscaled_512)), ("scaled_512", student(scaled_512))]:
        assert 0 <= number(answer) <= 1, f"{name} should be a number between 0 and 1"


@test_case(points=1, hidden=True, failure_message="unscaled_512 and scaled_512 are not the two numbers of the row d = 512 that the table prints for your own Attention: run the table's cell again and copy that row (or take largest[512]).")  # noqa: E501
def test_read_off_512(Attention, unscaled_512, scaled_512):
    import math

    import torch

    from course.handles import number, student
    Attention = student(Attention)
    got = number(student(unscaled_512)), number(student(scaled_512))
    torch.manual_seed(0)                                   # the table's own random numbers (Seed(0))
    for d in (8, 64, 512):
        q_d, k_d = torch.randn(2, 100, 16, d)
    want = []
    for c in (math.sqrt(d), 1.0):                          # your Attention without, then with, 1/sqrt(d)
        rows = []
        for q, k in zip(q_d, k_d, strict=True):            # as the table does: one sentence at a time
            weights = Attention(c * q, k, k)[1]
            assert type(weights) is torch.Tensor and weights.dim() >= 1, \
                "your Attention does not give a tensor of weights here: see Question 1"
            rows.append(float(weights.max(dim=-1).values.mean()))
        want.append(sum(rows) / len(rows))
    for name, g, w in zip(("unscaled_512", "scaled_512"), got, want, strict=True):
        assert abs(g - w) < 0.01, f"{name} is {g:.2f}, but the table prints {w:.2f} for your Attention"
