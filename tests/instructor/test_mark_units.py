"""``course mark`` and its ledger without a browser (no notebook is executed): the hand-grade ledger
(rubric items, versions, history, the old hand_grades.json), the web application through Flask's
test client (tokens, the header a change needs, the page's Content-Security-Policy, a refused
save), and the same LMS files from the browser's route as from the CSV route for the same points.
test_mark_browser.py drives the real thing in Chromium."""
from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import hostile
import lms_samples
import pytest

from autograder import assignment, csvcells, inputs, report
from instructor import lms, manual
from instructor.ledger import Conflict, Ledger, LedgerError
from instructor.mark.app import create_app

FILES = [f"student{k:02d}_{10100 + k}_{20000 + k}_00_toy.ipynb" for k in range(6)]
STUDENTS = [(f"Student {k:02d}", str(10100 + k), "", "", "A") for k in range(6)]


def row(k: int, f: str, sha: str | None = None) -> report.Result:
    r = report.Result(file=f, stem=inputs.safe_stem(f), status="ok", sha256=sha or f"{k:064x}",
                      question_points={"q1": 2.0, "q2": float(k % 3), "q3": 1.0})
    r.answers = {"q4": {"found": True, "cells": [
        {"cell": 14, "type": "markdown", "source": f"answer {k} <script>x()</script>",
         "unanswered": False}]}}
    return r


def regrade(out: Path, rows: list[report.Result]) -> None:
    """``course grade`` into ``out`` again with these rows, and the ledger's grades given back."""
    import shutil
    shutil.rmtree(out / "results")
    report.write_all(out, assignment.load(str(hostile.FIXTURE)), rows, {"workers": 1, "mode": "weak"})
    manual.reapply(out)


def graded(tmp_path: Path, name: str = "out") -> Path:
    """Six rows of the toy assignment as course grade leaves them (q4, 1 point, graded by hand)."""
    asg = assignment.load(str(hostile.FIXTURE))
    out = tmp_path / name
    out.mkdir()
    report.write_all(out, asg, [row(k, f) for k, f in enumerate(FILES)], {"workers": 1, "mode": "weak"})
    return out


def keys(out: Path) -> list[tuple[str, str, str]]:
    return [(f"{k:064x}", f, "q4") for k, f in enumerate(FILES)]


# ---------------------------------------------------------------- the ledger

def test_a_grade_is_the_rubrics_sum_clamped_and_an_item_edit_reaches_every_answer(tmp_path):
    out = graded(tmp_path)
    led = Ledger(out)
    k = keys(out)
    with led.transaction():
        good = led.add_item("q4", 1.0, "Correct plot", "ana")
        labels = led.add_item("q4", -0.25, "Axes not labelled", "ana")
        bonus = led.add_item("q4", 0.5, "Explains why", "ana")
        led.save(k[0], 0, "ana", items=[good.id, bonus.id])           # 1.5, clamped to 1
        led.save(k[1], 0, "ana", items=[good.id, labels.id])          # 0.75
        led.save(k[2], 0, "ana", items=[labels.id])                   # -0.25, clamped to 0
    assert [led.grade(led.answer(x)) for x in k[:4]] == [1.0, 0.75, 0.0, None]
    with led.transaction():
        led.edit_item(labels.id, labels.version, "ben", points=-0.5)
    assert [led.grade(led.answer(x)) for x in k[:3]] == [1.0, 0.5, 0.0]
    with pytest.raises(LedgerError, match="applied to 2 answers"), led.transaction():
        led.edit_item(labels.id, labels.version + 1, "ben", delete=True)
    entries = led.entries()
    assert entries[k[1]]["points"] == 0.5
    assert entries[k[1]]["notes"] == ["+1: Correct plot", "-0.5: Axes not labelled"]
    assert k[3] not in entries                                          # not graded: no entry


