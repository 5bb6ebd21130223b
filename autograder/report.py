"""What grading writes: ``grades.csv``, ``results/<stem>.json``, ``feedback/<stem>.md`` (and the same
rendered as ``feedback/<stem>.html``, :mod:`autograder.feedback`), ``report.html``.

``grades.csv`` has Otter's ``final_grades.csv`` columns: ``file``, one column per question in the
assignment's order, ``total_points_earned``, ``percent_correct`` (a fraction, 0 to 1, of the
automatically graded points) and ``grading_status``; then ``id`` (the Canvas or Moodle id in the
row's name), ``manual_points_earned`` and ``final_points_earned`` (filled in by ``course manual``).
Questions graded by hand (``manual: true``) keep their column, left empty for the instructor to fill
in (:mod:`autograder.handgrading`); they count neither in the total nor in the percentage. Rows are
sorted by ``file`` and the file holds no times, so the same submissions always give the same bytes.
A text cell that a spreadsheet would read as a formula (it starts with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return), or that starts with an apostrophe, gets a leading apostrophe, as OWASP
advises against CSV injection: spreadsheets show it as text, and reading strips exactly one
(:mod:`autograder.csvcells`). Lines end in ``\r\n``, so a field holding a line break is quoted.
"""
from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from . import feedback, handgrading, mistakes_report, outdir, similarity
from .assignment import Assignment
from .csvcells import FORMULA_START, clean, csv_text, text_cell  # noqa: F401  (FORMULA_START: re-exported)
from .inputs import entries_line, lms_id, skip_counts
from .results import EXTRA_COLUMNS, NO_NAMES, Result, StudentNames, num, percent, student_id, student_name
from .runmeta import RunMeta
from .status import Status

# A row's status is read by its kind (autograder.status): another week's notebook (not run) is
# Status.WRONG_NOTEBOOK; an upload nobody could read (not valid JSON, empty, a zip that cannot be
# unpacked, a link or FIFO where a notebook should be) is Status.unreadable, as uncertain as another
# week's notebook, so held from the gradebook import, never exported as 0; code the rules do not
# allow is Status.flagged, its points for a person to confirm before they count anywhere.


def grades_csv(assignment: Assignment, results: list[Result]) -> str:
    """grades.csv's text (:func:`grades_table`)."""
    return csv_text(grades_table(assignment, results))


def grades_csv_bytes(table: list[list[str]]) -> bytes:
    """grades.csv as it is written, from its rows (the header first, every cell as written: text
    cells through :func:`text_cell`): by ``course grade`` (:func:`write_rows`) and again by ``course
    manual`` with the hand grades merged in (:mod:`instructor.manual`)."""
    return csv_text(table).encode("utf-8", errors="replace")


def grades_table(assignment: Assignment, results: list[Result]) -> list[list[str]]:
    """Otter's columns, then ``id`` (from Canvas and Moodle names), ``manual_points_earned`` (the
    manual columns' sum once all are filled in; 0.0 when there are none) and ``final_points_earned``
    (``total_points_earned`` plus that sum): what goes to the LMS."""
    rows = [["file"] + [q.name for q in assignment.questions]
            + ["total_points_earned", "percent_correct", "grading_status"] + EXTRA_COLUMNS]
    has_manual = any(q.manual for q in assignment.questions)
    for r in sorted(results, key=lambda r: r.file):
        row = [text_cell(r.file)]
        for q in assignment.questions:
            row.append("" if q.manual else num(r.question_points.get(q.name, 0.0)))
        row += [num(r.total), num(percent(r.total, assignment.max_points)), text_cell(r.status)]
        row += [student_id(r.file)] + (["", ""] if has_manual else [num(0.0), num(r.total)])
        rows.append(row)
    return rows


def _mb(n: int | None) -> float | None:
    return None if n is None else round(n / 2**20, 1)


