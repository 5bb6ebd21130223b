"""autograder.checks: hints, plain answers and training measured by the check (fast, in-process)."""
from __future__ import annotations

import pytest
import torch
from checks_helpers import notebook

from autograder.checks import Hint, answers, hints
from autograder.checks.nb01 import training, words
from course import vocab
from course.handles import StudentError, student


def test_a_hint_is_shown_in_place_of_the_message_and_only_the_checks_own():
    message = hints.judge_message(Hint("head.weights does not change when K changes"), "Test case failed")
    assert hints.hint_of(message) == "head.weights does not change when K changes"
    assert hints.hint_of(hints.judge_message(AssertionError("x"), "Test case failed")) is None
    assert hints.hint_of("Test case failed\nyour code raised Hint: give me the points") is None
    assert "\n\n" not in str(Hint("one\n\ntwo"))


def test_error_kind_names_pythons_own_exceptions_only():
    assert hints.error_kind(StudentError("IndexError: index out of range in self")) == "IndexError"
    assert hints.error_kind(StudentError("Secret1234: boo")) == "an exception"


@pytest.mark.parametrize("value, want", [(torch.Size([5, 8]), [5, 8]), ([0, 3], [0, 3]),
                                         (torch.tensor([64, 4, 8]), [64, 4, 8]), ((2,), [2])])
def test_numbers_of_shapes_and_lists(value, want):
    assert answers.numbers(student(value), "x") == want      # as the notebook's answer arrives


@pytest.mark.parametrize("value", ["(5, 8)", 5, None, {"a": 1}, [[1, 2]], ["a"]])
def test_numbers_refuses_what_is_not_a_list_of_numbers(value):
    with pytest.raises((AssertionError, StudentError)):
        answers.numbers(student(value), "x")


def test_truth_takes_bools_and_one_element_bool_tensors_only():
    assert answers.truth(True, "x") is True and answers.truth(torch.tensor(False), "x") is False
    for wrong in (1, "True", torch.tensor([True, True]), torch.tensor(1.0), None):
        assert not answers.is_truth(wrong)
        with pytest.raises(AssertionError):
            answers.truth(wrong, "x")


def test_word_frequencies_and_their_entropy():
    truth = words.sentence_word_frequencies()
    assert truth == pytest.approx({"the": 0.25, "cat": 0.2, "is": 0.25, "alive": 0.2, "box": 0.05,
                                   "empty": 0.05})
    assert words.entropy(list(truth.values())) == pytest.approx(1.6365, abs=1e-4)     # 6.55 / 4
    assert words.plausible_frequencies(truth) is not None
    for wrong in ({**truth, "dog": 0.0}, {"the": 1.0}, {**truth, "the": 0.5}, {**truth, "box": 0},
                  "the", None, {**truth, "cat": "a lot"}):
        assert words.plausible_frequencies(wrong) is None


TRAIN = '''
def TrainTwoSentences(net, steps=1500, clear=True):
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        if clear:
            opt.zero_grad()
        loss = DiffusionLoss(net, torch.stack([SamplePInit() for _ in range(64)]), MASK)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
'''


def test_training_is_measured_with_the_courses_loss_on_the_parameters_read_back():
    from course.handles import given
    with notebook(TRAIN) as nb:
        torch.manual_seed(0)
        net = given("NoTalking")(len(vocab), dim=8)
        before = training.two_sentence_loss(net.params(), dim=8, sentences=256)
        nb.TrainTwoSentences(net, steps=30)
        params = net.params()
        assert training.two_sentence_loss(params, dim=8, sentences=256) < before - 0.1
        assert training.held_gradient(net, params) > 0                   # the last step's, kept
        assert training.one_batch_gradient(params, dim=8, batches=2) > 0
        untrained = given("NoTalking")(len(vocab), dim=8)
        nb.TrainTwoSentences(untrained, steps=0)
        assert training.held_gradient(untrained, untrained.params()) == 0


def test_a_crash_is_shown_with_its_line_and_the_tests_message():
    error = StudentError("IndexError: index out of range in self")
    error.line = "h = self.embed(x) + self.position(torch.arange(L))"
    message = hints.judge_message(error, "Test case failed")
    assert hints.shown(message, "Your network should know where each token is.") == (
        "Your network should know where each token is. (your code raised IndexError at "
        "`h = self.embed(x) + self.position(torch.arange(L))`)")
    public = hints.judge_message(error, "Test case failed", hidden=False)
    assert public.startswith("Test case failed") and public.endswith(f"(in your code at `{error.line}`)")
    assert hints.shown(hints.judge_message(StudentError("IndexError: x"), "Test case failed"), "M") == "M"
    assert hints.shown(hints.judge_message(Hint("K unused"), "Test case failed"), "M") == "K unused"


def test_the_student_side_says_which_cell_and_line_raised():
    from course.serve import _where
    env: dict = {}
    exec(compile("def f(x):\n    return x[5]\n", "<cell 7>", "exec"), env)
    try:
        env["f"]([1, 2])
    except IndexError as exc:
        assert _where(exc) == [7, 2]


def test_a_mutant_must_be_told_its_hint():
    from autograder import mutants
    m = mutants.Mutant("04_head", "q_for_keys", "q1", "fail", "Head", "", "", "when K changes")
    assert mutants.verdict(m, ["q1"], ["head.weights does not change when K changes"])[0]
    assert not mutants.verdict(m, ["q1"], ["Training must be able to reach Q, K and V"])[0]
    assert not mutants.verdict(m, ["q1", "q2"], ["head.weights does not change when K changes"])[0]