def test_the_later_of_two_saves_of_one_answer_is_refused_with_who_changed_it(tmp_path):
    out = graded(tmp_path)
    ana, ben = Ledger(out), Ledger(out)                      # two servers, one database
    k = keys(out)[0]
    with ana.transaction():
        item = ana.add_item("q4", 1.0, "Correct", "ana")
    seen = ben.answer(k).version                              # both opened the answer at version 0
    with ana.transaction():
        ana.save(k, 0, "ana", items=[item.id], comment="Good.")
    with pytest.raises(Conflict) as refused, ben.transaction():
        ben.save(k, seen, "ben", comment="Nice.")
    assert "changed by ana" in str(refused.value) and refused.value.now["comment"] == "Good."
    assert ben.answer(k).comment == "Good."                   # ana's, not written over
    with ben.transaction():
        ben.save(k, ben.answer(k).version, "ben", comment="Good. Nice.")
    history = [(h["who"], h["what"]) for h in ana.history()]
    assert history == [("ana", "item"), ("ana", "answer"), ("ben", "answer")]
    assert all(h["at"] for h in ana.history())


def test_an_old_hand_grades_json_is_migrated_once_and_kept_aside(tmp_path):
    out = graded(tmp_path)
    doc = {"grades": [{"sha256": "0" * 64, "file": FILES[0], "question": "q4", "points": 0.5,
                       "when": "2025-01-01T00:00:00+00:00"},
                      {"sha256": "0" * 64, "file": FILES[0], "question": "", "comment": "Old comment.",
                       "when": "2025-01-01T00:00:00+00:00"}]}
    (out / "hand_grades.json").write_text(json.dumps(doc))
    entries = manual.load_ledger(out)
    assert {(e["file"], e["question"]): e.get("points", e.get("comment")) for e in entries.values()} == {
        (FILES[0], "q4"): 0.5, (FILES[0], ""): "Old comment."}
    assert not (out / "hand_grades.json").exists() and (out / "hand_grades.json.migrated").exists()
    assert manual.load_ledger(out) == entries


def test_a_prefilled_cell_is_no_change_so_the_rubric_keeps_the_answer(tmp_path):
    """Both ways, one source of truth: manual.csv pre-filled from the ledger and merged back as it
    is changes nothing, so an item edited in the browser since still rules the answer."""
    out = graded(tmp_path)
    k = keys(out)
    led = Ledger(out)
    with led.transaction():
        item = led.add_item("q4", 0.5, "Half", "ana")
        led.save(k[0], 0, "ana", items=[item.id])
    (out / "manual.csv").write_text("x")                      # course grade wrote one
    manual.prefill(out)
    rows = list(csv.reader((out / "manual.csv").open(newline="")))
    assert rows[1 + sorted(FILES).index(FILES[0])][2] == "0.5"
    filled = tmp_path / "filled.csv"
    filled.write_text((out / "manual.csv").read_text())
    with led.transaction():                                    # in the browser, meanwhile
        led.edit_item(item.id, 1, "ana", points=1.0)
    manual.merge(out, filled)
    assert led.grade(led.answer(k[0])) == 1.0 and led.answer(k[0]).points is None


def test_a_merge_that_cannot_finish_leaves_no_database(tmp_path):
    out = graded(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"file,q4\n{FILES[0]},7\n")
    with pytest.raises(manual.ManualError):
        manual.merge(out, bad)
    assert not list(out.glob("hand_grades.sqlite*"))


# ---------------------------------------------------------------- the application

TA = {"tok-ana": "ana", "tok-ben": "ben"}


def client(out: Path, who: str = "tok-ana", names: bool = False):
    app = create_app(out, TA, names)
    c = app.test_client()
    assert c.get(f"/?token={who}").status_code == 302
    return c


def post(c, path: str, body: dict):
    """A change as the page sends it: naming the rows it read (``rows``), unless ``body`` does."""
    if path.startswith("/api/q/") or path.startswith("/api/items/"):
        body = {"rows": c.get("/api/q/q4").get_json()["rows"], **body}
    return c.post(path, json=body, headers={"X-Mark": "1"})


def card(c, n: int, row_id: str, rows: str | None = None):
    """Answer ``n``'s card as the page asks for it (with the rows it read)."""
    rows = rows if rows is not None else c.get("/api/q/q4").get_json()["rows"]
    return c.get(f"/api/q/q4/{n}/card?id={row_id}&rows={rows}")


def rid(c, n: int) -> str:
    """The id of the answer at position ``n``, as the page has it."""
    return c.get("/api/q/q4").get_json()["answers"][n]["id"]


def save(c, n: int, body: dict):
    """A change to answer ``n`` as the page sends it (with the row's id)."""
    return post(c, f"/api/q/q4/{n}", {"id": rid(c, n), **body})


