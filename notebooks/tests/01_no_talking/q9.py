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

