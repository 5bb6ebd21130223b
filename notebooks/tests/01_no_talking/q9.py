from otter.test_files import test_case

OK_FORMAT = False

name = "q9"
points = 3

@test_case(points=0, hidden=False, 
    failure_message="word_frequencies should be a dictionary from words to numbers that add up to one; frequency_entropy and no_talking_loss should be numbers.")
def test_format(word_frequencies, frequency_entropy, no_talking_loss):
    from course.handles import number, student
    frequencies = student(word_frequencies)
    assert type(frequencies) is dict and all((type(w) is str for w in frequencies)), 'not a dictionary of words'
    assert abs(sum((number(p) for p in frequencies.values())) - 1) < 1e-06, 'the frequencies do not add up to one'
    (number(student(frequency_entropy)), number(student(no_talking_loss)))

