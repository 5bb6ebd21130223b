"""Transformer from Scratch: the code the course gives you.

    from course import *            # the two-sentence world, the diffusion tools, the GIVEN networks
                                    # (NoTalking, TinyDenoiser with its Rotate), the plots
    from course.stories import story_vocab, StoryTokens, StoryText, GetBatch   # loads the stories

Importing this package loads no data and touches no network.
"""
from .nets import MakeGuesser, NextTokenLoss, NoTalking, SmallStart, device, pick_device
from .plots import PlotAttention, PlotLosses, PlotSentences, WindowAverage
from .tinydenoiser import Rotate, TinyDenoiser
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
    "TinyDenoiser", "Rotate", "TinyDenoiserCurve",
]
