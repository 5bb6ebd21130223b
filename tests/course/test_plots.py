"""The plot helpers draw what the page asks for: labelled lines, word ticks, four bars."""
import matplotlib
import numpy as np
import pytest
import torch

from course import PlotAttention, PlotLosses, PlotSentences, WindowAverage

matplotlib.use("Agg")


def test_window_average():
    assert np.allclose(WindowAverage([1, 2, 3, 4], window=2), [1, 1.5, 2.5, 3.5])
    assert len(WindowAverage(list(range(500)), 100)) == 500


def test_loss_plot_has_curves_lines_and_log_scale():
    ax = PlotLosses({"NoTalking": [7.0] * 50, "WithPosition": [1.0] * 50},
                    lines={"6.55": 6.55, "1.0": 1.0, "0.50": 0.50}, log=True)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["NoTalking (window 100)", "WithPosition (window 100)"]
    assert labels[2:] == ["6.55", "1.0", "0.50"]
    assert ax.get_yscale() == "log"
    assert sorted(line.get_ydata()[0] for line in ax.lines[2:]) == [0.5, 1.0, 6.55]


def test_attention_plot_labels_ticks_with_words():
    image = PlotAttention(torch.full((4, 4), 0.25), "the _ is alive")
    ax = image.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["the", "_", "is", "alive"]
    assert image.get_clim() == (0, 1)


def test_sentence_bar_chart():
    ax = PlotSentences({"the cat is alive": 70, "the box is empty": 20, "the cat is empty": 6,
                        "the box is alive": 4})
    assert [b.get_height() for b in ax.patches] == [70, 20, 6, 4]
    assert "10.0%" in ax.get_title()


@pytest.fixture(autouse=True)
def _close():
    yield
    import matplotlib.pyplot as plt
    plt.close("all")


def test_sentence_chart_counts_every_kind_of_nonsense_like_nonsense_fraction():
    from course import Encode, NonsenseFraction, SentenceCounts

    sentences = [Encode(s) for s in ["the cat is alive"] * 6 + ["the box is empty"] * 2
                 + ["the cat is empty", "the the is alive"]]
    ax = PlotSentences(SentenceCounts(sentences))
    assert [b.get_height() for b in ax.patches] == [6, 2, 1, 0, 1]          # a fifth bar: other
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "other"
    assert NonsenseFraction(sentences) == pytest.approx(0.2)
    assert "20.0%" in ax.get_title() and "not one of the two real sentences" in ax.get_title()
