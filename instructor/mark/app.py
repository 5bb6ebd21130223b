"""``course mark``'s web application (Flask): pages, and a small JSON API the page's script calls.

Every request needs a TA's session, opened by the link ``course mark`` printed (``/?token=...``,
compared in constant time; the token is then kept in a cookie that is HttpOnly and SameSite=Strict,
so no other site's page can use it). A change is a POST with the header ``X-Mark: 1``, which a form
or a link from another site cannot send. Every response carries a Content-Security-Policy that
runs only the application's own script: a student's text, output or error in an answer card is
HTML-escaped by :mod:`autograder.handgrading`, and even a card that escaped nothing could run none.

An answer is addressed by its position ``n`` *and* its row's ``id`` (the row's key and its
notebook's SHA-256, :attr:`.folder.Row.id`), and every request that changes something or shows a
card names the rows the page read (``rows``, :attr:`.folder.Folder.stamp`): after a re-grade that
changed any row, a page loaded before it is refused with a 409 ("press r") whatever it asks, even
for a row the re-grade left as it was, until it is reloaded. A save refused because another TA
saved first keeps its comment or points (:meth:`..ledger.Ledger.keep_refused`) and sends them back
beside theirs, for the page to merge.

Routes: ``/`` (progress per question and per TA, export), ``/q/<question>`` (grading), and under
``/api/``: the question's answers and rubric (``GET /api/q/<q>``), one answer's card, a change to an
answer (``POST /api/q/<q>/<n>``: a 409 with what is there now when someone saved it first), a new
rubric item, a change to an item, the export; ``/rubric.csv``, the rubric's statistics.
"""
from __future__ import annotations

import csv
import hmac
import io
import secrets
import threading
from pathlib import Path

from flask import Flask, Response, abort, jsonify, redirect, render_template, request
from flask.json.provider import DefaultJSONProvider
from markupsafe import Markup

from autograder import handgrading, outdir
from autograder.csvcells import text_cell

from .. import lms, manual
from ..ledger import Conflict, Ledger, LedgerError
from .folder import Folder

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
COOKIE = "course-mark"
REGRADED = ("the class was re-graded since this page was loaded: nothing was saved, and nothing is "
            "until you press r to load the answers again")


class NotFinite(ValueError):
    """A number the page would read as no JSON at all (Infinity, NaN)."""


class StrictJSON(DefaultJSONProvider):
    """JSON as the browser's ``JSON.parse`` reads it: an infinite or NaN number is an error here,
    not a response the page cannot read (a question's page showing nothing)."""

    def dumps(self, obj: object, **kwargs: object) -> str:
        kwargs.setdefault("allow_nan", False)
        try:
            return super().dumps(obj, **kwargs)
        except ValueError as exc:
            raise NotFinite(str(exc)) from None


def create_app(out: Path, tokens: dict[str, str], names: bool = False) -> Flask:
    """The application for the graded folder ``out``; ``tokens``: {token: the TA's name}."""
    app = Flask(__name__)
    app.json = StrictJSON(app)
    app.config.update(MAX_CONTENT_LENGTH=64 * 1024)
    marking = _Marking(out, tokens, names)
    app.extensions["course_mark"] = {"folder": marking.folder, "ledger": marking.ledger}
    # each group of routes is registered by its own function, in this order; all they share is
    # `marking` (the view functions keep their names: the templates' url_for names them)
    _guard(app, marking)
    _pages(app, marking)
    _answer_api(app, marking)
    _rubric_api(app, marking)
    _export_routes(app, marking)
    return app


class _Marking:
    """What every route shares: the graded folder, its ledger, the lock and the TAs' tokens."""

    def __init__(self, out: Path, tokens: dict[str, str], names: bool) -> None:
        self.folder = Folder(out)
        self.ledger = Ledger(out)
        self.lock = threading.Lock()             # one connection, one request at a time uses it
        self.tokens = tokens
        self.names = names

    def who(self) -> str:
        """The TA whose token the request's cookie holds; anyone else gets a 403."""
        token = request.cookies.get(COOKIE, "")
        for known, name in self.tokens.items():
            if hmac.compare_digest(token.encode(), known.encode()):
                return name
        abort(403)

    def question(self, q: str) -> dict:
        """The question ``q`` of the folder; a 404 for a question it does not have."""
        if q not in self.folder.questions:
            abort(404)
        return self.folder.questions[q]

    def current(self, body: dict) -> bool:
        """Whether the rows the page read (``body["rows"]``) are still the folder's (lock held)."""
        return bool(self.folder.current(body.get("rows")))

    def state(self, q: str) -> Response:
        """The question's rubric and grades as the page reads them (lock held)."""
        return jsonify(_state(self.folder, self.ledger, q, self.names))


def _regraded() -> tuple[Response, int]:
    """An answer addressed by a row that is no longer there: nothing is saved or shown."""
    return jsonify({"error": REGRADED, "regraded": True}), 409


def _bad(exc: Exception) -> tuple[Response, int]:
    """A change the ledger refused, or a value that is not one (a 400: nothing was saved)."""
    return jsonify({"error": str(exc)}), 400