def test_nothing_without_a_token_and_no_change_without_the_header(tmp_path):
    out = graded(tmp_path)
    app = create_app(out, TA)
    anon = app.test_client()
    assert anon.get("/").status_code == 403 and anon.get("/api/q/q4").status_code == 403
    assert anon.get("/?token=tok-eve").status_code == 403
    c = client(out)
    page = c.get("/q/q4")
    assert page.status_code == 200
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline'" not in csp.split(
        "style-src")[0]
    assert c.post("/api/q/q4/items", json={"points": 1, "text": "x"}).status_code == 403   # no X-Mark
    shown = card(c, 0, rid(c, 0)).get_data(as_text=True)
    assert "&lt;script&gt;x()&lt;/script&gt;" in shown and "<script" not in shown
    assert not any(f in shown for f in FILES)                   # anonymous by default
    named = card(client(out, names=True), 0, rid(c, 0)).get_data(as_text=True)
    assert any(f in named for f in FILES)


def test_a_save_from_an_old_version_is_refused_with_a_409(tmp_path):
    out = graded(tmp_path)
    ana, ben = client(out, "tok-ana"), client(out, "tok-ben")
    state = post(ana, "/api/q/q4/items", {"points": 1, "text": "Correct"}).get_json()
    item = state["items"][0]["id"]
    assert save(ana, 0, {"version": 0, "items": [item]}).status_code == 200
    late = save(ben, 0, {"version": 0, "comment": "mine"})
    assert late.status_code == 409
    body = late.get_json()
    assert body["answer"]["items"] == [item] and body["by"][0]["who"] == "ana"
    bad = save(ana, 1, {"version": 0, "points": "3"})          # q4 is worth 1
    assert bad.status_code == 400 and "between 0 and 1" in bad.get_json()["error"]


def test_the_browsers_route_writes_the_same_lms_files_as_the_csv_route(tmp_path):
    """The same points given through course mark (rubric items) and through manual.csv give the
    same grades.csv, canvas_import.csv and Moodle grades."""
    points = {FILES[0]: "1", FILES[1]: "0.5", FILES[2]: "0", FILES[3]: "1", FILES[4]: "0.5", FILES[5]: "0"}
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(STUDENTS))
    csv_route, web_route = graded(tmp_path, "csv"), graded(tmp_path, "web")
    for out in (csv_route, web_route):
        lms.remember(out, book, None)
    filled = tmp_path / "filled.csv"
    filled.write_text("file,q4\n" + "".join(f"{f},{p}\n" for f, p in points.items()))
    assert manual.main([str(csv_route), str(filled)]) == 0
    c = client(web_route)
    state = post(c, "/api/q/q4/items", {"points": 1, "text": "Right"}).get_json()
    state = post(c, "/api/q/q4/items", {"points": -0.5, "text": "Half wrong"}).get_json()
    right, half = (i["id"] for i in state["items"])
    state = post(c, "/api/q/q4/items", {"points": 0, "text": "Nothing"}).get_json()
    nothing = state["items"][2]["id"]
    use = {"1": [right], "0.5": [right, half], "0": [nothing]}
    labels = {a["n"]: a for a in state["answers"]}
    by_file = {f: n for n, f in enumerate(FILES)}
    from instructor.mark.folder import Folder
    rows = Folder(web_route).rows
    for n, row in enumerate(rows):
        assert save(c, n, {"version": labels[n]["version"], "items": use[points[row.file]]}
                    ).status_code == 200, by_file
    done = post(c, "/api/export", {}).get_json()
    assert "lines" in done, done
    for name in ("grades.csv", "canvas_import.csv"):
        assert (web_route / name).read_bytes() == (csv_route / name).read_bytes(), name
    stats = list(csv.reader((web_route / "rubric_stats.csv").open(newline="")))
    assert stats[1:] == [["q4", "1", "1", "Right", "4", "6", "0.67"],
                         ["q4", "2", "-0.5", "Half wrong", "2", "6", "0.33"],
                         ["q4", "3", "0", "Nothing", "2", "6", "0.33"]]
    feedback = (web_route / "feedback" / f"{inputs.safe_stem(FILES[1])}.md").read_text()
    assert "- q4: 0.5 / 1.0\n  - +1: Right\n  - -0.5: Half wrong" in feedback


