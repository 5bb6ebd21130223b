"""Transformer from Scratch: the code the course gives you.

    from course import *            # the two-sentence world, the diffusion tools, the GIVEN network
                                    # NoTalking, the plots, TinyDenoiser's loss curve
    from course.stories import story_vocab, StoryTokens, StoryText, GetBatch   # loads the stories
    from course.tinydenoiser import TinyDenoiser, Rotate    # notebook 08 reads its code

Importing this package loads no data and touches no network. ``course/tinydenoiser.py`` ships only
with notebook 08 (it holds answers of notebooks 06 to 08), so nothing here imports it.
"""
from .nets import MakeGuesser, NextTokenLoss, NoTalking, SmallStart, device, pick_device
from .plots import PlotAttention, PlotLosses, PlotSentences, WindowAverage
from .tinydenoiser_curve import TinyDenoiserCurve
from .two_sentences import (
                            MASK,
                            SENTENCES,
                            Decode,
                            DiffusionLoss,
                            Encode,
                            GuessX0,
                            NonsenseFraction,
                            SamplePInit,
                            SentenceCounts,
                            Undiffuse,
                            UndiffuseGreedy,
                            UndiffuseTemperature,
                            vocab,
)

__all__ = [
    "vocab", "MASK", "SENTENCES", "Encode", "Decode", "SamplePInit", "GuessX0", "DiffusionLoss",
    "Undiffuse", "UndiffuseGreedy", "UndiffuseTemperature", "SentenceCounts", "NonsenseFraction",
    "device", "pick_device", "MakeGuesser", "NoTalking", "SmallStart", "NextTokenLoss",
    "WindowAverage", "PlotLosses", "PlotAttention", "PlotSentences",
    "TinyDenoiserCurve",
]
