"""The class at a glance: per question, how many rows made each named mistake
(:mod:`autograder.mistakes`) and how many lost points in a way no named mistake explains, for
``report.html`` (with the rows behind each count) and ``mistakes.csv``."""
from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field

from .assignment import Assignment
from .csvcells import csv_text, text_cell
from .results import Result

NONE_NAMED = "(none named)"


@dataclass
class Count:
    """The rows of one question that made one mistake (``mistake`` :data:`NONE_NAMED`: the rows
    that lost points there with no named mistake)."""

    question: str
    mistake: str
    sentence: str
    rows: list[Result] = field(default_factory=list)


def counts(assignment: Assignment, results: list[Result]) -> list[Count]:
    """Every question with a catalogue of named mistakes: a count for each mistake made, then the
    rows whose tests ran and lost points there without one. Rows in file order."""
    out: list[Count] = []
    ran = sorted((r for r in results if r.tests_ran), key=lambda r: r.file)
    for q in assignment.auto:
        if q.name not in assignment.known_mistakes:
            continue
        made: dict[str, Count] = {}
        unexplained = Count(q.name, NONE_NAMED, "")
        for r in ran:
            named = [m for m in r.mistakes if m.question == q.name]
            for m in named:
                made.setdefault(m.id, Count(q.name, m.id, m.sentence)).rows.append(r)
            if not named and r.question_points.get(q.name, 0.0) < q.max_points:
                unexplained.rows.append(r)
        out += sorted(made.values(), key=lambda c: (-len(c.rows), c.mistake))
        if unexplained.rows:
            out.append(unexplained)
    return out


def csv_bytes(found: list[Count], graded: int) -> bytes:
    """``mistakes.csv``: question, mistake, what it says, rows, share of the rows whose tests ran."""
    table = [["question", "mistake", "sentence", "rows", "share"]]
    for c in found:
        table.append([c.question, c.mistake, text_cell(c.sentence), str(len(c.rows)),
                      f"{len(c.rows) / graded:.4f}" if graded else ""])
    return csv_text(table).encode("utf-8")


def section_html(found: list[Count], who: Callable[[str], str]) -> str:
    """The report's section: a table of counts, each linked to the list of its rows (``who`` gives a
    row's name as the report writes it, already escaped)."""
    esc = html.escape
    parts = ["<h2>Named mistakes</h2>"]
    if not found:
        parts.append("<p>No row lost points in a question with named mistakes.</p>")
        return "".join(parts)
    parts.append("<p>Per question, the rows whose code behaves like a known mistake (the judge ran it "
                 "beside the mistake on inputs of its own; points are unchanged), and those that lost "
                 "points in a way no named mistake explains: read those. Also in "
                 "<code>mistakes.csv</code>.</p><table><tr><th>question</th><th>mistake</th>"
                 "<th>rows</th></tr>")
    for k, c in enumerate(found):
        said = esc(c.sentence) if c.sentence else "lost points, no named mistake"
        parts.append(f"<tr><td>{esc(c.question)}</td><td>{esc(c.mistake)}: {said}</td>"
                     f"<td><a href='#mistake-{k}'>{len(c.rows)}</a></td></tr>")
    parts.append("</table>")
    for k, c in enumerate(found):
        rows = "".join(f"<li><a href='feedback/{esc(r.stem)}.html'>{who(r.file)}</a></li>" for r in c.rows)
        parts.append(f"<h3 id='mistake-{k}'>{esc(c.question)}: {esc(c.mistake)} ({len(c.rows)})</h3>"
                     f"<ul>{rows}</ul>")
    return "".join(parts)
