"""A student's feedback as a page: ``feedback/<stem>.md`` rendered as ``feedback/<stem>.html``.

The Markdown is rendered by markdown-it-py (CommonMark) with raw HTML off, so whatever a submission
printed (a public test's message, a cell's error) and whatever the file was named comes out
escaped; the page carries the hand-grading pages' Content-Security-Policy (no script, no file,
nothing loaded), so it is safe to open and to hand back through the LMS: Canvas attaches it to the
student's submission as a comment (``canvas_feedback.zip``, :mod:`instructor.handback`), Moodle takes
its body in the grading worksheet's "Feedback comments" column (:mod:`instructor.lms`).
"""
from __future__ import annotations

import html
import re

from .handgrading import CSP, markdown_html
from .results import num

STYLE = ("body{font-family:sans-serif;max-width:52em;margin:1.5em auto;padding:0 1em;color:#222;"
         "line-height:1.4}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f5f5;"
         "padding:.5em}code{background:#f0f0f0}h1{font-size:1.3em;overflow-wrap:anywhere}"
         "h2{font-size:1.1em;border-bottom:1px solid #ddd}")


def body_html(markdown: str) -> str:
    """The feedback's HTML without the page around it (what Moodle's "Feedback comments" holds); the
    course's own markers (``<!-- ... -->`` lines, :data:`instructor.manual.MARKER`) are left out."""
    text = "\n".join(line for line in markdown.split("\n") if not re.fullmatch(r"<!--.*-->", line.strip()))
    return markdown_html(text)


def page_html(markdown: str, title: str) -> str:
    """The feedback as a page of its own, to open in a browser or print."""
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            f"{body_html(markdown)}</body></html>\n")


def total_line(auto: float, auto_max: float, by_hand: float, by_hand_max: float) -> str:
    """The final total once every hand-graded question has its points."""
    return (f"**Total: {num(auto + by_hand)} / {num(auto_max + by_hand_max)} points** "
            f"(automatically graded {num(auto)} / {num(auto_max)}; graded by hand "
            f"{num(by_hand)} / {num(by_hand_max)}).")


BY_HAND = "Graded by your instructor (not included above)"


def by_hand_line(questions: list[str]) -> str:
    """Under the automatic points, while the hand-graded points are not in a total yet."""
    return f"{BY_HAND}: {', '.join(questions)}."