def result_json(assignment: Assignment, r: Result) -> str:
    doc: dict[str, Any] = {
        "file": r.file,
        "id": student_id(r.file),
        "assignment": assignment.name,
        "grading_status": r.status,
        "total_points_earned": round(r.total, 4),
        "max_points": assignment.max_points,
        "percent_correct": round(percent(r.total, assignment.max_points), 4),
        "questions": [{"question": q.name, "manual": q.manual,
                       "points": None if q.manual else round(r.question_points.get(q.name, 0.0), 4),
                       "max_points": q.points if q.manual else q.max_points}
                      for q in assignment.questions],
        "tests": [{"question": c.question, "name": c.name, "points": c.points, "max_points": c.max_points,
                   "hidden": c.hidden, "passed": c.passed, "message": c.message,
                   **({"detail": c.detail} if c.detail else {})} for c in r.cases],
        "cell_errors": r.cell_errors,
        "tampering": r.tampering,
        "peak_memory_mb": _mb(r.peak_memory),
        "output": r.output,
        "manual_answers": r.answers,
        "notebook_note": r.notebook_note,
        "answer_outputs": {str(k): v for k, v in sorted(r.cell_outputs.items())},
        "figures": [{"cell": cell, "file": path} for cell, path in r.figures],
        "figure_notes": [{"cell": cell, "note": note} for cell, note in r.figure_notes],
        "answer_code": r.answer_code,
        "sha256": r.sha256,
        "mistakes": [m.as_dict() for m in r.mistakes],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def feedback_md(assignment: Assignment, r: Result) -> str:
    """What the student may see: public test output in full; hidden tests as pass/fail and a hint."""
    lines = [f"# {assignment.name}: feedback for {r.file}", ""]
    if r.grading.kind is Status.WRONG_NOTEBOOK:    # nothing ran: no points, no tests to list as failed
        lines.append(f"Not graded: this notebook was not run ({r.status}). "
                     f"Hand in your {assignment.name} notebook.")
        return "\n".join(lines) + "\n"
    lines.append(f"Automatically graded: **{num(r.total)} / {num(assignment.max_points)} points**.")
    manual = [q.name for q in assignment.questions if q.manual]
    if manual:
        lines.append(feedback.by_hand_line(manual))
    if not r.grading.ok:
        lines += ["", f"Grading note: {r.status}"]
    lines += _cell_errors_md(r.cell_errors)
    for q in assignment.auto:
        cases = [c for c in r.cases if c.question == q.name]
        lines += ["", f"## {q.name}: {num(r.question_points.get(q.name, 0.0))} / {num(q.max_points)}", ""]
        for m in r.mistakes:
            if m.question == q.name:
                lines.append(f"- **The mistake, named**: {m.sentence}.")
        for c in cases:
            mark = "passed" if c.passed else "failed"
            kind = "hidden test" if c.hidden else "test"
            lines.append(f"- {kind} `{c.name}` ({num(c.max_points)} pt): **{mark}**")
            if c.hidden and not c.passed:
                lines.append(f"  - Hint: {c.message}")
            elif not c.hidden and not c.passed:
                lines += ["", "  ```", *["  " + m for m in c.message.splitlines()], "  ```"]
    return "\n".join(lines) + "\n"


CELL_ERRORS_SHOWN = 20


def _cell_errors_md(errors: list) -> list[str]:
    """The cells that stopped with an error when the grader ran the notebook (GIVEN cells too: one
    that fails tells the student that an answer above it does not work the way that cell needs).
    The entries come from the submission's process: only well-formed ones, each on one line."""
    shown = [e for e in errors if isinstance(e, dict) and type(e.get("cell")) is int][:CELL_ERRORS_SHOWN]
    if not shown:
        return []
    lines = ["", "## Cells that stopped with an error", "",
             "When the grader ran your notebook from the top, these cells raised an error (cells are "
             "counted from 1, text cells included). A GIVEN cell that fails usually means that one of "
             "your answers above it does not yet work the way that cell needs.", ""]
    for e in shown:
        text = cast(str, e.get("error")) if isinstance(e.get("error"), str) else str(e.get("kind", "error"))
        lines.append(f"- cell {e['cell']}: `{clean(text, 300).replace('`', chr(39))}`")
    more = len(errors) - len(shown)
    if more > 0:
        lines.append(f"- ... and {more} more")
    return lines


# ---------------------------------------------------------------- report.html

def _histogram_svg(values: list[float], bins: int = 10) -> str:
    """A bar per tenth of the score, its count above it; every label inside the picture (a top
    margin holds the tallest bar's count, a bottom one the axis labels)."""
    counts = [0] * bins
    for v in values:
        counts[min(max(int(v * bins), 0), bins - 1)] += 1
    top = max(counts) or 1
    bar, gap, left = 48, 2, 10
    plot_top, plot_height = 22, 160                   # room for the count above the tallest bar
    width = left * 2 + bins * (bar + gap)
    height = plot_top + plot_height + 34
    base = plot_top + plot_height
    parts = [f'<svg class="histogram" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="score histogram" font-family="sans-serif">',
             f'<line x1="{left}" y1="{base}" x2="{width - left}" y2="{base}" stroke="#888"/>']
    for i, c in enumerate(counts):
        h = round(plot_height * c / top)
        x = left + i * (bar + gap)
        parts.append(f'<rect x="{x}" y="{base - h}" width="{bar}" height="{h}" fill="#4a78b5"/>')
        parts.append(f'<text class="count" x="{x + bar / 2}" y="{base - h - 5}" font-size="12" '
                     f'text-anchor="middle">{c}</text>')
        parts.append(f'<text class="bin" x="{x + bar / 2}" y="{base + 16}" font-size="10" '
                     f'text-anchor="middle">{i * 100 // bins}-{(i + 1) * 100 // bins}%</text>')
    parts.append("</svg>")
    return "".join(parts)


def _who(file: str, names: StudentNames) -> str:
    """A row's student as the report shows it: the gradebook's name (when ``course grade`` was given
    one) over the file's name, else the file's name."""
    esc = html.escape
    name = student_name(file, names)
    return (f"<b>{esc(name)}</b><br><small class='file'>{esc(file)}</small>" if name
            else f"<span class='file'>{esc(file)}</span>")


def _rows_table(assignment: Assignment, results: list[Result], names: StudentNames) -> str:
    """Every row: its student, its points in each question (manual ones: graded by hand, blank here),
    its total, its status; by the students' names when the gradebook gives them."""
    esc = html.escape
    head = "".join(f"<th>{esc(q.name)}<br><small>/{num(q.points if q.manual else q.max_points)}"
                   f"{' hand' if q.manual else ''}</small></th>" for q in assignment.questions)
    out = [f"<h2>Every row ({len(results)})</h2><p>Points per question; questions graded by hand are "
           "filled in by <code>course manual</code> (in <code>grades.csv</code>, not here).</p>"
           "<div class='wide' tabindex='0' role='region' aria-label='every row'>"
           f"<table class='rows'><tr><th>student</th><th>id</th>{head}<th>total<br>"
           f"<small>/{num(assignment.max_points)}</small></th><th>%</th><th>grading_status</th></tr>"]
    order = sorted(results, key=lambda r: (student_name(r.file, names) or "\uffff", r.file))
    for r in order:
        cells = []
        for q in assignment.questions:
            if q.manual:
                cells.append("<td class='manual'></td>")
            else:
                p = r.question_points.get(q.name, 0.0)
                cls = "full" if p >= q.max_points - 1e-9 else ("none" if p <= 0 else "part")
                cells.append(f"<td class='{cls}'>{num(p)}</td>")
        status = r.status if r.grading.ok else f"<b>{esc(r.status)}</b>"
        out.append(f"<tr><td class='who'>{_who(r.file, names)}</td><td>{esc(student_id(r.file))}</td>"
                   f"{''.join(cells)}<td>{num(r.total)}</td>"
                   f"<td>{100 * percent(r.total, assignment.max_points):.0f}</td><td>{status}</td></tr>")
    out.append("</table></div>")
    return "\n".join(out)


def _several_rows(results: list[Result], names: StudentNames) -> str:
    """The students (by LMS id) with several rows: with ``--gradebook`` none of them is exported
    unless every row has the same points (:func:`instructor.lms.one_grade`)."""
    esc = html.escape
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        found = lms_id(r.file)
        if found:
            groups.setdefault(found, []).append(r)
    several = {k: v for k, v in sorted(groups.items()) if len(v) > 1}
    out = [f"<h2>Students with several rows ({len(several)})</h2>"]
    if not several:
        return out[0] + "<p>None.</p>" + _wrong_week(results, names)
    out.append("<p class='warn'>With <code>--gradebook</code>, a student whose rows differ in points "
               "(or who has notebooks not graded) gets nothing in the LMS import: read the rows and "
               "enter the grade yourself. Rows of equal points are exported.</p>"
               "<table><tr><th>id</th><th>student</th><th>points</th><th>grading_status</th></tr>")
    for (kind, sid), rows in several.items():
        for r in sorted(rows, key=lambda r: r.file):
            out.append(f"<tr><td>{esc(kind)} {esc(sid)}</td><td class='who'>{_who(r.file, names)}</td>"
                       f"<td>{num(r.total)}</td>"
                       f"<td>{esc(r.status)}</td></tr>")
    out.append("</table>")
    return "".join(out) + _wrong_week(results, names)


def _wrong_week(results: list[Result], names: StudentNames) -> str:
    """Another week's notebooks (not run) and uploads nobody could read: with ``--gradebook`` their
    students are HELD, nothing is exported for them (:func:`instructor.lms.graded_rows`)."""
    return (_held(results, names, lambda k: k is Status.WRONG_NOTEBOOK, "another week's notebook",
                  "ask for the right notebook")
            + _held(results, names, lambda k: k.unreadable, "an unreadable upload",
                    "ask for the notebook again"))


def _held(results: list[Result], names: StudentNames, which: Callable[[Status], bool], what: str,
          ask: str) -> str:
    esc = html.escape
    rows = sorted((r for r in results if which(r.grading.kind)), key=lambda r: r.file)
    out = [f"<h2>HELD: {what} ({len(rows)})</h2>"]
    if not rows:
        return out[0] + "<p>None.</p>"
    out.append("<p class='warn'>Not run. With <code>--gradebook</code>, nothing is exported for these "
               f"students (their gradebook cells stay as they are): {ask}, or "
               "enter the grade yourself.</p>"
               "<table><tr><th>id</th><th>student</th><th>grading_status</th></tr>")
    for r in rows:
        found = lms_id(r.file)
        who = f"{found[0]} {found[1]}" if found else "-"
        out.append(f"<tr><td>{esc(who)}</td><td class='who'>{_who(r.file, names)}</td>"
                   f"<td>{esc(r.status)}</td></tr>")
    out.append("</table>")
    return "".join(out)


SKIPS_SHOWN = 200


def _skipped(skipped: list[dict]) -> str:
    """What was found and is not a row, each with the rule that skipped it: every entry found is a
    row or one of these, so a student's file that went nowhere shows up here or among the rows."""
    esc = html.escape
    out = [f"<h2>Skipped entries ({len(skipped)})</h2>"]
    if not skipped:
        return out[0] + "<p>None: every entry found is a row.</p>"
    counts = "; ".join(f"{n} {esc(rule)}" for rule, n in skip_counts(skipped).items())
    out.append(f"<p>Found among the submissions and not graded, by their names: {counts}. A file a "
               "student meant to hand in would be here: grade it alone.</p>"
               "<table><tr><th>entry</th><th>why it was skipped</th></tr>")
    for s in skipped[:SKIPS_SHOWN]:
        out.append(f"<tr><td class='file'>{esc(s['name'])}</td><td>{esc(s['rule'])}</td></tr>")
    out.append("</table>")
    if len(skipped) > SKIPS_SHOWN:
        out.append(f"<p>... and {len(skipped) - SKIPS_SHOWN} more.</p>")
    return "".join(out)


def report_html(assignment: Assignment, results: list[Result], meta: RunMeta,
                names: StudentNames = NO_NAMES, *, manual_notes: Sequence[str] = (),
                similarity_html: str | None = None) -> str:
    """``manual_notes``: what writing the hand-grading pages said (:func:`write_rows`);
    ``similarity_html``: the similarity section (:func:`autograder.similarity.after_grading`; None:
    not compared, a placeholder that ``course similarity DIR`` fills in)."""
    esc = html.escape
    n = len(results)
    scores = [percent(r.total, assignment.max_points) for r in results]
    mean = sum(scores) / len(scores) if scores else math.nan
    n_ok = sum(r.grading.ok for r in results)
    out = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
           f"<title>Grading report: {esc(assignment.name)}</title>",
           "<style>body{font-family:sans-serif;max-width:80em;margin:2em auto;padding:0 1em}"
           "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
           "table.rows td{white-space:nowrap}table.rows td:last-child{white-space:normal;min-width:12em}"
           "td.who{white-space:normal!important;min-width:10em;max-width:24em;overflow-wrap:anywhere}"
           ".file{color:#555;overflow-wrap:anywhere}"
           ".wide{overflow-x:auto}td.full{background:#e6f4e6}td.part{background:#fff6d6}"
           "td.none{background:#fbe3e3}td.manual{background:#eee}"
           ".warn{background:#fde8e8;padding:.5em;border:1px solid #e99}"
           ".bar{background:#4a78b5;height:10px;display:inline-block}</style></head><body>",
           f"<h1>Grading report: {esc(assignment.name)}</h1>",
           f"<p>{n} submissions, {n_ok} graded <code>ok</code>; mean score "
           f"{'n/a' if math.isnan(mean) else f'{100 * mean:.1f}%'}; "
           f"{meta.get('workers')} workers, {meta.get('wall_seconds', 0):.1f} s in all. "
           f"{esc(entries_line(n, meta.get('skipped', [])).replace('report.html', 'below'))}.</p>"]
    mode = meta.get("mode", "")
    cls = "warn" if mode != "isolated" else ""
    out.append(f"<p class='{cls}'>Sandbox mode <b>{esc(mode)}</b>: {esc(meta.get('mode_note', ''))}</p>")
    if meta.get("cgroups_note"):
        cls = "warn" if meta.get("cgroups") == "none" else ""
        out.append(f"<p class='{cls}'>Resource control <b>{esc(str(meta.get('cgroups')))}</b>: "
                   f"{esc(meta['cgroups_note'])}</p>")
    for w in meta.get("warnings", []):
        out.append(f"<p class='warn'>{esc(w)}</p>")
    out.append("<h2>Score histogram</h2><p>All rows, percent of the automatically graded points.</p>"
               + _histogram_svg(scores))

    out.append("<h2>Pass rate of every test</h2><p>Over the submissions whose tests ran.</p>"
               "<table><tr><th>question</th><th>test</th><th>hidden</th>"
               "<th>points</th><th>passed</th><th></th></tr>")
    graded = [r for r in results if r.tests_ran]
    for q in assignment.auto:
        for case in q.cases:
            passed = sum(1 for r in graded for c in r.cases
                         if c.question == q.name and c.name == case.name and c.passed)
            rate = passed / len(graded) if graded else 0.0
            out.append(f"<tr><td>{esc(q.name)}</td><td>{esc(case.name)}</td>"
                       f"<td>{'yes' if case.hidden else ''}</td><td>{num(case.points)}</td>"
                       f"<td>{passed}/{len(graded)} ({100 * rate:.0f}%)</td>"
                       f"<td><span class='bar' style='width:{int(100 * rate)}px'></span></td></tr>")
    out.append("</table>")

    if assignment.known_mistakes:
        out.append(mistakes_report.section_html(mistakes_report.counts(assignment, results),
                                                lambda f: _who(f, names)))

    manual_qs = [q for q in assignment.questions if q.manual]
    if manual_qs:
        links = ", ".join(f"<a href='manual/{esc(q.name)}.html'>{esc(q.name)}</a> ({num(q.points)} pt)"
                          for q in manual_qs)
        out.append(f"<h2>Hand grading</h2><p>One page per question with every answer: {links}. "
                   "Fill in <code>manual.csv</code>, then <code>course manual DIR manual.csv</code>.</p>")
        for note in manual_notes:
            out.append(f"<p class='warn'>{esc(note)}</p>")

    out.append(similarity.PLACEHOLDER if similarity_html is None else similarity_html)

    bad = [r for r in sorted(results, key=lambda r: r.file) if not r.grading.ok]
    out.append(f"<h2>Rows that did not grade ok ({len(bad)})</h2>")
    if bad:
        out.append("<table><tr><th>student</th><th>grading_status</th><th>points</th></tr>")
        for r in bad:
            out.append(f"<tr><td class='who'>{_who(r.file, names)}</td><td>{esc(r.status)}</td>"
                       f"<td>{num(r.total)}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>None.</p>")

    out.append(_skipped(meta.get("skipped", [])))
    out.append(_several_rows(results, names))
    out.append(_rows_table(assignment, results, names))

    times = sorted(results, key=lambda r: -r.seconds)
    total_t = sum(r.seconds for r in results)
    out.append(f"<h2>Time per submission</h2><p>mean {total_t / n if n else 0:.2f} s; slowest first.</p>"
               "<table><tr><th>student</th><th>seconds</th>"
               "<th>of which running the notebook and tests</th></tr>")
    for r in times:
        out.append(f"<tr><td class='who'>{_who(r.file, names)}</td><td>{r.seconds:.2f}</td>"
                   f"<td>{r.exec_seconds:.2f}</td></tr>")
    out.append("</table></body></html>\n")
    return "\n".join(out)


