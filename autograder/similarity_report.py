"""Similarity flags, what they write (see :mod:`autograder.similarity`): ``similarity.csv`` and the
section of ``report.html`` (static HTML: no script, every character from a notebook escaped)."""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from .similarity_fingerprints import Submission, Unit, without
from .similarity_scoring import Flag

SHOWN = 20                 # flags shown side by side in report.html
SIDE_CHARS = 12_000        # characters of one side of one question shown there
BEGIN_MARK = "<!-- similarity: written by course similarity -->"
END_MARK = "<!-- /similarity -->"
PLACEHOLDER = (f"{BEGIN_MARK}<h2>Similar submissions</h2><p>Not compared (see "
               f"<code>course similarity DIR</code>).</p>{END_MARK}")



def csv_text(flags: list[Flag]) -> str:
    from .csvcells import csv_text as write
    from .csvcells import text_cell
    rows = [["score", "kind", "questions", "file_a", "id_a", "file_b", "id_b", "whole_notebook",
             "shared_fingerprints"]]
    for f in flags:
        qs = "; ".join(f"{q or 'outside questions'} {s:.2f}" for q, s, _m in f.questions if s > 0)
        rows.append([f"{f.score:.4f}", f.kind, text_cell(qs), text_cell(f.a.file), f.a.id,
                     text_cell(f.b.file), f.b.id, f"{f.whole:.4f}", str(f.shared)])
    return write(rows)


def write_csv(out: Path, flags: list[Flag]) -> Path:
    path = out / "similarity.csv"
    path.write_text(csv_text(flags), encoding="utf-8", errors="replace")
    return path


def _side(unit: Unit | None, hits: set[tuple[int, int]]) -> str:
    esc = html.escape
    if unit is None:
        return "<p class='sim-none'>(no answer)</p>"
    parts, left = [], SIDE_CHARS
    for c in unit.cells:
        rows = []
        for n, line in enumerate(str(c["source"]).splitlines(), 1):
            if left <= 0:
                rows.append("<span class='sim-cell'>(cut: see the notebook)</span>")
                break
            line = line[:left]
            left -= len(line) + 1
            cls = " class='hit'" if (c["cell"], n) in hits else ""
            rows.append(f"<span{cls}>{esc(line) or ' '}</span>")
        parts.append(f"<div class='sim-cell'>cell {int(c['cell'])}</div>"
                     f"<pre tabindex='0'>{chr(10).join(rows)}</pre>")
        if left <= 0:
            break
    return "".join(parts)


def html_section(flags: list[Flag], threshold: float, seconds: float, n: int, master: bool,
                 shown: int = SHOWN) -> str:
    """The report's section: the flags' table and the top ones side by side (static, escaped)."""
    from copydetect import compare_files
    esc = html.escape
    # the side-by-side code wraps inside its two columns (minmax(0, 1fr): a long line never widens
    # the page); a long answer scrolls inside its box, which takes the keyboard's focus (tabindex)
    out = [BEGIN_MARK, "<style>.sim td,.sim th{vertical-align:top}.sim-grid pre{margin:0;font-size:.8em;"
           "white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;max-height:30em;overflow:auto}"
           ".sim-grid .hit{background:#ffd27a;display:block}.sim-cell{font-size:.75em;color:#555}"
           ".sim-grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.6em}</style>",
           f"<h2>Similar submissions ({len(flags)})</h2>",
           "<p>Pairs whose answer cells are alike beyond the course's own code (the given cells, the "
           "templates, the earlier notebooks' answers) and beyond what most of the class wrote; "
           "<i>master</i>: a submission alike to the master's answers. Names, comments, blank lines, "
           "the order of functions and <code>a @ b</code> against <code>torch.matmul(a, b)</code> do "
           "not hide a copy. <b>A flag is for a person to look at, never a grade change.</b> "
           f"Threshold {threshold:g}; {n} submissions compared in {seconds:.1f} s"
           f"{'' if master else ' (no master notebook here: not compared with it)'}. "
           "All flags: <code>similarity.csv</code>.</p>"]
    if not flags:
        out.append("<p>None.</p>" + END_MARK)
        return "\n".join(out)
    out.append("<table class='sim'><tr><th>score</th><th>kind</th><th>file</th><th>file</th>"
               "<th>questions</th></tr>")
    for f in flags:
        qs = ", ".join(f"{esc(q or 'outside questions')} {s:.2f}" for q, s, _m in f.questions[:6] if s > 0)
        out.append(f"<tr><td>{f.score:.2f}</td><td>{esc(f.kind)}</td><td>{esc(f.a.file)}</td>"
                   f"<td>{esc(f.b.file)}</td><td>{qs}</td></tr>")
    out.append("</table>")
    for f in flags[:shown]:
        same = ", identical answers" if f.identical else ""
        out.append(f"<h3>{f.score:.2f} ({esc(f.kind)}{same}): {esc(f.a.file)} &amp; {esc(f.b.file)}</h3>")
        for q, s, _m in f.questions:
            if s <= 0:
                continue
            ua, ub = f.a.units.get(q), f.b.units.get(q)
            fa, fb = _shown(f, f.a, q), _shown(f, f.b, q)
            if fa is None or fb is None:
                continue
            _o, _s, (sl1, sl2) = compare_files(fa, fb)
            hits_a = ua.lines_at(sl1) if ua is not None and len(sl1) else set()
            hits_b = ub.lines_at(sl2) if ub is not None and len(sl2) else set()
            out.append(f"<p><b>{esc(q or 'outside questions')}</b>: {s:.2f}</p><div class='sim-grid'>"
                       f"<div>{_side(ua, hits_a)}</div><div>{_side(ub, hits_b)}</div></div>")
    out.append(END_MARK)
    return "\n".join(out)


def _shown(f: Flag, sub: Submission, q: str) -> Any:
    """The fingerprint whose matches are highlighted: what counts in the flag's kind of comparison
    (against the master, or against classmates), or, for identical answers, every line."""
    unit = sub.units.get(q)
    kept: Any = (sub.versus_master if f.kind == "master" else sub.versus_class).get(q)
    if unit is None or (kept is None and not f.identical):
        return None
    fp = unit.fingerprint()
    return fp if f.identical else without(fp, fp.hashes - set(kept.tolist()))


def patch_report(report: Path, section: str) -> bool:
    """Put ``section`` in place of the report's similarity section (or before its end)."""
    if not report.is_file():
        return False
    report.write_text(patched_report(report.read_text(encoding="utf-8"), section), encoding="utf-8")
    return True


def patched_report(text: str, section: str) -> str:
    """The report's text with ``section`` in place of its similarity section (or before its end)."""
    a, b = text.find(BEGIN_MARK), text.find(END_MARK)
    if a >= 0 and b > a:
        return text[:a] + section + text[b + len(END_MARK):]
    cut = text.rfind("</body>")
    return (text[:cut] + section + text[cut:]) if cut >= 0 else text + section

