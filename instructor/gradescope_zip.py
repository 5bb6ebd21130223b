"""The Gradescope autograder zip: Otter's zip from `otter assign`, completed so that it grades with
the course's own engine (:mod:`autograder.gradescope` is what runs inside it).

`course build` (:func:`instructor.build.assign`) calls :func:`complete_autograder_zip` for every
notebook and writes autograder/build/NN_name-autograder.zip. The zip carries the engine
(:func:`engine_files`), an environment whose pins are requirements.txt's, with torch's CPU
build (:func:`gradescope_pip`), its own ``setup.sh`` (:data:`SETUP_SH`: miniforge and that
environment, nothing else) and course.toml's ``[gradescope]`` visibility in gradescope.json.
`course pdfs` (:mod:`instructor.gradescope_pdf`) is the other half of Gradescope: the hand-graded
answers as one PDF per student.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import yaml

from autograder import exercise_rules, gradescope, mistakes, shipped
from autograder.assignment import ASSIGNMENTS
from autograder.assignment import PACKAGE_DIR as AUTOGRADER

from . import publish, registry
from .masters import ROOT

NOTEBOOKS = ROOT / "notebooks"

# What the notebooks import besides otter: pinned as in requirements.txt.
GRADING_PACKAGES = ("torch", "numpy", "matplotlib", "requests", "tqdm")
# Set in the grading container: train for a few steps only (as `course grade` does) and plot off-screen.
GRADING_ENV = {"COURSE_QUICK": "1", "MPLBACKEND": "Agg"}
# torch from PyPI is the CUDA build (its Linux wheel pulls in about 2.2 GB of CUDA libraries: see
# docs/platforms.md, "Gradescope"); Gradescope's containers have no GPU, so the zip asks for the CPU wheel.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Otter's autograder settings added to the zip's otter_config.json (Otter only sets the image up now).
GRADESCOPE_CONFIG = {"show_hidden": True}
# What the engine needs besides what the notebooks import (pinned as in this environment).
ENGINE_PACKAGES = ("psutil",)
# The notebooks that train on the stories: the zip carries the text (the sandbox may have no network).
STORIES_FROM = "07_my_transformer"
STORIES = ("tinystories-4MB.txt", "tinystories-4MB.json")
# Otter's files that the zip leaves out of Otter's own: its tests (the engine has its own copy, closed to
# student code), its grading entry point, and the course package it copied next to the submission.
OTTER_GRADING = ("run_otter.py",)
OTTER_GRADING_DIRS = ("tests/", "files/")


def pinned(packages: tuple[str, ...] = GRADING_PACKAGES) -> list[str]:
    """`package==version` lines for `packages`, taken from requirements.txt."""
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            pins[line.split("==")[0].strip().lower()] = line.strip()
    return [pins[p] for p in packages]


def engine_pins() -> list[str]:
    """`package==version` for ENGINE_PACKAGES, as installed here (requirements.txt pins them indirectly)."""
    from importlib.metadata import version
    return [f"{p}=={version(p)}" for p in ENGINE_PACKAGES]


def gradescope_pip() -> list[str]:
    """The pip lines of the zip's environment: the CPU index, then the pins with torch's CPU build,
    then what the grading engine needs."""
    return [f"--extra-index-url={TORCH_CPU_INDEX}"] + [
        f"{p}+cpu" if p.startswith("torch==") else p for p in pinned()] + engine_pins()


# Miniforge's release that Otter 7.0.0's setup.sh installs (the environment is built with its mamba).
MINIFORGE = "25.3.1-0"
# The zip's setup.sh, in place of Otter's. Otter's also installs, on every image build, R's build
# libraries, a compiler, jq, nb_conda_kernels, and Playwright's system libraries with Chromium (and
# LaTeX with pandoc when PDFs are asked for): grading never opens a browser, renders a PDF, compiles
# or starts a Jupyter kernel (the engine runs the notebook itself), so none of it is installed.
# `mamba shell init` stays: run_autograder activates the environment with mamba's shell hook.
SETUP_SH = f"""\
#!/usr/bin/env bash
# Written by `course build` (instructor/gradescope_zip.py): what grading needs, nothing more:
# miniforge, then the environment of environment.yml (Python, the pinned packages, torch's CPU build).
set -e

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends wget ca-certificates

wget -nv -O /autograder/source/mamba_install.sh \\
    https://github.com/conda-forge/miniforge/releases/download/{MINIFORGE}/Miniforge3-Linux-$(uname -m).sh
bash /autograder/source/mamba_install.sh -b
rm /autograder/source/mamba_install.sh
export PATH=/root/miniforge3/bin:$PATH

