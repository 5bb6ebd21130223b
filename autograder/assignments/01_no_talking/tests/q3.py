from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1


@test_case(points=1, hidden=False, failure_message='embed should be nn.Embedding(len(vocab), 8), and embed_matches the True or False that torch.allclose(embed(x), embed.weight[x]) returns.')  # noqa: E501
def test_embed(embed, embed_matches):
    import torch

    from course import vocab
    from course.handles import Handle, close, student
    embed, matches = student(embed), student(embed_matches)
    assert isinstance(embed, Handle) and embed.isa(torch.nn.Embedding), "embed is not an nn.Embedding"
    weight = embed.params().get("weight")
    assert type(weight) is torch.Tensor and tuple(weight.shape) == (len(vocab), 8), "embed has the wrong size"
    assert matches is True, "embed_matches is not True"
    x = torch.tensor([0, 1, 3, 0, 2])
    out = embed(x)
    assert type(out) is torch.Tensor and torch.equal(out, weight[x]), "embed(x) is not embed.weight[x]"
    # embed looks its rows up in its own table: give it another table, and it gives that table's rows
    torch.manual_seed(7)
    table = torch.randn(len(vocab), 8)
    x = torch.randint(0, len(vocab), (3, 6))
    embed.set_params({"weight": table})
    try:
        out = embed(x)
    finally:
        embed.set_params({"weight": weight})     # as it was, for the cells that use embed later
    assert close(out, table[x]), "embed(x) does not look its rows up in embed.weight"
