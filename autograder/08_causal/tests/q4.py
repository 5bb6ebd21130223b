from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 6

@test_case(points=1, hidden=False, 
    failure_message="WriteLeftToRight(net, start, L) should return text that starts with `start` and is L tokens long.")
def test_write_basic(WriteLeftToRight):
    import torch, torch.nn as nn
    from course.stories import StoryTokens, StoryText, STORY_MASK, STORY_UNK, story_vocab
    V = len(story_vocab)

    class Fake(nn.Module):
        """Logits `last` at the last position and `other` everywhere else."""

        def __init__(self, last, other):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.last, self.other = (last, other)
            self.grad_enabled = []

        def forward(self, x):
            self.grad_enabled.append(torch.is_grad_enabled())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits + 0 * self.dummy

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
    assert isinstance(text, str), 'WriteLeftToRight should return the story as text (StoryText(x))'
    assert words(text)[:4] == ['once', 'upon', 'a', 'time'], 'the story should start with the prompt'
    assert len(StoryTokens(text)) == 12, f'with L=12 the story should be 12 tokens long, yours has {len(StoryTokens(text))}'

@test_case(points=1, hidden=True, 
    failure_message="The story must start with the prompt and be exactly L tokens long (32 by default).")
def test_write_length_and_prompt(WriteLeftToRight):
    import torch, torch.nn as nn
    from course.stories import StoryTokens, StoryText, STORY_MASK, STORY_UNK, story_vocab
    V = len(story_vocab)

    class Fake(nn.Module):
        """Logits `last` at the last position and `other` everywhere else."""

        def __init__(self, last, other):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.last, self.other = (last, other)
            self.grad_enabled = []

        def forward(self, x):
            self.grad_enabled.append(torch.is_grad_enabled())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits + 0 * self.dummy

    def favour(tokens, values, base=-10000.0):
        logits = torch.full((V,), base)
        logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
        return logits

    def words(text):
        return text.split()
    torch.manual_seed(1)
    net = Fake(favour(list(range(50)), [1.0] * 50), favour(list(range(50)), [1.0] * 50))
    for start, L in [('the', 7), ('one day , lily went', 20), ('once upon a time', 32)]:
        text = WriteLeftToRight(net, start, L=L)
        tokens = StoryTokens(text)
        assert len(tokens) == L, f'WriteLeftToRight(net, {start!r}, L={L}) gave {len(tokens)} tokens'
        assert torch.equal(tokens[:len(StoryTokens(start))], StoryTokens(start)), f'the story does not start with {start!r}'
    text = WriteLeftToRight(net, 'once upon a time')
    assert len(StoryTokens(text)) == 32, 'by default (L=32) the story should be 32 tokens long'

@test_case(points=1, hidden=True, 
    failure_message="The guess for the next token is the network's output at the last position: logits = net(x[None])[0, -1].")
def test_write_last_position(WriteLeftToRight):
    import torch, torch.nn as nn
    from course.stories import StoryTokens, StoryText, STORY_MASK, STORY_UNK, story_vocab
    V = len(story_vocab)

    class Fake(nn.Module):
        """Logits `last` at the last position and `other` everywhere else."""

        def __init__(self, last, other):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.last, self.other = (last, other)
            self.grad_enabled = []

        def forward(self, x):
            self.grad_enabled.append(torch.is_grad_enabled())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits + 0 * self.dummy

    def favour(tokens, values, base=-10000.0):
        logits = torch.full((V,), base)
        logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
        return logits

    def words(text):
        return text.split()
    torch.manual_seed(2)
    dog, cat = (story_vocab.index('dog'), story_vocab.index('cat'))
    net = Fake(favour([dog], [30.0]), favour([cat], [30.0]))
    text = WriteLeftToRight(net, 'the big', L=10)
    new = words(text)[2:]
    assert new == ['dog'] * 8, f"a network that says 'dog' at the last position and 'cat' everywhere else should make your function write 'dog' 8 times; it wrote {new}: are you reading the logits of the last position, [0, -1]?"

@test_case(points=1, hidden=True, 
    failure_message="Never write STORY_MASK or STORY_UNK: set their logits to -math.inf before the softmax, even when the network likes them best.")
