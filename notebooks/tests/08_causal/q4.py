from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 6

@test_case(points=1, hidden=False, 
    failure_message="WriteLeftToRight(net, start, L) should return text that starts with `start` and is L tokens long.")
def test_write_basic(WriteLeftToRight):
    import torch
    import torch.nn as nn
    from course.handles import student
    from course.stories import StoryTokens, story_vocab
    WriteLeftToRight = student(WriteLeftToRight)
    V = len(story_vocab)

    class Fake(nn.Module):
        """A pretend network: logits `last` at the last position and `other` everywhere else. It
        lives here, in the check; your function gets a stand-in whose calls come back to it."""

        def __init__(self, last, other):
            super().__init__()
            self.last, self.other = (last, other)
            self.fed = []

        def forward(self, x):
            self.fed.append(x.clone())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits

    def favour(tokens, values, base=-10000.0):
        logits = torch.full((V,), base)
        logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
        return logits

    def words(text):
        return text.split()
    torch.manual_seed(0)
    dog = story_vocab.index('dog')
    net = Fake(favour([dog], [20.0], base=0.0), favour([dog], [0.0], base=0.0))
    text = WriteLeftToRight(net, 'once upon a time', L=12)
    assert type(text) is str, 'WriteLeftToRight should return the story as text (StoryText(x))'
    assert words(text)[:4] == ['once', 'upon', 'a', 'time'], 'the story should start with the prompt'
    assert len(StoryTokens(text)) == 12, f'with L=12 the story should be 12 tokens long, yours has {len(StoryTokens(text))}'

