from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=1, hidden=False, 
    failure_message="embed should be nn.Embedding(len(vocab), 8), and embed_matches the True or False that torch.allclose(embed(x), embed.weight[x]) returns.")
def test_embed(embed, embed_matches, vocab):
    import torch
    assert isinstance(embed, torch.nn.Embedding), 'embed is not an nn.Embedding'
    assert tuple(embed.weight.shape) == (len(vocab), 8), 'embed has the wrong size'
    assert embed_matches is True, 'embed_matches is not True'
    x = torch.tensor([0, 1, 3, 0, 2])
    assert torch.equal(embed(x), embed.weight[x])