def test_the_database_is_one_sqlite_file_in_wal_mode(tmp_path):
    out = graded(tmp_path)
    Ledger(out).close()
    mode = sqlite3.connect(out / "hand_grades.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_a_regrade_that_moves_the_rows_refuses_a_save_or_card_of_the_old_position(tmp_path):
    """A late submission graded while the page is open shifts the positions; a save
    made from the page as it was is refused (409, "press r"), never given to the row now at its place."""
    out = graded(tmp_path)
    c = client(out)
    state = c.get("/api/q/q4").get_json()
    n = len(state["answers"]) - 1                              # the TA reads the last answer
    seen = state["answers"][n]
    assert card(c, n, seen["id"], state["rows"]).status_code == 200
    from instructor.mark.folder import Folder
    read = Folder(out).rows[n].file
    late = next(f"late{k}_{10900 + k}_1_00_toy.ipynb" for k in range(1000)
                if csvcells.file_key(f"late{k}_{10900 + k}_1_00_toy.ipynb") < csvcells.file_key(read))
    regrade(out, [row(k, f) for k, f in enumerate(FILES)] + [row(99, late)])
    moved = post(c, f"/api/q/q4/{n}", {"id": seen["id"], "version": seen["version"], "points": "1"})
    assert moved.status_code == 409 and moved.get_json()["regraded"], moved.get_json()
    assert "press r" in moved.get_json()["error"]
    assert card(c, n, seen["id"], state["rows"]).status_code == 409
    assert post(c, f"/api/q/q4/{n}", {"version": 0, "points": "1"}).status_code == 409   # no id: refused
    assert not Ledger(out).answers()                           # nothing saved on anyone
    now = c.get("/api/q/q4").get_json()["answers"]
    assert [a["id"] for a in now] != [a["id"] for a in state["answers"]]
    k = [a["id"] for a in now].index(seen["id"])               # the answer she read, at its new place
    assert post(c, f"/api/q/q4/{k}", {"id": seen["id"], "version": 0, "points": "1"}).status_code == 200
    assert [(key[1], a.points) for key, a in Ledger(out).answers().items()] == [(read, 1.0)]


def test_hand_grades_over_a_lowered_maximum_are_listed_never_given_back_or_exported(tmp_path):
    """q4 lowered from 1 to 0.5 point and the class re-graded: a typed 1 is listed
    as not applied (kept in the ledger), not in grades.csv; a rubric's sum is clamped to the new
    maximum; the running course mark checks typed points against the new maximum."""
    import dataclasses
    out = graded(tmp_path)
    c = client(out)
    state = post(c, "/api/q/q4/items", {"points": 1, "text": "Right"}).get_json()
    from instructor.mark.folder import Folder
    files = [r.file for r in Folder(out).rows]
    assert save(c, 0, {"version": 0, "points": "1"}).status_code == 200
    assert save(c, 1, {"version": 0, "items": [state["items"][0]["id"]]}).status_code == 200
    asg = assignment.load(str(hostile.FIXTURE))
    asg = dataclasses.replace(asg, questions=[dataclasses.replace(q, points=0.5) if q.name == "q4" else q
                                              for q in asg.questions])
    import shutil
    shutil.rmtree(out / "results")
    report.write_all(out, asg, [row(k, f) for k, f in enumerate(FILES)], {"workers": 1, "mode": "weak"})
    lines = manual.reapply(out)
    why = f"1 not applied (still in the ledger): q4 is now worth 0.5 points, not 1.0: {files[0]} q4"
    assert why in lines[0]
    grades = {r["file"]: r["q4"] for r in csv.DictReader((out / "grades.csv").open())}
    assert grades[files[0]] == "" and grades[files[1]] == "0.5"
    answers = c.get("/api/q/q4").get_json()["answers"]
    assert (answers[0]["grade"], answers[0]["typed"], answers[1]["grade"]) == (None, 1.0, 0.5)
    again = save(c, 0, {"version": answers[0]["version"], "points": "1"})
    assert again.status_code == 400 and "between 0 and 0.5" in again.get_json()["error"]
    assert manual.export(out)                                   # the export: not over the maximum either
    assert {r["file"]: r["q4"] for r in csv.DictReader((out / "grades.csv").open())}[files[0]] == ""


def test_a_rubric_item_of_infinite_points_is_refused_and_never_full_marks(tmp_path):
    """`1e400`, `inf` or `nan` typed as a new item's points are refused: saved, Infinity would leave
    the page unable to read the question, and +inf and -inf sum to NaN, clamped to full marks."""
    out = graded(tmp_path)
    c = client(out)
    for bad in ("1e400", "inf", "nan", "-Infinity"):
        r = post(c, "/api/q/q4/items", {"points": bad, "text": "Huge"})
        assert r.status_code == 400, (bad, r.status_code)
    led = Ledger(out)
    assert led.items("q4") == []
    with pytest.raises(LedgerError, match="finite"), led.transaction():
        led.add_item("q4", float("inf"), "Huge", "ana")
    ok = post(c, "/api/q/q4/items", {"points": "0.5", "text": "Half"}).get_json()["items"][0]
    assert post(c, f"/api/items/{ok['id']}", {"version": ok["version"], "points": "inf"}).status_code == 400
    # a ledger that holds such items all the same (written before the check): no full marks, and
    # the page gets an error it can show, not JSON it cannot parse
    with led.transaction():
        led.db.execute("INSERT INTO item(question, points, text, position, version, who, at) VALUES "
                       "('q4', 1e999, 'up', 2, 1, 'x', 'x'), ('q4', -1e999, 'down', 3, 1, 'x', 'x')")
    ids = [i.id for i in led.items("q4")]
    with led.transaction():
        led.save(keys(out)[0], 0, "ana", items=ids[1:])
    assert led.grade(led.answer(keys(out)[0])) == 0.0
    shown = c.get("/api/q/q4")
    assert shown.status_code == 500 and "not finite" in shown.get_json()["error"]


def test_a_refused_save_does_not_say_whose_answer_it_is(tmp_path):
    """A 409 does not return the ledger's history as stored (key and file: the student's name on
    Canvas); an anonymous page gets who changed it and when, nothing more."""
    out = graded(tmp_path)
    ana, ben = client(out, "tok-ana"), client(out, "tok-ben")
    assert save(ana, 0, {"version": 0, "comment": "first"}).status_code == 200
    late = save(ben, 0, {"version": 0, "comment": "second"})
    assert late.status_code == 409
    text = late.get_data(as_text=True)
    assert not any(f in text for f in FILES) and not any(f"{k:064x}" in text for k in range(6))
    assert late.get_json()["by"] == [{"who": "ana", "at": late.get_json()["answer"]["at"]}]
    named = client(out, "tok-ben", names=True)
    assert any(f in save(named, 0, {"version": 0, "comment": "x"}).get_data(as_text=True) for f in FILES)


def _csv_of(out: Path, path: Path, points: dict[str, str], comments: dict[str, str] | None = None) -> Path:
    """A TA's copy of manual.csv (or of the copy ``path`` already is) with these points (and
    comments) typed in."""
    source = path if path.exists() else out / "manual.csv"
    rows = list(csv.reader(source.open(newline="", encoding="utf-8")))
    for r in rows[1:]:
        r[rows[0].index("q4")] = points.get(r[0], r[rows[0].index("q4")])
        r[rows[0].index("comment")] = (comments or {}).get(r[0], r[rows[0].index("comment")])
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


def test_a_csv_merged_again_does_not_write_over_a_grade_given_since_in_the_browser(tmp_path):
    """ben merges his CSV, ana grades one answer 0 in the browser, ben merges his
    CSV again with a typo fixed in another row: ana's 0 is refused (listed, exit 1, nothing
    changed), ben's own fix is no conflict, and --force writes over it."""
    out = graded(tmp_path)
    ben = _csv_of(out, tmp_path / "ben.csv", {f: "1" for f in FILES})
    assert manual.main([str(out), str(ben)]) == 0
    c = client(out)
    from instructor.mark.folder import Folder
    victim = Folder(out).rows[0].file
    version = c.get("/api/q/q4").get_json()["answers"][0]["version"]
    assert save(c, 0, {"version": version, "points": "0", "comment": "no plot: 0"}).status_code == 200
    typo = next(f for f in FILES if f != victim)
    _csv_of(out, ben, {**{f: "1" for f in FILES}, typo: "0.5"})
    before = (out / "grades.csv").read_bytes()
    assert manual.main([str(out), str(ben)]) == 1
    assert (out / "grades.csv").read_bytes() == before
    grades = lambda: {r["file"]: r["q4"] for r in csv.DictReader((out / "grades.csv").open())}  # noqa: E731
    _csv_of(out, ben, {**{f: "1" for f in FILES}, typo: "0.5", victim: ""})    # ana's cell left out
    assert manual.main([str(out), str(ben)]) == 0
    assert (grades()[victim], grades()[typo]) == ("0.0", "0.5")
    _csv_of(out, ben, {victim: "1"})
    assert manual.main([str(out), str(ben), "--force"]) == 0
    assert grades()[victim] == "1.0"


def test_a_stale_csv_row_does_not_grade_a_reupload_nobody_read(tmp_path, capsys):
    """Plain names (alice.ipynb); Alice re-uploads after her q4 was graded. The TA's
    old CSV merged again (for Bob's comment) does not grade her new notebook."""
    out = graded(tmp_path)
    ta = _csv_of(out, tmp_path / "ta.csv", {f: "1" for f in FILES})
    assert manual.main([str(out), str(ta)]) == 0
    new = row(0, FILES[0], sha="f" * 64)
    new.answers["q4"]["cells"][0]["source"] = "a new answer"       # her answer changed: nobody read it
    regrade(out, [new] + [row(k, f) for k, f in enumerate(FILES) if k])
    _csv_of(out, ta, {f: "1" for f in FILES}, {FILES[1]: "Nice work"})
    capsys.readouterr()
    assert manual.main([str(out), str(ta)]) == 1
    err = capsys.readouterr().err
    assert f"({FILES[0]}): q4 = 1.0: the notebook was re-uploaded since this CSV was made" in err
    grades = {r["file"]: r["q4"] for r in csv.DictReader((out / "grades.csv").open())}
    assert grades[FILES[0]] == ""


def test_a_merge_whose_file_cannot_be_renamed_keeps_the_ledger_and_names_the_stale_files(
        tmp_path, monkeypatch, capsys):
    """A rename that fails half-way (canvas_import.csv held by another program) must not leave
    grades.csv merged and the ledger rolled back under "nothing was changed" (the grades would
    vanish at the next re-grade). The ledger is committed first; the message names what is stale."""
    import os

    from instructor.mark import main as mark_main
    out = graded(tmp_path)
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(STUDENTS))
    lms.remember(out, book, None)
    filled = _csv_of(out, tmp_path / "f.csv", {f: "1" for f in FILES})
    replace = os.replace

    def held(src, dst):
        if Path(dst).name == "canvas_import.csv":
            raise PermissionError(1, "Operation not permitted", str(dst))
        return replace(src, dst)

    monkeypatch.setattr(manual.os, "replace", held)
    capsys.readouterr()
    assert manual.main([str(out), str(filled)]) == 1
    err = capsys.readouterr().err
    assert "nothing in" not in err and "canvas_import.csv" in err and f"course mark {out} --export" in err
    assert len(Ledger(out).entries()) == len(FILES)                  # the source of truth has them
    assert not list(out.rglob("*.part"))
    monkeypatch.setattr(manual.os, "replace", replace)
    assert mark_main([str(out), "--export"]) == 0
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())["grades"]
    assert {who: v for (who, _col), v in got.items()} == {str(10100 + k): f"{4 + k % 3:g}" for k in range(6)}
    regrade(out, [row(k, f) for k, f in enumerate(FILES)])
    assert {r["q4"] for r in csv.DictReader((out / "grades.csv").open())} == {"1.0"}


