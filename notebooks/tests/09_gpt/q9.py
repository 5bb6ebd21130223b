from otter.test_files import test_case

OK_FORMAT = False

name = "q9"
points = 2

@test_case(points=1, hidden=False, 
    failure_message="StartingLoss(model, ids, targets) should be the cross entropy of model(ids) against targets, both flattened (logits.view(-1, V) and targets.view(-1), with V = logits.shape[-1]), as a Python number. (It is tried on small networks of the check's own, one neutral and one very sure of itself.)")
def test_starting_loss(StartingLoss):
    import torch
    import torch.nn.functional as F
    from course.handles import student

    class Model(torch.nn.Module):
        """Logits from two tables the check drew, about `scale` times N(0, 1) each."""

        def __init__(self, V, scale):
            super().__init__()
            self.E, self.W = (torch.randn(V, 16), scale * torch.randn(16, V) / 4)

        def forward(self, ids):
            return self.E[ids] @ self.W

    def loss_of(model, ids, targets):
        logits = model(ids).double()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).item()
    from course.handles import number
    StartingLoss = student(StartingLoss)
    torch.manual_seed(0)
    ids, targets = torch.randint(0, 1024, (2, 2, 16))
    for scale in (0.02, 3.0):
        model = Model(1024, scale)
        got = number(StartingLoss(model, ids, targets))
        want = loss_of(model, ids, targets)
        assert abs(got - want) < 0.0001 * max(1.0, want), f"StartingLoss gave {got:.4f}, which is not the cross entropy of the logits of this network ({('a neutral one' if scale < 1 else 'one very sure of itself')}) against the targets"

