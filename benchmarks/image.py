"""Build the grader's image from ``Containerfile`` with Debian's podman, on a base made here by
mmdebstrap from Debian's packages (no image registry needed), and grade a small class inside it
(a benchmark, not a test: the build takes longer than CI can give it).

    .venv/bin/python benchmarks/image.py [--keep] [--pip-find-links DIR] [--pip-extra-index-url URL]

Needs root and ``apt-get install podman buildah mmdebstrap``. Steps, each timed:

1. ``mmdebstrap`` a Debian bookworm (Python 3.11) root with python3, venv, pip and certificates,
   ``podman import`` it as ``localhost/course-base:bookworm``;
2. ``podman build`` the Containerfile on it (``BASE=localhost/course-base:bookworm``; pip's
   indexes and local wheel folders mounted read-only when given);
3. checks that the image holds no answers (no solutions/, no autograder/build, no mutants);
4. grades the toy assignment's solution and blank notebooks inside the image (``podman run``, or
   where this machine cannot start a container, a chroot into the image's mounted root): the
   grades must be those the same class gets here.

Prints each step's seconds, the image's size and the grades; last, one JSON line.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE = "localhost/course-base:bookworm"
IMAGE = "localhost/course-grader:bench"
PODMAN = ["podman", "--storage-driver", "vfs"]
TOY = REPO / "tests" / "support" / "fixtures" / "00_toy"
ANSWERS = ("solutions", "autograder/build", "nbgrader", "tests")


def step(name: str, cmd: list[str], found: dict, **kw) -> subprocess.CompletedProcess:
    t = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    found[f"{name}_seconds"] = round(time.monotonic() - t, 1)
    if res.returncode != 0:
        raise SystemExit(f"{name}: {' '.join(cmd[:8])}... exit {res.returncode}\n"
                         f"{res.stdout[-3000:]}{res.stderr[-3000:]}")
    print(f"{name}: {found[f'{name}_seconds']} s")
    return res


def grades(csv_text: str) -> dict[str, str]:
    return {r["file"]: r["total_points_earned"] for r in csv.DictReader(io.StringIO(csv_text))}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser()
    p.add_argument("--keep", action="store_true", help="keep the images")
    p.add_argument("--pip-find-links", default=os.environ.get("PIP_FIND_LINKS", ""))
    p.add_argument("--pip-extra-index-url", default="")
    args = p.parse_args(argv)
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("podman", "mmdebstrap")):
        raise SystemExit("needs root and: apt-get install podman buildah mmdebstrap")
    found: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-image-") as t:
        tmp = Path(t)
        step("mmdebstrap", ["mmdebstrap", "--variant=apt", "--include=python3,python3-venv,python3-pip,"
                            "ca-certificates", "bookworm", str(tmp / "base.tar")], found)
        step("import", [*PODMAN, "import", str(tmp / "base.tar"), BASE], found)
        mounts, build_args = [], ["--build-arg", f"BASE={BASE}"]
        for links in filter(None, args.pip_find_links.split()):
            mounts += ["-v", f"{links}:{links}:ro"]
        for url in filter(None, args.pip_extra_index_url.split()):
            if url.startswith("file://"):
                mounts += ["-v", f"{url[7:].rsplit('/simple', 1)[0]}:{url[7:].rsplit('/simple', 1)[0]}:ro"]
        if args.pip_find_links:
            build_args += ["--build-arg", f"PIP_FIND_LINKS={args.pip_find_links}"]
        if args.pip_extra_index_url:
            build_args += ["--build-arg", f"PIP_EXTRA_INDEX_URL={args.pip_extra_index_url}"]
        if Path("/etc/ssl/certs/ca-certificates.crt").exists():     # a proxy's certificate, where one is used
            mounts += ["-v", "/etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro"]
        step("build", [*PODMAN, "build", "--isolation", "chroot", "--network", "host", *mounts, *build_args,
                       "-t", IMAGE, "-f", "Containerfile", "."], found, cwd=REPO)
        size = step("size", [*PODMAN, "image", "inspect", IMAGE, "--format", "{{.Size}}"], found).stdout
        found["image_mb"] = round(int(size.strip()) / 2**20)
        root = step("mount", [*PODMAN, "image", "mount", IMAGE], found).stdout.strip()
        try:
            course = Path(root) / "course"
            found["answers_in_image"] = [a for a in ANSWERS if (course / a).exists()] + \
                [str(m.relative_to(course)) for m in course.glob("autograder/assignments/*/mutants")]
            found["grades_inside"] = grade_inside(Path(root), tmp, found)
        finally:
            subprocess.run([*PODMAN, "image", "unmount", IMAGE], capture_output=True)
        found["grades_here"] = grade_here(tmp)
        found["same_grades"] = found["grades_inside"] == found["grades_here"]
        if not args.keep:
            subprocess.run([*PODMAN, "rmi", "-f", IMAGE, BASE], capture_output=True)
    print(f"image {found['image_mb']} MB; answers in it: {found['answers_in_image'] or 'none'}; "
          f"grades inside {found['grades_inside']}, here {found['grades_here']}: same {found['same_grades']}")
    print(json.dumps(found))
    return found


def small_class(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TOY / "00_toy-solution.ipynb", folder / "solution.ipynb")
    shutil.copy(TOY / "00_toy.ipynb", folder / "blank.ipynb")


def grade_inside(root: Path, tmp: Path, found: dict) -> dict[str, str]:
    """The toy class graded by the image's own grader: ``podman run`` where it can start a
    container here, else a chroot into the image's root (the same files and Python)."""
    work = root / "grading"
    small_class(work / "class")
    shutil.copytree(TOY, work / "00_toy", dirs_exist_ok=True)
    cmd = ["/course/.venv/bin/python", "-m", "course", "grade", "/grading/class", "--assignment",
           "/grading/00_toy", "--out", "/grading/out", "--workers", "1", "--no-progress", "--no-similarity"]
    try:
        step("grade_in_container", [*PODMAN, "run", "--rm", "--network", "none", "--cgroups", "disabled",
                                    "-v", f"{work}:/grading", "-w", "/course", IMAGE, *cmd], found)
        found["ran_in"] = "podman run"
    except SystemExit as exc:
        print(f"podman run could not start a container here ({str(exc)[:200]}): a chroot into the image")
        for sub in ("proc", "dev", "sys"):
            subprocess.run(["mount", "--bind", f"/{sub}", str(root / sub)], check=True)
        try:
            step("grade_in_chroot", ["chroot", str(root), "sh", "-c", "cd /course && " + " ".join(cmd)],
                 found)
        finally:
            for sub in ("sys", "dev", "proc"):
                subprocess.run(["umount", "-l", str(root / sub)])
        found["ran_in"] = "chroot into the image"
    return grades((work / "out" / "grades.csv").read_text())


def grade_here(tmp: Path) -> dict[str, str]:
    small_class(tmp / "here")
    subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "course", "grade", str(tmp / "here"),
                    "--assignment", str(TOY), "--out", str(tmp / "out-here"), "--workers", "1",
                    "--no-progress", "--no-similarity"], check=True, capture_output=True, cwd=REPO)
    return grades((tmp / "out-here" / "grades.csv").read_text())


if __name__ == "__main__":
    main()