def _guard(app: Flask, marking: _Marking) -> None:
    """What every request goes through: the session (the token link sets its cookie), the header
    a change needs, a fresh look at the folder; and the headers and error pages every answer has."""

    @app.before_request
    def login():
        token = request.args.get("token")
        if token is not None and request.method == "GET":
            if not any(hmac.compare_digest(token.encode(), t.encode()) for t in marking.tokens):
                abort(403)
            response = redirect(request.path)
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
            return response
        marking.who()
        if request.method == "POST" and request.headers.get("X-Mark") != "1":
            abort(403)
        with marking.lock:
            marking.folder.refresh()
        return None

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.errorhandler(NotFinite)
    def not_finite(_exc):
        text = ('{"error": "a number in the ledger is not finite (a rubric item of infinite points?): '
                'nothing was shown; fix it in hand_grades.sqlite"}')
        return Response(text, status=500, mimetype="application/json")

    @app.errorhandler(403)
    def denied(_exc):
        return render_template("denied.html"), 403


def _pages(app: Flask, marking: _Marking) -> None:
    """The two pages: the progress (``/``) and a question's grading page (``/q/<q>``)."""
    folder, ledger = marking.folder, marking.ledger

    @app.get("/")
    def index():
        with marking.lock:
            progress = _progress(folder, ledger)
        return render_template("index.html", name=folder.name, progress=progress, me=marking.who(),
                               ledger=str(ledger.path))

    @app.get("/q/<q>")
    def grade(q: str):
        spec = marking.question(q)
        return render_template("grade.html", name=folder.name, q=q, points=spec["points"],
                               prompt=Markup(handgrading.prompt_html(str(spec.get("prompt", "")))),
                               me=marking.who(), names=marking.names, questions=list(folder.questions))


def _answer_api(app: Flask, marking: _Marking) -> None:
    """The API of the answers: a question's state, one answer's card, a save of one answer."""
    folder, ledger = marking.folder, marking.ledger

    @app.get("/api/q/<q>")
    def answers(q: str):
        marking.question(q)
        with marking.lock:
            return marking.state(q)

    @app.get("/api/q/<q>/<int:n>/card")
    def card(q: str, n: int):
        marking.question(q)
        with marking.lock:
            if (not folder.current(request.args.get("rows"))
                    or folder.index(n, request.args.get("id")) is None):
                return _regraded()
            key = folder.keys(ledger, q)[n]
            given = ledger.grade(ledger.answer(key))
        return Response(folder.card(n, q, marking.names, given), mimetype="text/html")

    @app.post("/api/q/<q>/<int:n>")
    def save(q: str, n: int):
        marking.question(q)
        body = request.get_json(silent=True) or {}
        with marking.lock:
            if not marking.current(body) or folder.index(n, body.get("id")) is None:
                return _regraded()
            return _save(marking, q, n, body)


def _save(marking: _Marking, q: str, n: int, body: dict) -> Response | tuple[Response, int]:
    """Save what the page sent for answer ``n`` of ``q`` (lock held, its row checked current)."""
    ledger = marking.ledger
    key = marking.folder.keys(ledger, q)[n]
    try:
        comment, points = _text(body.get("comment")), _number(body.get("points"))
        with ledger.transaction():
            ledger.save(key, int(body.get("version", -1)), marking.who(), comment=comment,
                        items=_ids(body.get("items")), points=points, typed="points" in body)
    except Conflict as exc:
        # what this TA typed is kept (and sent back) rather than lost: the page shows it
        # beside what the other TA saved, to merge
        with ledger.transaction():
            ledger.keep_refused(key, int(body.get("version", -1)), marking.who(), comment, points)
        return jsonify({"error": str(exc), "answer": _answer(ledger, key, n, marking.folder),
                        "by": _by(exc.by, marking.names),
                        "yours": {"comment": comment, "points": points}}), 409
    except (LedgerError, ValueError, TypeError) as exc:
        return _bad(exc)
    return marking.state(q)


def _rubric_api(app: Flask, marking: _Marking) -> None:
    """The API of the rubric: a new item for a question, a change to (or deletion of) an item."""
    ledger = marking.ledger

    @app.post("/api/q/<q>/items")
    def add_item(q: str):
        marking.question(q)
        body = request.get_json(silent=True) or {}
        with marking.lock:
            if not marking.current(body):
                return _regraded()
            try:
                with ledger.transaction():
                    ledger.add_item(q, _number(body.get("points")) or 0.0, _text(body.get("text")) or "",
                                    marking.who())
            except (LedgerError, ValueError, TypeError) as exc:
                return _bad(exc)
            return marking.state(q)

    @app.post("/api/items/<int:item>")
    def edit_item(item: int):
        body = request.get_json(silent=True) or {}
        with marking.lock:
            if not marking.current(body):
                return _regraded()
            try:
                with ledger.transaction():
                    changed = ledger.edit_item(item, int(body.get("version", -1)), marking.who(),
                                               points=_number(body.get("points")),
                                               text=_text(body.get("text")), delete=bool(body.get("delete")))
            except Conflict as exc:
                return jsonify({"error": str(exc), "item": exc.now, "by": _by(exc.by, marking.names)}), 409
            except (LedgerError, ValueError, TypeError) as exc:
                return _bad(exc)
            return marking.state(changed.question)


