"""The stories: the page's tokenisation and vocabulary rule, on the genuine shared text."""
import math
from collections import Counter

import torch

from course.stories import MakeVocab, Words


def test_words_follow_the_page_rule():
    raw = 'Once upon a time, Lily\'s cat said "hi!"\n<|endoftext|>\nThe end.'
    assert Words(raw) == ["once", "upon", "a", "time", ",", "lily's", "cat", "said", '"', "hi", "!",
                          '"', "the", "end", "."]


def test_vocabulary_is_most_common_plus_unk_and_mask():
    words = ["a"] * 5 + ["b"] * 3 + ["c"]
    assert MakeVocab(words, size=2) == ["a", "b", "<unk>", "_"]


def test_story_vocabulary_has_2002_tokens(shared_stories):
    vocab = shared_stories.story_vocab
    assert len(vocab) == 2002
    assert vocab[shared_stories.STORY_UNK] == "<unk>" and vocab[shared_stories.STORY_MASK] == "_"
    assert (shared_stories.STORY_UNK, shared_stories.STORY_MASK) == (2000, 2001)


def test_story_tokens_mask_and_round_trip(shared_stories):
    text = "one day , lily went to the park ."
    x = shared_stories.StoryTokens(text)
    assert shared_stories.StoryText(x) == text
    masked = shared_stories.StoryTokens("one day _ lily _")
    assert masked[2] == shared_stories.STORY_MASK and masked[4] == shared_stories.STORY_MASK
    assert shared_stories.StoryTokens("zyzzyva")[0] == shared_stories.STORY_UNK


def test_get_batch_shape_and_range(shared_stories):
    x = shared_stories.GetBatch(8, L=16)
    assert x.shape == (8, 16) and x.dtype == torch.long
    assert 0 <= x.min() and x.max() < shared_stories.STORY_MASK       # the text holds no masks
    assert shared_stories.GetBatch().shape == (64, 32)
    corpus = shared_stories.corpus
    row = x[0]
    starts = (corpus[: len(corpus) - 16] == row[0]).nonzero()[:, 0]
    assert any(torch.equal(corpus[s:s + 16], row) for s in starts)   # a real window of the text


def test_unigram_entropy_is_about_5_4(shared_stories):
    counts = Counter(shared_stories.corpus.tolist())
    n = sum(counts.values())
    entropy = -sum(c / n * math.log(c / n) for c in counts.values())
    assert abs(entropy - 5.4) < 0.2


def test_importing_the_course_loads_nothing(monkeypatch):
    import subprocess
    import sys
    code = ("import sys, course, course.stories; "
            "assert 'requests' not in sys.modules and 'matplotlib' not in sys.modules; "
            "assert course.stories._world.cache_info().currsize == 0; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PATH": "", "COURSE_STORIES_URL": "http://127.0.0.1:9/none"})
    assert out.stdout.strip() == "ok", out.stderr
