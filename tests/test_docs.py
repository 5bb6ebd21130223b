"""README.md and docs/*.md say what is true: every command in them runs as written, every link
between them resolves.

Commands are the lines of fenced ``sh`` (``bash``, ``shell``) blocks, and the ``$ `` lines of
``console`` blocks. Each simple command (split at ``&&``, ``||``, ``;``, ``|``) is checked by what it
runs:

- ``course ...`` (also ``.venv/bin/course``, ``sudo .../bin/course``, ``python -m course``,
  ``python -m autograder``): parsed by the real argument parser of its verb, reached through the
  ``course`` console script of pyproject.toml, stopped right after parsing (nothing runs), so a
  misspelt verb or option fails; notebook names given to it must be the course's;
- ``make TARGET``: ``make --dry-run`` knows the target;
- ``python -m X``: X can be imported; ``python path.py ...``: the script exists, and a benchmark's
  arguments are parsed by its own parser;
- ``nbgrader`` and ``otter``: the subcommand (and nbgrader's options) exist in the installed tools;
- anything else must be a program this file knows (a new one is added here on purpose);
- every argument that names a file of this repository (its first part is a top-level entry) exists,
  or is a build output git ignores; after a ``cd`` out of the repository no path is checked.

Links: every relative ``[text](target)`` of README.md, docs/*.md and CONTRIBUTING.md points at an
existing file of the repository, and a ``#anchor`` at a heading of that file (GitHub's anchors).
README.md stays under 200 lines, and every page of docs/ is in the index, docs/README.md, and
linked from README.md.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import re
import runpy
import shlex
import subprocess
import unicodedata
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINKING = [*PAGES, ROOT / "CONTRIBUTING.md"]      # pages whose links are checked
SHELL_LANGS = {"sh", "bash", "shell", "console"}
# Programs a command may run besides the ones checked below; their repository paths are still checked.
KNOWN_PROGRAMS = {".", "source", "cd", "git", "mkdir", "cp", "mv", "cat", "ls", "head", "tail",
                  "chmod", "conda", "pip", "apt-get", "jupyter", "chromium", "kubectl", "podman",
                  "sbatch", "scontrol", "scancel", "squeue"}
NOTEBOOKS = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
SEPARATORS = {"&&", "||", ";", "|", "&"}


# ---------------------------------------------------------------- reading the pages

@dataclass
class Command:
    page: Path
    line: int                 # where the command starts in the page
    text: str                 # as written (continuations joined)
    words: list[str]
    repo_paths: bool          # False after a `cd` out of the repository in the same block

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.text}"


def fenced_blocks(text: str) -> list[tuple[str, int, list[str]]]:
    """(info string, line number of the first content line, content lines) of every fenced block."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)", lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, info = len(opening.group(1)), opening.group(2), opening.group(3).lower()
        body, i = [], i + 1
        start = i + 1
        while i < len(lines) and not re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[i]):
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        blocks.append((info, start, body))
        i += 1
    return blocks


def without_code(text: str) -> str:
    """The page with its fenced blocks and code spans blanked out (line numbers kept)."""
    lines = text.split("\n")
    for _, start, body in fenced_blocks(text):
        lines[start - 2:start + len(body)] = [""] * (len(body) + 2)
    return "\n".join(re.sub(r"`[^`]*`", "", line) for line in lines)