def _export_routes(app: Flask, marking: _Marking) -> None:
    """What leaves the application: the export (grades, feedback, LMS files) and the rubric's CSV."""
    folder, ledger = marking.folder, marking.ledger

    @app.post("/api/export")
    def export_all():
        with marking.lock:
            try:
                lines = export(folder, ledger)
            except manual.StaleFiles as exc:
                return jsonify({"error": str(exc)}), 500
            except (manual.ManualError, lms.GradebookError, OSError) as exc:
                return jsonify({"error": f"nothing was written: {exc}"}), 400
        return jsonify({"lines": lines})

    @app.get("/rubric.csv")
    def rubric_csv():
        with marking.lock:
            text = stats_csv(folder, ledger)
        return Response(text, mimetype="text/csv",
                        headers={"Content-Disposition": f"attachment; filename={folder.name}-rubric.csv"})


def _text(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 20_000:
        raise ValueError("not a text")
    return value


def _number(value: object) -> float | None:
    if value is None or value == "":
        return None
    # blank text (spaces) gives None, and float(None) a TypeError: the callers answer it with a 400
    return float(manual.parse_points(str(value)))  # type: ignore[arg-type]


def _ids(value: object) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(i, int) for i in value):
        raise ValueError("items must be a list of item ids")
    return value


def _by(history: list[dict], names: bool) -> list[dict]:
    """Who changed it and when, for a refused save: the ledger's history entries name the answer's
    file (the student, on Canvas) and hash, which an anonymous page never shows."""
    if names:
        return history
    return [{"who": h["who"], "at": h["at"]} for h in history]


def _answer(ledger: Ledger, key: tuple, n: int, folder: Folder) -> dict:
    a = ledger.answer(key)
    row = folder.rows[n]
    return {"n": n, "id": row.id, "label": row.label, "auto": row.auto, "status": row.status,
            "gradable": row.gradable,
            "grade": ledger.grade(a), "typed": a.points, "items": a.items, "comment": a.comment,
            "version": a.version, "who": a.who, "at": a.at}


def _state(folder: Folder, ledger: Ledger, q: str, names: bool) -> dict:
    """The question's rubric and every answer's grade (no student's content: that is the card)."""
    keys = folder.keys(ledger, q)
    answers = [_answer(ledger, k, n, folder) for n, k in enumerate(keys)]
    if names:
        for a, row in zip(answers, folder.rows, strict=True):
            a["file"] = row.file
    return {"question": q, "rows": folder.stamp, "points": folder.questions[q]["points"],
            "auto_points": folder.auto_points,
            "items": [i.as_dict() for i in ledger.items(q)], "answers": answers}


def _progress(folder: Folder, ledger: Ledger) -> list[dict]:
    """Per question: answers graded of those there are to grade (an unreadable upload has none),
    and who graded how many."""
    out = []
    for q in folder.questions:
        by: dict[str, int]
        graded, by = 0, {}
        for key, row in zip(folder.keys(ledger, q), folder.rows, strict=True):
            a = ledger.answer(key)
            if row.gradable and ledger.grade(a) is not None:
                graded += 1
                by[a.who] = by.get(a.who, 0) + 1
        total = sum(row.gradable for row in folder.rows)
        out.append({"q": q, "points": folder.questions[q]["points"], "graded": graded,
                    "total": total, "none": len(folder.rows) - total, "by": sorted(by.items())})
    return out


def stats_csv(folder: Folder, ledger: Ledger) -> str:
    """How often each rubric item was applied, per question, among this run's answers (an item's
    text, typed by a TA, through :func:`autograder.csvcells.text_cell`: no spreadsheet runs it)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["question", "item", "points", "text", "applied", "graded answers", "share"])
    for q in folder.questions:
        answers = [ledger.answer(k) for k in folder.keys(ledger, q)]
        graded = [a for a in answers if ledger.grade(a) is not None]
        for item in ledger.items(q):
            n = sum(item.id in a.items for a in answers)
            w.writerow([q, item.position, f"{item.points:g}", text_cell(item.text), n, len(graded),
                        f"{n / len(graded):.2f}" if graded else ""])
    return buf.getvalue()


def export(folder: Folder, ledger: Ledger) -> list[str]:
    """Export: grades.csv, the feedback, the pages and the LMS files from the ledger
    (:func:`instructor.manual.export`), and rubric_stats.csv; the lines to print."""
    lines = manual.export(folder.out)
    return [*lines, f"{write_stats(folder, ledger)}: how often each rubric item was applied"]


def write_stats(folder: Folder, ledger: Ledger) -> Path:
    path = folder.out / "rubric_stats.csv"
    outdir.write_files(folder.out, {path: stats_csv(folder, ledger).encode("utf-8")})
    return path


def new_tokens(names: list[str]) -> dict[str, str]:
    """One random token per TA (as Jupyter's: 48 hexadecimal digits)."""
    return {secrets.token_hex(24): name for name in names}