def test_write_forbidden(WriteLeftToRight):
    import torch, torch.nn as nn
    from course.stories import StoryTokens, StoryText, STORY_MASK, STORY_UNK, story_vocab
    V = len(story_vocab)

    class Fake(nn.Module):
        """Logits `last` at the last position and `other` everywhere else."""

        def __init__(self, last, other):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.last, self.other = (last, other)
            self.grad_enabled = []

        def forward(self, x):
            self.grad_enabled.append(torch.is_grad_enabled())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits + 0 * self.dummy

    def favour(tokens, values, base=-10000.0):
        logits = torch.full((V,), base)
        logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
        return logits

    def words(text):
        return text.split()
    torch.manual_seed(3)
    dog, cat = (story_vocab.index('dog'), story_vocab.index('cat'))
    logits = favour([STORY_MASK, STORY_UNK, dog, cat], [50.0, 49.0, 2.0, 1.0])
    net = Fake(logits, logits)
    for temperature in (1.0, 0.3):
        text = WriteLeftToRight(net, 'the', L=20, temperature=temperature)
        tokens = StoryTokens(text)
        assert '_' not in words(text) and '<unk>' not in words(text) and (not (tokens[1:] == STORY_MASK).any()) and (not (tokens[1:] == STORY_UNK).any()), 'your story contains the mask or <unk>: set their logits to -math.inf before the softmax'

@test_case(points=1.5, hidden=True, 
    failure_message="Sample from softmax(logits / temperature): at a low temperature nearly always the most likely token, at a high one much more evenly.")
def test_write_temperature(WriteLeftToRight):
    import torch, torch.nn as nn
    from course.stories import StoryTokens, StoryText, STORY_MASK, STORY_UNK, story_vocab
    V = len(story_vocab)

    class Fake(nn.Module):
        """Logits `last` at the last position and `other` everywhere else."""

        def __init__(self, last, other):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.last, self.other = (last, other)
            self.grad_enabled = []

        def forward(self, x):
            self.grad_enabled.append(torch.is_grad_enabled())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits + 0 * self.dummy

    def favour(tokens, values, base=-10000.0):
        logits = torch.full((V,), base)
        logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
        return logits

    def words(text):
        return text.split()
    a, b, c = (story_vocab.index(w) for w in ('dog', 'cat', 'ball'))
    logits = favour([a, b, c], [2.0, 1.0, 0.0])
    net = Fake(logits, logits)

    def fractions(temperature, runs):
        written = []
        for r in range(runs):
            written += StoryTokens(WriteLeftToRight(net, 'the', L=32, temperature=temperature))[1:].tolist()
        return [written.count(t) / len(written) for t in (a, b, c)]
    torch.manual_seed(4)
    cold = fractions(0.05, 2)
    assert cold[0] == 1.0, f'at temperature 0.05 the most likely token should be written (nearly) every time; yours wrote it {cold[0]:.0%} of the time: divide the logits by the temperature'
    torch.manual_seed(5)
    normal = fractions(1.0, 6)
    assert 0.5 < normal[0] < 0.82 and normal[2] > 0.03, f'at temperature 1 the probabilities should be softmax of the logits (about 67%, 24%, 9%); yours gave {normal[0]:.0%}, {normal[1]:.0%}, {normal[2]:.0%}'
    torch.manual_seed(6)
    hot = fractions(4.0, 6)
    assert hot[0] < 0.55 and hot[2] > 0.15, f'at temperature 4 the probabilities should be much flatter (about 41%, 32%, 25%); yours gave {hot[0]:.0%}, {hot[1]:.0%}, {hot[2]:.0%}: divide the logits by the temperature'

@test_case(points=0.5, hidden=True, 
    failure_message="Put @torch.no_grad() on the line above def WriteLeftToRight: writing needs no derivatives.")
def test_write_no_grad(WriteLeftToRight):
    import torch, torch.nn as nn
    from course.stories import StoryTokens, StoryText, STORY_MASK, STORY_UNK, story_vocab
    V = len(story_vocab)

    class Fake(nn.Module):
        """Logits `last` at the last position and `other` everywhere else."""

        def __init__(self, last, other):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.last, self.other = (last, other)
            self.grad_enabled = []

        def forward(self, x):
            self.grad_enabled.append(torch.is_grad_enabled())
            logits = self.other.expand(*x.shape, V).clone()
            logits[..., -1, :] = self.last
            return logits + 0 * self.dummy

    def favour(tokens, values, base=-10000.0):
        logits = torch.full((V,), base)
        logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
        return logits

    def words(text):
        return text.split()
    torch.manual_seed(7)
    logits = favour([1, 2], [1.0, 1.0])
    net = Fake(logits, logits)
    WriteLeftToRight(net, 'the', L=5)
    assert net.grad_enabled and (not any(net.grad_enabled)), 'your network is called with gradients switched on: put @torch.no_grad() on the line above your def'

