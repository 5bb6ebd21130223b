from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 6


@test_case(points=1, hidden=False, failure_message='WriteLeftToRight(net, start, L) should return text that starts with `start` and is L tokens long.')  # noqa: E501
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
            self.last, self.other = last, other
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
    dog = story_vocab.index("dog")
    net = Fake(favour([dog], [20.0], base=0.0), favour([dog], [0.0], base=0.0))
    text = WriteLeftToRight(net, "once upon a time", L=12)
    assert type(text) is str, "WriteLeftToRight should return the story as text (StoryText(x))"
    assert words(text)[:4] == ["once", "upon", "a", "time"], "the story should start with the prompt"
    assert len(StoryTokens(text)) == 12, \
        f"with L=12 the story should be 12 tokens long, yours has {len(StoryTokens(text))}"


@test_case(points=1, hidden=True, failure_message='The story must start with the prompt and be exactly L tokens long (32 by default).')  # noqa: E501
def test_write_length_and_prompt(WriteLeftToRight):
    import torch

    from autograder.checks import writing
    from course.handles import student
    from course.stories import StoryTokens
    WriteLeftToRight = student(WriteLeftToRight)
    torch.manual_seed(1)
    net = writing.last_and_elsewhere(writing.favour(list(range(50)), [1.0] * 50),
                                     writing.favour(list(range(50)), [1.0] * 50))
    for start, L in [("the", 7), ("one day , lily went", 20), ("once upon a time", 32)]:
        tokens = writing.story(WriteLeftToRight(net, start, L=L))
        assert len(tokens) == L, f"WriteLeftToRight(net, {start!r}, L={L}) gave {len(tokens)} tokens"
        assert torch.equal(tokens[:len(StoryTokens(start))], StoryTokens(start)), \
            f"the story does not start with {start!r}"
    text = WriteLeftToRight(net, "once upon a time")
    assert type(text) is str and len(StoryTokens(text)) == 32, \
        "by default (L=32) the story should be 32 tokens long"


@test_case(points=1, hidden=True, failure_message="The guess for the next token is the network's output at the last position: logits = net(x[None])[0, -1].")  # noqa: E501
def test_write_last_position(WriteLeftToRight):
    import torch

    from autograder.checks import writing
    from course.handles import student
    from course.stories import StoryTokens, story_vocab
    WriteLeftToRight = student(WriteLeftToRight)
    torch.manual_seed(2)
    for start in ("the big", "once upon a time there"):
        last, elsewhere = writing.some_words(2)
        net = writing.last_and_elsewhere(writing.favour([last], [30.0]), writing.favour([elsewhere], [30.0]))
        new = writing.story(WriteLeftToRight(net, start, L=10))[len(StoryTokens(start)):].tolist()
        said = {last: story_vocab[last], elsewhere: story_vocab[elsewhere]}
        assert new and all(t == last for t in new), f"a network that says {said[last]!r} at the last " \
            f"position and {said[elsewhere]!r} everywhere else should make your function write only " \
            f"{said[last]!r}; it wrote {[story_vocab[t] for t in new]}: are you reading the logits of the " \
            "last position, [0, -1]?"


@test_case(points=0.5, hidden=True, failure_message='Each new token is guessed from the whole story so far: call the network on everything you have (net(x[None])), with the new token stuck on the end each time.')  # noqa: E501
def test_write_reads_story_so_far(WriteLeftToRight):
    import torch

    from autograder.checks import writing
    from course.handles import student
    from course.stories import StoryTokens, story_vocab
    WriteLeftToRight = student(WriteLeftToRight)
    torch.manual_seed(8)
    chain = writing.some_words(40)
    after = torch.tensor(chain)[torch.randint(40, (len(story_vocab),))]    # any token: one of the 40 words
    after[torch.tensor(chain)] = torch.tensor(chain[1:] + chain[:1])   # a word: the next one round the circle
    net = writing.following(after)
    start, L = "one day , lily", 11
    story = writing.story(WriteLeftToRight(net, start, L=L))
    fed = [x.reshape(-1) for x in net.fed]
    lengths = sorted({len(x) for x in fed})
    assert all(x.tolist() == story[:len(x)].tolist() for x in fed), \
        "the network was called on something that is not the beginning of the story"
    n0, n = len(StoryTokens(start)), len(story)
    assert n > n0, "your function wrote nothing after the prompt"
    liked = [{int(after[t]) for t in story[:m]} for m in range(n)]   # what the network favoured so far
    assert all(int(story[m]) in liked[m] for m in range(n0, n)), "your function does not write the tokens " \
        "the network chooses: call it on the story so far and sample from softmax(logits / temperature) at " \
        "the last position"
    assert lengths == list(range(n0, n)), f"the network saw stories of lengths {lengths}; to write tokens " \
        f"{n0} to {n - 1} it should see the story so far each time"


