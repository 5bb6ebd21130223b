from otter.test_files import test_case

OK_FORMAT = False

name = "q9"
points = 3


@test_case(points=0, hidden=False, failure_message='word_frequencies should be a dictionary from words to numbers that add up to one; frequency_entropy and no_talking_loss should be numbers.')  # noqa: E501
def test_format(word_frequencies, frequency_entropy, no_talking_loss):
    from course.handles import number, student
    frequencies = student(word_frequencies)
    assert type(frequencies) is dict and all(type(w) is str for w in frequencies), "not a dictionary of words"
    assert abs(sum(number(p) for p in frequencies.values()) - 1) < 1e-6, \
        "the frequencies do not add up to one"
    number(student(frequency_entropy)), number(student(no_talking_loss))


@test_case(points=1, hidden=True, failure_message="Some frequencies are off. Each sentence has 4 positions: 'the' fills one of them in both sentences, 'cat' one in the sentence that has probability 0.8, and so on.")  # noqa: E501
def test_frequencies(word_frequencies):
    from autograder.checks import answers
    from course.handles import number, student
    frequencies = student(word_frequencies)
    assert type(frequencies) is dict, "not a dictionary"
    truth = answers.sentence_word_frequencies()
    for word in set(truth) | set(frequencies):
        assert abs(number(frequencies.get(word, 0)) - truth.get(word, 0)) < 1e-6, f"{word!r} is off"


@test_case(points=1, hidden=True, failure_message='The entropy should be -sum p log p over the words of your dictionary, with the natural log (math.log): about 1.64 for the right frequencies.')  # noqa: E501
def test_entropy(frequency_entropy, word_frequencies):
    from autograder.checks import answers
    from course.handles import number, student
    entropy = number(student(frequency_entropy))
    targets = [answers.entropy([0.25, 0.25, 0.2, 0.2, 0.05, 0.05])]
    own = answers.plausible_frequencies(student(word_frequencies))
    if own is not None:                          # or the entropy of your own dictionary, when it
        targets.append(answers.entropy(own))     # is a real attempt at the frequencies
    assert min(abs(entropy - t) for t in targets) < 0.005, "not -sum p log p"


@test_case(points=1, hidden=True, failure_message='The loss should be four times the entropy (one cost per position, four positions): about 6.55.')  # noqa: E501
def test_loss(no_talking_loss, frequency_entropy, word_frequencies):
    from autograder.checks import answers
    from course.handles import StudentError, number, student
    loss = number(student(no_talking_loss))
    targets = [4 * answers.entropy([0.25, 0.25, 0.2, 0.2, 0.05, 0.05])]
    try:                                         # or four times your own entropy, when it comes
        entropy = number(student(frequency_entropy))     # from a real attempt at the frequencies
        if answers.plausible_frequencies(student(word_frequencies)) is not None:
            targets.append(4 * entropy)
    except (AttributeError, StudentError, TypeError, ValueError):
        pass
    assert min(abs(loss - t) for t in targets) < 0.02, "not four times the entropy"