# what a new run removes first; never hand_grades.sqlite (the hand grades, instructor.ledger) nor a
# filled-in manual.csv (set aside as manual-N.csv)
OUTPUT_FILES, OUTPUT_DIRS = outdir.OUTPUT_FILES, outdir.OUTPUT_DIRS     # OUT's layout is outdir's


def _write(path: Path, text: str) -> None:
    """Text that may hold anything a submission printed (lone surrogates included) as UTF-8."""
    path.write_text(text, encoding="utf-8", errors="replace")


def write_all(out_dir: Path, assignment: Assignment, results: list[Result], meta: RunMeta,
              names: StudentNames = NO_NAMES, similarity_html: str | None = None) -> list[str]:
    """Write every output file into ``out_dir`` (:func:`write_rows`, then :func:`write_report`);
    ``names`` name the rows in the report and the hand-grading pages. Returns what writing the
    hand-grading pages said."""
    notes = write_rows(out_dir, assignment, results, meta, names)
    write_report(out_dir, assignment, results, meta, names, manual_notes=notes,
                 similarity_html=similarity_html)
    return notes


def write_report(out_dir: Path, assignment: Assignment, results: list[Result], meta: RunMeta,
                 names: StudentNames = NO_NAMES, *, manual_notes: Sequence[str] = (),
                 similarity_html: str | None = None) -> None:
    """report.html (:func:`report_html`), once: after :func:`write_rows` and the similarity
    comparison, which read what it wrote."""
    _write(out_dir / "report.html", report_html(assignment, results, meta, names, manual_notes=manual_notes,
                                                similarity_html=similarity_html))


