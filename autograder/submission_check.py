"""The course's two steps around Otter in the Gradescope zip's ``run_autograder``.

``course build`` puts this file, :mod:`autograder.notebook_info` and ``submission_check.json``
(this week's name, the course's notebooks by prefix, this week's given code cells) at the top of
the autograder zip; Gradescope unpacks them into /autograder/source. The steps run in Otter's
environment, before and after Otter; ``before`` needs only the standard library.

``before AUTOGRADER_DIR``: Otter grades a notebook only when its metadata names this assignment
(``metadata.otter.assignment_name``; otherwise "Received submission for assignment 'None'" and 0
points). A student who copied the cells into a new notebook has lost that metadata. This step reads
the submitted notebook as ``course grade`` does (:func:`notebook_info.wrong_notebook`): another
week's notebook is refused here with a results.json that says which it is ("this is
02_with_position, not 03_attention") and exit status 10, so Otter does not run; any other notebook
whose metadata does not name this week gets this week's name written into its metadata, and
a note for the student is kept for the ``after`` step.

``after AUTOGRADER_DIR``: adds that note to the output students see, and removes from the results
the line of hidden test code that Otter quotes under a failed hidden test case (the hint and the
error message stay): with ``show_hidden`` the per-question results are shown to students after
the grades are published, and the course shows hints, never the hidden tests' code.
"""
from __future__ import annotations

import glob
import json
import os
import re
import sys
import tempfile

try:
    from autograder import notebook_info
except ImportError:                                   # in the zip: the module sits beside this file
    import notebook_info  # type: ignore[no-redef]

REFUSED = 10                                          # exit status: do not run Otter
CONFIG = "submission_check.json"
NOTE = "submission_check_note.txt"                    # in AUTOGRADER_DIR, between the two steps
CASE_RESULT = re.compile(r"^\s*(\S.*?) result:\s*$")
ERROR_AT = re.compile(r"^(\s*)Error at line \d+ in test \S+:\s*$")


def _submitted_notebook(root: str) -> str | None:
    found = glob.glob(os.path.join(root, "submission", "*.ipynb"))
    return found[0] if len(found) == 1 else None       # none or several: Otter says what is wrong


def refusal(other: str, name: str) -> dict:
    """results.json for another week's notebook: 0 points and what to do, shown to the student."""
    text = (f"Wrong notebook: this is {other}, not {name}. Nothing was graded. Submit your {name}.ipynb "
            f"to this assignment (and {other} to its own assignment, if it has one).")
    return {"score": 0, "output": text,
            "tests": [{"name": "Wrong notebook", "score": 0, "max_score": 0, "status": "failed",
                       "visibility": "visible", "output": text}]}


def before(root: str) -> int:
    """Restore lost otter metadata or refuse another week's notebook; see the module's docstring."""
    with open(os.path.join(root, "source", CONFIG), encoding="utf-8") as f:
        config = json.load(f)
    name = config["name"]
    path = _submitted_notebook(root)
    if path is None:
        return 0
    with open(path, "rb") as f:
        data = f.read(notebook_info.MAX_NOTEBOOK_BYTES + 1)
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return 0                                       # Otter reports the unreadable file
    if not isinstance(nb, dict):
        return 0
    info = {"identity": notebook_info.identity(nb),
            "given_found": notebook_info.given_cells_found(nb, config.get("given", []))}
    other = notebook_info.wrong_notebook(info, name, config.get("known", {}), config.get("given", []))
    if other is not None:
        os.makedirs(os.path.join(root, "results"), exist_ok=True)
        with open(os.path.join(root, "results", "results.json"), "w", encoding="utf-8") as f:
            json.dump(refusal(other, name), f, indent=4)
        print(f"submission_check: refused, this is {other}, not {name}")
        return REFUSED
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    otter = meta.get("otter") if isinstance(meta.get("otter"), dict) else {}
    if otter.get("assignment_name") == name:
        return 0
    had = otter.get("assignment_name")
    otter["assignment_name"] = name
    meta["otter"] = otter
    nb["metadata"] = meta
    problem = rewrite(path, nb)
    if problem:
        print(f"submission_check: the notebook's metadata could not be restored ({problem}); the "
              "notebook is left exactly as submitted")
        return 0
    why = ("its metadata named no assignment (were the cells copied into a new notebook?)" if had is None
           else f"its metadata named {had!r}")
    note = (f"Note: your notebook was graded as {name}, although {why}. If it is not your {name} "
            "notebook, submit the right one.")
    with open(os.path.join(root, NOTE), "w", encoding="utf-8") as f:
        f.write(note)
    print(f"submission_check: {note}")
    return 0


def rewrite(path: str, nb: dict) -> str | None:
    """Write ``nb`` over ``path`` all or nothing: into a temporary file beside it, renamed over it
    only once complete (ASCII JSON: a lone surrogate in a string is written as its escape, as it was
    read); on any failure the submission is untouched and the reason is returned."""
    fd, tmp = tempfile.mkstemp(prefix=".submission-", suffix=".ipynb", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=True)
        os.replace(tmp, path)
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def hidden_cases(tests_dir: str) -> set[str]:
    """Names of the hidden test cases (``q1 - 2``), read by Otter's own test-file reader (the step
    runs in Otter's environment)."""
    from otter.test_files import ExceptionTestFile
    names: set[str] = set()
    for path in sorted(glob.glob(os.path.join(tests_dir, "*.py"))):
        names.update(tc.name for tc in ExceptionTestFile.from_file(path).test_cases if tc.hidden)
    return names


def strip_hidden_code(text: str, hidden: set[str]) -> str:
    """Otter's summary of a test file without the quoted line of each failed hidden test case."""
    out, case, skip = [], None, False
    for line in text.split("\n"):
        if skip:                                       # the quoted code line under "Error at line"
            skip = False
            continue
        m = CASE_RESULT.match(line)
        if m:
            case = m.group(1)
        m = ERROR_AT.match(line)
        if m and case in hidden:
            out.append(f"{m.group(1)}(the hidden test's code is not shown)")
            skip = True
            continue
        out.append(line)
    return "\n".join(out)


def after(root: str) -> int:
    """Add the note and hide hidden test code in results.json (see the module's docstring)."""
    path = os.path.join(root, "results", "results.json")
    if not os.path.isfile(path):
        return 0
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    hidden = hidden_cases(os.path.join(root, "source", "tests"))
    for test in results.get("tests", []):
        if isinstance(test.get("output"), str):
            test["output"] = strip_hidden_code(test["output"], hidden)
    note_path = os.path.join(root, NOTE)
    if os.path.isfile(note_path):
        with open(note_path, encoding="utf-8") as f:
            note = f.read()
        results["output"] = note + ("\n\n" + results["output"] if results.get("output") else "")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=4)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("before", "after"):
        print("usage: submission_check.py before|after AUTOGRADER_DIR", file=sys.stderr)
        return 2
    return (before if argv[0] == "before" else after)(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