@test_case(points=1, hidden=True, failure_message='Never write STORY_MASK or STORY_UNK: set their logits to -math.inf before the softmax, even when the network likes them best.')  # noqa: E501
def test_write_forbidden(WriteLeftToRight):
    import torch

    from autograder.checks import writing
    from course.handles import student
    from course.stories import STORY_MASK, STORY_UNK, story_vocab
    WriteLeftToRight = student(WriteLeftToRight)
    torch.manual_seed(3)
    dog, cat = writing.some_words(2)
    logits = writing.favour([STORY_MASK, STORY_UNK, dog, cat], [50.0, 49.0, 2.0, 1.0])
    net = writing.last_and_elsewhere(logits, logits)
    for temperature in (1.0, 0.3):
        text = WriteLeftToRight(net, "the", L=20, temperature=temperature)
        tokens = writing.story(text)
        assert "_" not in text.split() and "<unk>" not in text.split() \
            and not (tokens[1:] == STORY_MASK).any() and not (tokens[1:] == STORY_UNK).any(), \
            "your story contains the mask or <unk>: set their logits to -math.inf before the softmax"
        assert len(tokens) > 1 and all(t in (dog, cat) for t in tokens[1:].tolist()), \
            f"after the mask and <unk>, the network only likes {story_vocab[dog]!r} and " \
            f"{story_vocab[cat]!r}, but your story has other words: sample from " \
            "softmax(logits / temperature) of the network's logits"


@test_case(points=1.5, hidden=True, failure_message='Sample from softmax(logits / temperature): at a low temperature nearly always the most likely token, at a high one much more evenly.')  # noqa: E501
def test_write_temperature(WriteLeftToRight):
    import torch

    from autograder.checks import writing
    from course.handles import student
    WriteLeftToRight = student(WriteLeftToRight)
    torch.manual_seed(7)
    a, b, c = writing.some_words(3)
    logits = writing.favour([a, b, c], [2.0, 1.0, 0.0])
    net = writing.last_and_elsewhere(logits, logits)
    torch.manual_seed(4)
    cold = writing.fractions(WriteLeftToRight, net, 0.05, 2, (a, b, c))
    assert cold[0] == 1.0, "at temperature 0.05 the most likely token should be written (nearly) every " \
        f"time; yours wrote it {cold[0]:.0%} of the time: divide the logits by the temperature"
    torch.manual_seed(5)
    normal = writing.fractions(WriteLeftToRight, net, 1.0, 6, (a, b, c))
    assert 0.5 < normal[0] < 0.82 and normal[2] > 0.03, "at temperature 1 the probabilities should be " \
        "softmax of the logits (about 67%, 24%, 9%); yours gave " \
        f"{normal[0]:.0%}, {normal[1]:.0%}, {normal[2]:.0%}"
    torch.manual_seed(6)
    hot = writing.fractions(WriteLeftToRight, net, 4.0, 6, (a, b, c))
    assert hot[0] < 0.55 and hot[2] > 0.15, "at temperature 4 the probabilities should be much flatter " \
        f"(about 41%, 32%, 25%); yours gave {hot[0]:.0%}, {hot[1]:.0%}, {hot[2]:.0%}: divide the logits by " \
        "the temperature"
