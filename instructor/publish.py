"""course.toml, the course's settings: its notebooks (read by :mod:`instructor.registry`), where the
course is published (and the links made from it), and what students see of the Gradescope results.
The one reader of the file.

`[publish]`: `course build` writes the bundle's address into every setup cell, an "Open in Colab"
badge at the top of every student notebook and a table of badges into README.md; `course release`
writes the same table into the public repository's README. Moving the course is an edit of
course.toml and a rebuild.

`[gradescope]` (optional): the visibility of the scored per-question results and of the public
tests in the zip's results.json (:func:`gradescope`); `course build` writes it into each zip's
gradescope.json and each set-up sheet.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "course.toml"
BUNDLE_NAME = "course-student.zip"
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
# README.md's badge table lives between these lines; `course build` rewrites what is between them.
TABLE_START = "<!-- colab-badges: written by `course build` from course.toml -->"
TABLE_END = "<!-- /colab-badges -->"


# Gradescope's visibility values for a test in results.json (its autograder specification,
# "Controlling Test Case Visibility"): never, after the due date, once grades are published, always.
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


class ConfigError(ValueError):
    """course.toml is missing a setting or has a wrong one."""


@dataclass(frozen=True)
class Publish:
    repository: str                 # owner/name of the public GitHub repository
    branch: str = "main"
    bundle_url: str = ""            # empty: the bundle inside the public repository

    @property
    def bundle(self) -> str:
        """The address the setup cell downloads the student bundle from."""
        return self.bundle_url or (f"https://raw.githubusercontent.com/{self.repository}/"
                                   f"{self.branch}/{BUNDLE_NAME}")

    def colab(self, name: str) -> str:
        """The Colab address of student notebook `name` in the public repository."""
        return (f"https://colab.research.google.com/github/{self.repository}/blob/{self.branch}/"
                f"notebooks/{name}.ipynb")

    def badge(self, name: str) -> str:
        """Markdown for the "Open in Colab" badge of notebook `name`."""
        return f"[![Open In Colab]({BADGE_IMAGE})]({self.colab(name)})"


def _read_toml(text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:          # Python 3.10: the tables, strings and lists of strings it uses
        return _read_flat_toml(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"course.toml is not valid TOML: {exc}") from None


def _read_flat_toml(text: str) -> dict:
    table: dict = {}
    current = table
    items: list[str] | None = None       # the list being read, across lines
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if items is not None:
            items += re.findall(r'"([^"]*)"', line)
            if "]" in line:
                items = None
        elif m := re.fullmatch(r"\[(\w+)\]", line):
            current = table.setdefault(m.group(1), {})
        elif m := re.fullmatch(r'(\w+)\s*=\s*"([^"]*)"', line):
            current[m.group(1)] = m.group(2)
        elif m := re.fullmatch(r"(\w+)\s*=\s*\[(.*)", line):
            current[m.group(1)] = items = re.findall(r'"([^"]*)"', m.group(2))
            if "]" in m.group(2):
                items = None
        elif line:
            raise ConfigError(f"cannot read this line of course.toml: {line}") from None
    return table


def tables(path: Path) -> dict:
    """course.toml's tables, read (the one place its text is parsed)."""
    if not path.is_file():
        raise ConfigError(f"{path} is missing: it lists the course's notebooks and where it is published")
    return _read_toml(path.read_text())


def load(path: Path | None = None) -> Publish:
    """The [publish] settings of course.toml (default: CONFIG), checked."""
    path = CONFIG if path is None else path
    section = tables(path).get("publish")
    if not isinstance(section, dict):
        raise ConfigError(f"{path} has no [publish] section")
    unknown = set(section) - {"repository", "branch", "bundle_url"}
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {sorted(unknown)} in [publish]")
    repository = section.get("repository", "")
    if not isinstance(repository, str) or not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        raise ConfigError(f"{path}: repository must be the public GitHub repository as owner/name, "
                          f"not {repository!r}")
    branch = section.get("branch", "main")
    if not isinstance(branch, str) or not re.fullmatch(r"[\w./-]+", branch):
        raise ConfigError(f"{path}: branch {branch!r} is not a branch name")
    bundle_url = section.get("bundle_url", "")
    if not isinstance(bundle_url, str) or (bundle_url and not re.match(r"https?://\S+$", bundle_url)):
        raise ConfigError(f"{path}: bundle_url must be an http(s) address or empty, not {bundle_url!r}")
    return Publish(repository, branch, bundle_url)


@dataclass(frozen=True)
class Gradescope:
    """What students see of the zip's results.json, as Gradescope's visibility values."""
    visibility: str = "after_published"     # the scored tests, one per automatically graded question
    public_visibility: str = "visible"      # the 0-point summary of the public tests

    def as_json(self) -> dict[str, str]:
        return {"visibility": self.visibility, "public_visibility": self.public_visibility}


def gradescope(path: Path | None = None) -> Gradescope:
    """The [gradescope] settings of course.toml (default: CONFIG), checked; the defaults when the
    table is absent."""
    path = CONFIG if path is None else path
    section = tables(path).get("gradescope", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: gradescope must be a table ([gradescope])")
    unknown = set(section) - {"visibility", "public_visibility"}
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {sorted(unknown)} in [gradescope]")
    settings = Gradescope(**section)
    for key, value in settings.as_json().items():
        if value not in VISIBILITIES:
            raise ConfigError(f"{path}: [gradescope] {key} must be one of {', '.join(VISIBILITIES)}, "
                              f"not {value!r}")
    return settings


def badge_table(publish: Publish, names: list[str]) -> str:
    """A markdown table: one row per notebook, its "Open in Colab" badge."""
    rows = ["| notebook | open it |", "|---|---|"]
    rows += [f"| `{name}` | {publish.badge(name)} |" for name in names]
    return "\n".join(rows)


def with_badge_table(readme: str, publish: Publish, names: list[str]) -> str:
    """README text with the table between TABLE_START and TABLE_END written anew."""
    pattern = re.compile(re.escape(TABLE_START) + r".*?" + re.escape(TABLE_END), re.DOTALL)
    if not pattern.search(readme):
        raise ConfigError(f"README.md has no badge table markers ({TABLE_START} ... {TABLE_END})")
    block = f"{TABLE_START}\n{badge_table(publish, names)}\n{TABLE_END}"
    return pattern.sub(lambda _: block, readme, count=1)