def test_rubric_stats_csv_runs_no_formula_a_rubric_item_holds(tmp_path):
    """An item's text goes into rubric_stats.csv escaped, never raw."""
    out = graded(tmp_path)
    c = client(out)
    for text in ('=HYPERLINK("http://x/?"&A1)', "@SUM(1)", "+1 plot", "'quoted"):
        assert post(c, "/api/q/q4/items", {"points": "0", "text": text}).status_code == 200
    assert "lines" in post(c, "/api/export", {}).get_json()
    for body in (c.get("/rubric.csv").get_data(as_text=True),
                 (out / "rubric_stats.csv").read_text(encoding="utf-8")):
        texts = [r[3] for r in list(csv.reader(io.StringIO(body)))[1:]]
        assert texts == ['\'=HYPERLINK("http://x/?"&A1)', "'@SUM(1)", "'+1 plot", "''quoted"]
        assert [csvcells.cell_text(t) for t in texts][0] == '=HYPERLINK("http://x/?"&A1)'


def test_course_mark_keeps_serving_while_a_regrade_has_removed_grades_csv(tmp_path):
    """A re-grade removes grades.csv and questions.json before it writes them again: meanwhile
    the server serves the last state it read (not a 500), and checks typed points against the points
    it last read."""
    out = graded(tmp_path)
    c = client(out)
    before = c.get("/api/q/q4").get_json()
    for name in ("grades.csv", "questions.json"):
        (out / name).rename(tmp_path / name)
    assert c.get("/api/q/q4").get_json()["answers"] == before["answers"]
    assert save(c, 0, {"version": 0, "points": "2"}).status_code == 400          # still worth 1
    assert save(c, 0, {"version": 0, "points": "1"}).status_code == 200
    for name in ("grades.csv", "questions.json"):
        (tmp_path / name).rename(out / name)
    assert c.get("/api/q/q4").get_json()["answers"][0]["grade"] == 1.0