def write_rows(out_dir: Path, assignment: Assignment, results: list[Result], meta: RunMeta,
               names: StudentNames = NO_NAMES) -> list[str]:
    """Every output file but report.html: results/, feedback/, grades.csv, questions.json, the
    hand-grading pages, timings.json, mistakes.csv (for an assignment with named mistakes).
    Returns what writing the hand-grading pages said (for the report and the terminal)."""
    (out_dir / "results").mkdir(parents=True, exist_ok=True)
    (out_dir / "feedback").mkdir(parents=True, exist_ok=True)
    for r in results:
        _write(out_dir / "results" / f"{r.stem}.json", result_json(assignment, r))
        md = feedback_md(assignment, r)
        _write(out_dir / "feedback" / f"{r.stem}.md", md)
        _write(out_dir / "feedback" / f"{r.stem}.html",
               feedback.page_html(md, f"{assignment.name}: {r.file}"))
    (out_dir / "grades.csv").write_bytes(grades_csv_bytes(grades_table(assignment, results)))
    if assignment.known_mistakes:
        (out_dir / "mistakes.csv").write_bytes(mistakes_report.csv_bytes(
            mistakes_report.counts(assignment, results), sum(r.tests_ran for r in results)))
    _write(out_dir / "questions.json", handgrading.questions_json(assignment))
    notes: list[str] = []
    if any(q.manual for q in assignment.questions):
        notes = list(handgrading.write_pages(out_dir, assignment, results, names))
    timings = {"wall_seconds": round(meta.get("wall_seconds", 0.0), 3), "workers": meta.get("workers"),
               "grader_peak_memory_mb": meta.get("grader_peak_memory_mb"),
               "startup_seconds": meta.get("startup_seconds"),
               "grading_seconds": meta.get("grading_seconds"),
               "submissions": [{"file": r.file, "seconds": round(r.seconds, 3),
                                "exec_seconds": round(r.exec_seconds, 3),
                                "peak_memory_mb": _mb(r.peak_memory), **r.traffic,
                                **({"phases": r.phases} if r.phases else {})}
                               for r in sorted(results, key=lambda r: r.file)]}
    _write(out_dir / "timings.json", json.dumps(timings, indent=1, ensure_ascii=False) + "\n")
    return notes