def split_words(line: str) -> list[list[str]]:
    """The simple commands of one shell line, as words (comments dropped)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, current = [], []
    for token in lexer:
        if token in SEPARATORS:
            commands.append(current)
            current = []
        else:
            current.append(token)
    commands.append(current)
    return [c for c in commands if c]


def page_commands(page: Path) -> list[Command]:
    commands = []
    for info, start, body in fenced_blocks(page.read_text(encoding="utf-8")):
        if info not in SHELL_LANGS:
            continue
        in_repo, k = True, 0
        while k < len(body):
            line, first = body[k], start + k
            k += 1
            if info == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            while line.rstrip().endswith("\\") and k < len(body):
                line = line.rstrip()[:-1] + " " + body[k].strip()
                k += 1
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            for words in split_words(line):
                commands.append(Command(page, first, line.strip(), words, in_repo))
                if words[0] == "cd" and (len(words) == 1 or not inside_repo(words[1])):
                    in_repo = False
    return commands


def inside_repo(path: str) -> bool:
    if path.startswith(("~", "/", "$")):
        return False
    return (ROOT / path).resolve().is_relative_to(ROOT)


ALL_COMMANDS = [c for page in PAGES for c in page_commands(page)]


# ---------------------------------------------------------------- what the commands run

class Parsed(BaseException):
    """Raised by the patched ArgumentParser.parse_args once a command line parsed."""

    def __init__(self, prog: str, namespace: argparse.Namespace):
        super().__init__(prog)
        self.prog, self.namespace = prog, namespace


def parse_only(main, argv: list[str]) -> tuple[str | None, argparse.Namespace | None, str]:
    """Call `main(argv)` with argparse stopped right after parsing: (prog, namespace, complaint).
    The complaint is empty when the command line is good; `--help` counts as good, an abbreviated
    option does not."""
    real = argparse.ArgumentParser.parse_args

    def stop(self, args=None, namespace=None):
        self.allow_abbrev = False          # the docs spell options out: an abbreviation may turn ambiguous
        raise Parsed(self.prog, real(self, args, namespace))

    err, out = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        mp.setattr(argparse.ArgumentParser, "parse_args", stop)
        try:
            status = main(argv)
        except Parsed as parsed:
            return parsed.prog, parsed.namespace, ""
        except SystemExit as exc:
            status = exc.code
    if status in (0, None):
        return None, None, ""
    return None, None, f"exit status {status}: {(err.getvalue() or out.getvalue()).strip()[-600:]}"


def course_main():
    """The `course` console script, as pyproject.toml names it (wherever the CLI lives)."""
    text = (ROOT / "pyproject.toml").read_text()
    module, function = re.search(r'^course\s*=\s*"([\w.]+):(\w+)"', text, re.M).groups()
    return getattr(importlib.import_module(module), function)


def notebook_named(name: str, short_ok: bool = False) -> bool:
    if name in NOTEBOOKS:
        return True
    return short_ok and any(name in (n[:2], n[3:]) for n in NOTEBOOKS)


def check_course(argv: list[str]) -> str:
    prog, ns, complaint = parse_only(course_main(), argv)
    if complaint or ns is None:
        return complaint
    wrong = []
    for option in ("assignment", "upto"):
        value = getattr(ns, option, None)
        if value is not None and not notebook_named(value):
            wrong.append(f"--{option} {value}")
    if prog in ("course build", "course solutions"):
        wrong += [n for n in ns.notebooks if not notebook_named(n, short_ok=prog == "course solutions")]
    return f"{prog}: not a notebook of the course: {wrong}" if wrong else ""


def check_python(words: list[str]) -> str:
    args = words[1:]
    if args[:1] == ["-m"]:
        module, rest = args[1], args[2:]
        if module in ("course", "autograder"):
            if importlib.util.find_spec(f"{module}.__main__") is None:
                return f"python -m {module} does not run: no {module}/__main__.py"
            return check_course(rest if module == "course" else ["grade", *rest])
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return f"no module {module}"
        if module == "autograder.mutants" and rest and not notebook_named(rest[0]):
            return f"not a notebook of the course: {rest[0]}"
        return ""
    script = ROOT / args[0]
    if not script.is_file():
        return f"no script {args[0]}"
    if script.parent.name == "benchmarks":
        module = runpy.run_path(str(script), run_name="docs_check")
        return parse_only(module["main"], args[1:])[2]
    return ""


def check_make(words: list[str]) -> str:
    targets = [w for w in words[1:] if not w.startswith("-")]
    out = subprocess.run(["make", "--dry-run", "-C", str(ROOT), *targets],
                         capture_output=True, text=True, timeout=60)
    return "" if out.returncode == 0 else f"make --dry-run: {out.stderr.strip()[-400:]}"


def check_nbgrader(words: list[str]) -> str:
    from nbgrader.apps.nbgraderapp import NbGraderApp

    if len(words) < 2 or words[1] not in NbGraderApp.subcommands:
        return f"nbgrader has no subcommand {words[1:2]}"
    app = NbGraderApp.subcommands[words[1]][0]
    if isinstance(app, str):
        module, _, name = app.rpartition(".")
        app = getattr(importlib.import_module(module), name)
    known = set(app.aliases) | set(app.flags)
    bad = [w for w in words[2:] if w.startswith("--") and w[2:].split("=")[0] not in known]
    return f"nbgrader {words[1]} has no option {bad}" if bad else ""


def check_otter(words: list[str]) -> str:
    import click
    from otter.cli import cli

    try:
        with cli.make_context("otter", words[1:]) as ctx, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # Click 9 folds protected_args into args
            name, command, rest = cli.resolve_command(ctx, [*ctx.protected_args, *ctx.args])
            command.make_context(name, rest, parent=ctx)
    except click.exceptions.Exit:
        return ""
    except click.BadParameter as exc:
        # a file that does not exist yet (a build output): the repository path check judges paths
        return "" if "does not exist" in exc.format_message() else f"otter: {exc.format_message()}"
    except click.ClickException as exc:
        return f"otter: {exc.format_message()}"
    return ""


def repo_path_complaints(command: Command, args: list[str]) -> list[str]:
    """Arguments that name a file of this repository that is not there (and git does not ignore)."""
    if not command.repo_paths:
        return []
    top = {p.name for p in ROOT.iterdir()} - {".git"}
    missing = []
    for arg in args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value.startswith("-") or not value or value.startswith(("/", "~", "$", "..")):
            continue
        first = value.split("/", 1)[0]
        if first not in top:
            continue
        path = ROOT / value
        if path.exists():
            continue
        ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", value]).returncode == 0
        if not ignored or value.startswith(".venv/"):
            missing.append(value)
    return missing


def program(words: list[str]) -> tuple[str, list[str]]:
    """The program a simple command runs (env assignments and sudo dropped), and its words."""
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    if words[:1] == ["sudo"]:
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[1:]
    return Path(words[0]).name if "/" in words[0] else words[0], words


def complaint(command: Command) -> str:
    name, words = program(command.words)
    problems = []
    if "/" in words[0]:
        problems += [f"no such file {p}" for p in repo_path_complaints(command, [words[0]])]
    if name == "course":
        problems.append(check_course(words[1:]))
    elif re.fullmatch(r"python(3(\.\d+)?)?", name):
        problems.append(check_python(words))
    elif name == "make":
        problems.append(check_make(words))
    elif name == "nbgrader":
        problems.append(check_nbgrader(words))
    elif name == "otter":
        problems.append(check_otter(words))
    elif name not in KNOWN_PROGRAMS:
        problems.append(f"unknown program {name!r} (add it to KNOWN_PROGRAMS in {Path(__file__).name} "
                        "if the docs mean it)")
    problems += [f"no such file {p}" for p in repo_path_complaints(command, words[1:])]
    return "; ".join(p for p in problems if p)


# ---------------------------------------------------------------- the tests

def test_the_pages_have_commands():
    pages = {c.page.name for c in ALL_COMMANDS}
    assert "README.md" in pages and len(ALL_COMMANDS) > 30
    runs = [program(c.words) for c in ALL_COMMANDS]
    verbs = {words[1] for name, words in runs if name == "course" and len(words) > 1}
    assert {"build", "grade", "manual", "release", "solutions", "pdfs"} <= verbs


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=str)
def test_every_command_runs_as_written(command):
    assert complaint(command) == "", str(command)


@pytest.mark.parametrize("bad, why", [
    ("course grde subs --assignment 03_attention --out g", "exit status 2"),
    ("course grade subs --assignment 03_attention --out g --worker 2", "exit status 2"),
    ("course grade subs --assignment 03_atention --out g", "not a notebook"),
    ("course release ../x --upto 3", "not a notebook"),
    ("course solutions 11", "not a notebook"),
    ("make tset", "make --dry-run"),
    ("python -m autograder.mutantz 03_attention", "no module"),
    ("python -m autograder sub.zip --assignment 03_attention --out g --gradebok x.csv", "exit status 2"),
    ("python benchmarks/stories.py --step 1500", "exit status 2"),
    ("python benchmarks/no_such.py", "no script"),
    ("nbgrader generate_assignmnt 03_attention", "no subcommand"),
    ("nbgrader export --too grades.csv", "no option"),
    ("otter runn -a x.zip y.ipynb", "otter:"),
    ("cat notebooks/03_atention.ipynb", "no such file"),
    (".venv/bin/course buidl", "exit status 2"),
    ("frobnicate --now", "unknown program"),
])
def test_a_wrong_command_is_caught(bad, why):
    """The checks above catch the mistakes they are for."""
    command = Command(ROOT / "README.md", 0, bad, split_words(bad)[0], True)
    assert why in complaint(command)


def test_a_console_block_runs_its_prompt_lines_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("````console\n$ course build \\\n    --check\noutput line\n```\nnot a fence end\n"
                    "````\n\n```text\nmake nothing\n```\n")
    commands = page_commands(page)
    assert [c.words for c in commands] == [["course", "build", "--check"]]


def test_commands_are_in_fenced_blocks():
    """An indented code block would escape the checks above: commands go in fenced blocks."""
    pattern = re.compile(r"^ {4,}(\$ )?(sudo |\.venv/bin/)?(course|make|python3?|nbgrader|otter) ")
    stray = [f"{page.relative_to(ROOT)}:{n}: {line.strip()}" for page in PAGES
             for n, line in enumerate(without_code(page.read_text(encoding="utf-8")).split("\n"), 1)
             if pattern.match(line)]
    assert stray == []


# ---------------------------------------------------------------- links

def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading (github-slugger): lower case, punctuation dropped, spaces -> -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LMN")
    return kept.replace(" ", "-")


def page_anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    fenced = {n for _, start, body in fenced_blocks(text) for n in range(start - 1, start + len(body) + 1)}
    seen: dict[str, int] = {}
    found = set()
    for n, line in enumerate(text.split("\n"), 1):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading or n in fenced:
            continue
        anchor = github_anchor(heading.group(1))
        found.add(anchor if anchor not in seen else f"{anchor}-{seen[anchor]}")
        seen[anchor] = seen.get(anchor, 0) + 1
    return found


def links(page: Path) -> list[tuple[int, str]]:
    text = without_code(page.read_text(encoding="utf-8"))
    return [(n, m.group(1)) for n, line in enumerate(text.split("\n"), 1)
            for m in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", m.group(1))]


def test_github_anchor():
    assert github_anchor("The chapter's GPT (notebook 09)") == "the-chapters-gpt-notebook-09"
    assert github_anchor("`course grade`: inputs, outputs") == "course-grade-inputs-outputs"
    assert github_anchor("grading_status") == "grading_status"
    assert github_anchor("Why `student(...)`: one test, three ways of running it") == \
        "why-student-one-test-three-ways-of-running-it"


def test_every_link_resolves():
    broken = []
    for page in LINKING:
        for n, target in links(page):
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}:{n}: {target}"
            if not file.is_relative_to(ROOT) or not file.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and (file.suffix != ".md" or anchor not in page_anchors(file)):
                broken.append(f"{where} (no heading #{anchor} in {file.relative_to(ROOT)})")
    assert broken == []


def test_readme_is_a_front_door_and_docs_has_an_index():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    for audience in ("## Quickstart", "## For students", "## For instructors", "## For TAs"):
        assert audience in readme
    assert "make demo" in readme and "make test" in readme and ". .venv/bin/activate" in readme
    index = {target for _, target in links(ROOT / "docs" / "README.md")}
    for page in PAGES:
        if page.parent.name == "docs" and page.name != "README.md":
            assert page.name in index, f"docs/{page.name} is not in docs/README.md"
            assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