# ---------------------------------------------------------------- a week with two TAs

def test_a_refused_save_keeps_what_the_ta_typed_and_sends_it_back_beside_theirs(tmp_path):
    out = graded(tmp_path)
    ana, ben = client(out, "tok-ana"), client(out, "tok-ben")
    assert save(ana, 0, {"version": 0, "comment": "Good plot."}).status_code == 200
    late = save(ben, 0, {"version": 0, "comment": "Say why it flattens."})
    assert late.status_code == 409
    body = late.get_json()
    assert body["answer"]["comment"] == "Good plot." and body["yours"]["comment"] == "Say why it flattens."
    led = Ledger(out)
    kept = led.refused()
    assert [(r["who"], r["comment"], r["version"]) for r in kept] == [("ben", "Say why it flattens.", 0)]
    assert led.answer(tuple(kept[0]["key"])).comment == "Good plot."          # nothing written over
    assert [h["who"] for h in led.history()] == ["ana"]                      # and no change counted
    both = "Good plot.\nSay why it flattens."
    merged = save(ben, 0, {"version": body["answer"]["version"], "comment": both})
    assert merged.status_code == 200 and led.answer(tuple(kept[0]["key"])).comment.endswith("flattens.")


def test_a_page_loaded_before_a_regrade_saves_nothing_even_on_a_row_the_regrade_kept(tmp_path):
    out = graded(tmp_path)
    c = client(out)
    state = c.get("/api/q/q4").get_json()
    item = post(c, "/api/q/q4/items", {"rows": state["rows"], "points": 1, "text": "Right"}).get_json()
    item = item["items"][0]
    kept = state["answers"][0]
    from instructor.mark.folder import Folder
    changed = FILES.index(Folder(out).rows[-1].file)              # a re-upload of the last row only
    regrade(out, [row(k, f, sha="e" * 64 if k == changed else None) for k, f in enumerate(FILES)])
    now = c.get("/api/q/q4").get_json()
    assert now["rows"] != state["rows"] and now["answers"][0]["id"] == kept["id"]   # row 0 as it was
    old = {"rows": state["rows"], "id": kept["id"], "version": kept["version"]}
    for refused in (post(c, "/api/q/q4/0", {**old, "items": [item["id"]]}),
                    post(c, "/api/q/q4/items", {"rows": state["rows"], "points": 0, "text": "Other"}),
                    post(c, f"/api/items/{item['id']}", {"rows": state["rows"], "version": 1, "points": 2}),
                    card(c, 0, kept["id"], state["rows"])):
        assert refused.status_code == 409 and refused.get_json()["regraded"], refused.get_json()
        assert "nothing is until you press r" in refused.get_json()["error"]
    assert not Ledger(out).answers() and len(Ledger(out).items("q4")) == 1
    assert post(c, "/api/q/q4/0", {"rows": now["rows"], "id": kept["id"], "version": 0,
                                   "items": [item["id"]]}).status_code == 200     # reloaded: saved


