from otter.test_files import test_case

OK_FORMAT = False

name = "q9"
points = 3

@test_case(points=0, hidden=False, 
    failure_message="word_frequencies should be a dictionary from words to numbers that add up to one; frequency_entropy and no_talking_loss should be numbers.")
def test_format(word_frequencies, frequency_entropy, no_talking_loss):
    assert isinstance(word_frequencies, dict)
    assert abs(sum(word_frequencies.values()) - 1) < 1e-06
    (float(frequency_entropy), float(no_talking_loss))

@test_case(points=1, hidden=True, 
    failure_message="Some frequencies are off. Each sentence has 4 positions: 'the' fills one of them in both sentences, 'cat' one in the sentence that has probability 0.8, and so on.")
def test_frequencies(word_frequencies):
    from course import SENTENCES
    truth = {}
    for sentence, prob in SENTENCES.items():
        for word in sentence.split():
            truth[word] = truth.get(word, 0) + prob / 4
    for word in set(truth) | set(word_frequencies):
        assert abs(word_frequencies.get(word, 0) - truth.get(word, 0)) < 1e-06, word

@test_case(points=1, hidden=True, 
    failure_message="The entropy should be -sum p log p over the six words, with the natural log: about 1.64.")
def test_entropy(frequency_entropy):
    import math
    p = [0.25, 0.25, 0.2, 0.2, 0.05, 0.05]
    assert abs(float(frequency_entropy) - -sum((x * math.log(x) for x in p))) < 0.005

@test_case(points=1, hidden=True, 
    failure_message="The loss should be four times the entropy (one cost per position, four positions): about 6.55.")
def test_loss(no_talking_loss):
    import math
    p = [0.25, 0.25, 0.2, 0.2, 0.05, 0.05]
    assert abs(float(no_talking_loss) - 4 * -sum((x * math.log(x) for x in p))) < 0.02