mamba env create -f /autograder/source/environment.yml
mamba shell init --shell bash
"""

RUN_ENGINE = """\
cd /autograder/source/engine
python -m autograder.gradescope /autograder
"""


def engine_files(name: str) -> list[tuple[Path, str]]:
    """(file here, name in the zip) of the grading engine for `name`: autograder/*.py and its checks
    library (autograder/checks/, what the hidden tests call), this week's
    grading material (assignment.json, tests, the exercises' rules, the named mistakes, the blank
    notebook), the other
    weeks' assignment.json (to recognise another week's notebook), the `course` package as this
    week's release ships it (autograder.shipped), and the stories text for the notebooks that train on it."""
    files = [(p, f"engine/autograder/{p.name}") for p in sorted(AUTOGRADER.glob("*.py"))]
    checks = AUTOGRADER / "checks"
    files += [(p, f"engine/autograder/checks/{p.relative_to(checks).as_posix()}")
              for p in sorted(checks.rglob("*.py")) if "__pycache__" not in p.parts]
    # tests, questions and the named mistakes' pieces: the other mutants, the degenerate answers and
    # the correct alternatives stay here
    material = ASSIGNMENTS / name
    rules = material / exercise_rules.RULES_FILE
    # the named mistakes and the right answers they are told apart from (autograder.mistakes)
    named = [material / "mutants" / f"{m.name}.py"
             for ms in mistakes.catalogue(material).values() for m in ms]
    files += [(p, f"engine/autograder/assignments/{name}/{p.relative_to(material).as_posix()}")
              for p in [material / "assignment.json", *sorted((material / "tests").glob("*.py")),
                        *([rules] if rules.is_file() else []), *named]]
    files.append((NOTEBOOKS / f"{name}.ipynb", f"engine/autograder/assignments/{name}/{name}.ipynb"))
    # the other weeks' names and points only: how another week's notebook is recognised and refused
    files += [(p, f"engine/autograder/assignments/{p.parent.name}/assignment.json")
              for p in sorted(ASSIGNMENTS.glob("[0-9][0-9]_*/assignment.json")) if p.parent.name != name]
    package = ROOT / "course"
    for path in shipped.package_files(name, package):
        files.append((path, f"engine/course/{path.relative_to(package).as_posix()}"))
    course = registry.notebooks()
    if name in course and course.index(name) >= course.index(STORIES_FROM):
        cache = Path(os.environ.get("COURSE_DATA_CACHE") or ROOT / "data_cache")
        files += [(cache / f, f"engine/data_cache/{f}") for f in STORIES if (cache / f).is_file()]
    return files


def complete_autograder_zip(src: Path, dst: Path, name: str | None = None,
                            settings: publish.Gradescope | None = None) -> None:
    """Copy otter's autograder zip from `src` to `dst` as the course's Gradescope autograder:
    SETUP_SH and Otter's environment.yml (with the pinned packages, torch's CPU build, and the
    engine's packages) set the image up; `run_autograder` grades with the course's engine
    (`python -m autograder.gradescope /autograder`, with GRADING_ENV), which the zip carries under
    engine/ (`engine_files`), with gradescope.json (this week's name and `settings`, default
    course.toml's [gradescope]). Otter's tests, its grading entry point and the package it copied
    next to the submission are left out."""
    settings = settings or publish.gradescope()
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".zip.part")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        name = name or json.loads(zin.read("otter_config.json"))["assignment_name"]
        for item in zin.infolist():
            if item.filename in OTTER_GRADING or item.filename.startswith(OTTER_GRADING_DIRS):
                continue
            data = zin.read(item)
            if item.filename == "environment.yml":
                env = yaml.safe_load(data)
                pip = next(d for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)["pip"]
                pip.extend(p for p in gradescope_pip() if p not in pip)
                data = yaml.safe_dump(env, sort_keys=False).encode()
            elif item.filename == "otter_config.json":
                config = json.loads(data)
                data = (json.dumps({**config, **GRADESCOPE_CONFIG}, indent=2) + "\n").encode()
            elif item.filename == "setup.sh":
                data = SETUP_SH.encode()
            elif item.filename == "run_autograder":
                exports = "".join(f"export {k}={v}\n" for k, v in GRADING_ENV.items())
                text = data.decode()
                line = next(ln for ln in text.splitlines() if ln.startswith("python "))
                data = text.replace(line + "\n" if line + "\n" in text else line,
                                    exports + RUN_ENGINE, 1).encode()
            zout.writestr(item, data)
        for path, arc in engine_files(name):
            zout.write(path, arc)
        zout.writestr(f"engine/{gradescope.CONFIG}",
                      json.dumps({"name": name, **settings.as_json()}, indent=1) + "\n")
    tmp.replace(dst)