def test_a_second_rubric_item_that_says_the_same_is_refused(tmp_path):
    out = graded(tmp_path)
    c = client(out)
    assert post(c, "/api/q/q4/items", {"points": 1, "text": "Correct plot"}).status_code == 200
    other = post(c, "/api/q/q4/items", {"points": 0.5, "text": "Good axes"}).get_json()["items"][1]
    again = post(c, "/api/q/q4/items", {"points": 0.5, "text": "  correct   PLOT "})
    assert again.status_code == 400
    assert again.get_json()["error"] == ('rubric item 1 already says "Correct plot" (+1): '
                                         'apply or edit that one')
    renamed = post(c, f"/api/items/{other['id']}", {"version": other["version"], "text": "Correct plot"})
    assert renamed.status_code == 400 and "rubric item 1 already says" in renamed.get_json()["error"]
    assert [i["text"] for i in c.get("/api/q/q4").get_json()["items"]] == ["Correct plot", "Good axes"]


def test_a_progress_bar_shows_its_last_state(tmp_path):
    """tqdm in Jupyter saves a widget (its text/plain is the bar as it started) and, when the
    notebook saved its widgets' state, where it ended; printed to a terminal, carriage returns."""
    from autograder import notebook_info
    bar, left, right = "m-bar", "m-left", "m-right"
    states = {"m-box": {"_model_name": "HBoxModel",
                        "children": [f"IPY_MODEL_{m}" for m in (left, bar, right)]},
              left: {"_model_name": "HTMLModel", "value": "100%"},
              bar: {"_model_name": "FloatProgressModel", "value": 1500.0, "max": 1500.0},
              right: {"_model_name": "HTMLModel", "value": " 1500/1500 [00:09&lt;00:00, 160.1it/s]"}}
    shown = {"output_type": "display_data", "metadata": {}, "data": {
        "text/plain": "  0%|          | 0/1500 [00:00<?, ?it/s]",
        notebook_info.WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": "m-box"}}}
    printed = {"output_type": "stream", "name": "stderr",
               "text": ["  0%|          | 0/10\r 50%|#####     | 5/10\r100%|##########| 10/10\n", "done\n"]}
    cell = {"outputs": [shown, printed]}
    saved = notebook_info._saved_outputs(cell, notebook_info._Budget(), {k: v for k, v in states.items()})
    assert saved == [{"text": "100%|██████████| 1500/1500 [00:09<00:00, 160.1it/s]"},
                     {"text": "100%|##########| 10/10\ndone\n"}]
    bare = notebook_info._saved_outputs(cell, notebook_info._Budget(), {})
    assert bare[0]["note"].startswith("a progress bar or other widget: as first shown")
    assert bare[1] == {"text": "  0%|          | 0/1500 [00:00<?, ?it/s]"}
    assert not any("not shown" in o.get("note", "") for o in saved + bare)
    nb = {"metadata": {"widgets": {notebook_info.WIDGET_STATE: {
        "state": {k: {"model_name": v["_model_name"], "state": v} for k, v in states.items()}}}}}
    assert notebook_info.widget_states(nb) == states


def test_an_unreadable_upload_is_shown_but_not_an_answer_left_to_grade(tmp_path):
    """The class of six with a corrupt seventh upload: grading the six answers reaches 6 / 6, on
    the overview and on the question's page, and the seventh is named as having nothing to grade."""
    asg = assignment.load(str(hostile.FIXTURE))
    out = tmp_path / "out"
    out.mkdir()
    bad = "student99_10199_20099_00_toy.ipynb"
    broken = report.Result(file=bad, stem=inputs.safe_stem(bad), status="unreadable file: not valid JSON",
                           sha256=f"{99:064x}", question_points={})
    report.write_all(out, asg, [*(row(k, f) for k, f in enumerate(FILES)), broken],
                     {"workers": 1, "mode": "weak"})
    c = client(out)
    answers = c.get("/api/q/q4").get_json()["answers"]
    assert len(answers) == 7 and sum(not a["gradable"] for a in answers) == 1
    for n, a in enumerate(answers):
        if a["gradable"]:
            assert save(c, n, {"points": 1, "version": a["version"]}).status_code == 200
    overview = c.get("/").get_data(as_text=True)
    assert "6 / 6" in overview and "(1 unreadable: nothing to grade)" in overview
