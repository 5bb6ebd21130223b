"""`make demo`: the whole pipeline once, on the bundled defaults.

1. the stories: load them and print the vocabulary statistics;
2. NoTalking on the two sentences: train briefly, print the loss next to the page's 6.55, save a plot;
3. `course build`: the student notebooks and autograder tests from the masters;
4. `course solutions --quick`: every solution notebook, executed;
5. `course grade`: the solution and the blank student notebook of every assignment, with a summary.

It exits with 1 (after the summary) when a solution notebook failed to run, when grading failed, or
when a graded notebook did not get the status `ok`; 0 when everything ran.
"""
from __future__ import annotations

import csv
import math
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "runs" / "demo"


def _step(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)), flush=True)


def stories() -> None:
    from course import stories

    _step("1. The stories")
    corpus, vocab = stories.corpus, stories.story_vocab
    counts = Counter(corpus.tolist())
    n = len(corpus)
    entropy = -sum(c / n * math.log(c / n) for c in counts.values())
    unknown = counts[stories.STORY_UNK] / n
    print(f"{n:,} tokens of text, {len(vocab):,} tokens in the vocabulary "
          f"({len(vocab) - 2:,} words + <unk> + _)")
    print(f"most common: {' '.join(vocab[:12])}")
    print(f"unknown words: {unknown:.1%} of the text; word-frequency entropy {entropy:.2f} nats "
          f"(the page's 5.4 line), uniform guessing {math.log(len(vocab)):.2f} (7.6)")
    print(f"a random window: {stories.StoryText(stories.GetBatch(1)[0])}")


def no_talking(steps: int = 1500) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    from course import DiffusionLoss, NoTalking, PlotLosses, SamplePInit, WindowAverage, vocab
    from course.training import Seed, TrainLoop

    _step("2. NoTalking on the two sentences")
    Seed(0)
    net = NoTalking(len(vocab))
    losses = TrainLoop(net, lambda: torch.stack([SamplePInit() for _ in range(64)]),
                       lambda n, x: DiffusionLoss(n, x, 13), steps, desc="NoTalking")
    final = WindowAverage(losses, 100)[-1]
    print(f"after {steps} steps the loss is {final:.2f}; the page predicts 6.55 (4 x 1.64), "
          f"the best possible is 0.50")
    OUT.mkdir(parents=True, exist_ok=True)
    ax = PlotLosses({"NoTalking": losses}, lines={"word frequencies (6.55)": 6.55,
                                                  "best possible (0.50)": 0.50})
    path = OUT / "no_talking_loss.png"
    ax.figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"loss curve saved to {path.relative_to(ROOT)}")


def build() -> list[str]:
    from .build import build, masters

    _step("3. course build")
    names = masters()
    if not names:
        print("no master notebooks in solutions/ yet")
        return []
    start = time.time()
    changed = build()
    print(f"built {len(names)} notebooks in {time.time() - start:.0f} s ({len(changed)} files changed)")
    return names


def solutions(names: list[str]) -> bool:
    """Run the solution notebooks in quick mode; True if every one ran without error."""
    _step("4. course solutions --quick")
    from .solutions import main as run_solutions

    code = run_solutions(["--quick", *names])
    print("all solution notebooks ran" if code == 0 else "some solution notebook failed (see above)")
    return code == 0


def grade(names: list[str]) -> bool:
    """Grade each assignment's solution and blank notebook; True if every grading ran and every
    notebook was graded with the status `ok`."""
    from autograder.config import GradeConfig, GradingError
    from autograder.status import Status, kind_of

    from .build import BUILD, NOTEBOOKS
    from .grade import grade_class

    _step("5. course grade: the solution and the blank notebook of every assignment")
    rows, ok = [], True
    for name in names:
        out = OUT / "grades" / name
        subs = OUT / "submissions" / name
        subs.mkdir(parents=True, exist_ok=True)
        (subs / "solution.ipynb").write_bytes((BUILD / f"{name}-solution.ipynb").read_bytes())
        (subs / "blank.ipynb").write_bytes((NOTEBOOKS / f"{name}.ipynb").read_bytes())
        try:
            code = grade_class(GradeConfig(submissions=(subs,), assignment=name, out=out, progress=False))
        except GradingError as exc:
            print(f"course grade: {exc}")
            code = exc.exit_code
        if code != 0 or not (out / "grades.csv").exists():
            print(f"course grade failed on {name} (exit status {code})")
            ok = False
            continue
        with open(out / "grades.csv", newline="") as f:
            for row in csv.DictReader(f):
                rows.append((name, row["file"], row["total_points_earned"], row["percent_correct"],
                             row["grading_status"]))
    print(f"\n{'assignment':20} {'file':16} {'points':>7} {'percent':>8}  status")
    for name, file, points, percent, status in rows:
        print(f"{name:20} {file:16} {float(points):7.1f} {float(percent):8.1%}  {status}")
        ok = ok and kind_of(status) is Status.OK
    print(f"\ngradebooks and reports in {(OUT / 'grades').relative_to(ROOT)}/<assignment>/")
    return ok


def main() -> int:
    stories()
    no_talking()
    names = build()
    if not names:
        return 0
    ran = solutions(names)
    graded = grade(names)
    if ran and graded:
        return 0
    print("\nmake demo: FAILED: " + "; ".join(
        what for what, good in [("a solution notebook did not run", ran),
                                ("grading failed or a notebook was not graded ok", graded)] if not good),
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
