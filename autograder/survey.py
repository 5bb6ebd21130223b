"""Before any notebook runs: every staged notebook read by :mod:`autograder.notebook_info` in a process
of its own, under a memory cap, each notebook bounded in time (:mod:`autograder.inspector`): which
week's notebook each one is (another week's is not run at all), and its answers to the manual
questions (with the images saved in skipped answer cells, checked again and written to the output
folder) for the hand-grading pages.
"""
from __future__ import annotations

import base64
from pathlib import Path

from . import handgrading, inputs, notebook_info
from .assignment import Assignment
from .inspector import Inspector

REPO = Path(__file__).resolve().parent.parent


class Survey:
    """What the grader read in each notebook (``info``, by submission index) and which ones are
    another week's (``wrong``: index -> that week's name)."""

    def __init__(self, asg: Assignment, subs: list[inputs.Submission], root: Path, staging: Path,
                 out: Path) -> None:
        self.asg = asg
        self.subs = subs
        self.root = root
        self.staging = staging
        self.out = out
        self.warnings: list[str] = []      # what reading the notebooks found to warn about
        self.info: dict[int, dict] = {}
        self.wrong: dict[int, str] = {}
        self.inspector: Inspector | None = None

    def start(self) -> None:
        """Start reading (it runs while the fork server starts)."""
        items = [(i, str(s.path), str(s.path) + ".info.json")
                 for i, s in enumerate(self.subs) if s.path is not None]
        blank = handgrading.blank_notebook(self.asg)
        job = {"manual": [q.name for q in self.asg.questions if q.manual],
               "given": list(self.asg.given_code),
               "answer_templates": handgrading.answer_templates(blank, self.asg),
               "memory_bytes": 2 * 2**30}
        self.inspector = Inspector(items, job, self.root, self.staging / "notebook_info.log", REPO)

    def collect(self) -> None:
        """Wait for the reader; keep what it found, the saved images, and the other weeks' notebooks."""
        assert self.inspector is not None           # start() made it
        self.info = self.inspector.wait()
        for i, why in sorted(self.inspector.slow.items()):
            self.warnings.append(f"{self.subs[i].file}: {why}; graded without its week check and "
                                 "its hand-grading answers")
        for i, info in self.info.items():
            try:
                self._save_images(self.subs[i].stem, info)
            except (OSError, ValueError, TypeError, AttributeError, KeyError):
                self.info[i] = {"error": "not inspected"}
        known = handgrading.known_notebooks(self.asg)
        self.wrong = {}
        for i, info in self.info.items():
            other = notebook_info.wrong_notebook(info, self.asg.name, known, self.asg.given_code)
            if other:
                self.wrong[i] = other

    def _save_images(self, stem: str, info: dict) -> None:
        """The images saved in a notebook's skipped answer cells go to the output folder (checked
        again as PNGs); the answers keep their paths."""
        for a in info.get("answers", {}).values():
            for c in a.get("cells", []):
                saved = c.get("saved")
                if not saved:
                    continue
                for k, o in enumerate(saved, 1):
                    if "png" not in o:
                        continue
                    data = base64.b64decode(o.pop("png"), validate=True)
                    if notebook_info.check_png(data) is not None:
                        o["note"] = "a saved image not shown: not a PNG"
                        continue
                    path = f"figures/{stem}/saved-cell{int(c['cell']):03d}-{k}.png"
                    (self.out / path).parent.mkdir(parents=True, exist_ok=True)
                    (self.out / path).write_bytes(data)
                    o["figure"] = path

    def figure_cells(self, index: int) -> list[int] | None:
        """The cells whose figures the hand-grading pages show (the manual answers' code cells that
        run); None (every cell) when the notebook could not be read here."""
        info = self.info.get(index, {})
        if "answers" not in info:
            return None
        return sorted({c["cell"] for a in info["answers"].values() for c in a.get("cells", [])
                       if c.get("type") == "code" and not c.get("skipped")})

    def kill(self) -> None:
        if self.inspector is not None:
            self.inspector.kill()
