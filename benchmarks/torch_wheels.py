"""What the Gradescope image downloads for torch: the CUDA build from PyPI against the CPU build.

    .venv/bin/python benchmarks/torch_wheels.py [--version 2.13.0] [--python 3.13]

Reads PyPI's JSON API (https://pypi.org/pypi/NAME/json) and the wheels' metadata files (PEP 658,
``WHEEL.whl.metadata``), follows torch's Linux-only requirements (the CUDA libraries, triton) as pip
would for CPython 3.13 on x86_64 Linux, and adds up the sizes of the wheels pip would download. The
requirements both builds share (sympy, networkx, jinja2, ...) are left out: they are the same in
both images. The CPU wheel's size is read from download.pytorch.org/whl/cpu when it can be reached,
else from a local wheel given with ``--cpu-wheel`` (its Python version is printed beside it).
The last line is one JSON object. Wheel sizes are compressed download sizes; installed, they are
about 1.5-2.5 times larger.
"""
from __future__ import annotations

import argparse
import json
import re
import urllib.parse
import urllib.request
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

PYPI = "https://pypi.org/pypi/{name}/json"
CPU_INDEX = "https://download.pytorch.org/whl/cpu/torch/"
TIMEOUT = 60
_projects: dict[str, dict] = {}


def project(name: str) -> dict:
    name = canonicalize_name(name)
    if name not in _projects:
        with urllib.request.urlopen(PYPI.format(name=name), timeout=TIMEOUT) as r:
            _projects[name] = json.load(r)
    return _projects[name]


def _wheel_ok(filename: str, py: str) -> bool:
    tag = f"cp{py.replace('.', '')}"
    if not filename.endswith(".whl"):
        return False
    if filename.endswith("-none-any.whl"):
        return True
    return "x86_64" in filename and "manylinux" in filename \
        and (f"-{tag}-" in filename or "-py3-none-" in filename)


def pick(name: str, spec: SpecifierSet, py: str) -> tuple[str, dict] | None:
    """The newest release matching ``spec`` with a Linux x86_64 wheel for ``py``: (version, file)."""
    releases = project(name)["releases"]
    versions = []
    for v, files in releases.items():
        try:
            ver = Version(v)
        except InvalidVersion:
            continue
        if ver.is_prerelease or ver not in spec:
            continue
        wheels = [f for f in files if _wheel_ok(f["filename"], py)]
        if wheels:
            versions.append((ver, wheels[0]))
    if not versions:
        return None
    ver, f = max(versions, key=lambda x: x[0])
    return str(ver), f


def requirements(name: str, file: dict) -> list[str]:
    """Requires-Dist of one wheel, from its PEP 658 metadata file."""
    url = urllib.parse.urljoin(PYPI.format(name=canonicalize_name(name)), file["url"]) + ".metadata"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            text = r.read().decode()
    except OSError as exc:
        print(f"  (no metadata for {file['filename']}: {exc}; its requirements not followed)")
        return []
    return [line.split(":", 1)[1].strip() for line in text.splitlines()
            if line.startswith("Requires-Dist:")]


def linux_only(reqs: list[str], py: str, extras: set[str]) -> list[Requirement]:
    """The requirements that apply on Linux but not on macOS (what the CUDA build adds)."""
    out = []
    for text in reqs:
        req = Requirement(text)
        if req.marker is None:
            continue
        env = {"python_version": py, "python_full_version": py + ".0", "platform_machine": "x86_64",
               "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
               "implementation_name": "cpython", "platform_python_implementation": "CPython"}
        on_linux = any(req.marker.evaluate({**env, "extra": e}) for e in extras | {""})
        on_mac = any(req.marker.evaluate({**env, "sys_platform": "darwin", "platform_system": "Darwin",
                                           "extra": e}) for e in extras | {""})
        if on_linux and not on_mac:
            out.append(req)
    return out


def all_applying(reqs: list[str], py: str, extras: set[str]) -> list[Requirement]:
    env = {"python_version": py, "python_full_version": py + ".0", "platform_machine": "x86_64",
           "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython"}
    out = []
    for text in reqs:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in extras | {""}):
            out.append(req)
    return out


def cuda_closure(version: str, py: str) -> list[tuple[str, str, str, int]]:
    """(name, version, wheel, bytes) of every wheel the CUDA build of torch adds on Linux."""
    found = pick("torch", SpecifierSet(f"=={version}"), py)
    if found is None:
        raise SystemExit(f"no Linux x86_64 wheel of torch {version} for Python {py} on PyPI")
    seen: dict[str, tuple[str, str, str, int]] = {}
    queue = linux_only(requirements("torch", found[1]), py, set())
    while queue:
        req = queue.pop(0)
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        hit = pick(name, req.specifier, py)
        if hit is None:
            seen[name] = (name, "?", "no wheel found", 0)
            continue
        ver, f = hit
        seen[name] = (name, ver, f["filename"], int(f["size"]))
        for sub in all_applying(requirements(name, f), py, set(req.extras)):
            if canonicalize_name(sub.name) not in seen and canonicalize_name(sub.name) not in SHARED:
                queue.append(sub)
    return sorted(seen.values())


# Requirements of the CUDA packages that a CPU image has anyway (or that are tiny pure-Python).
SHARED = {"setuptools", "typing-extensions", "filelock", "packaging", "numpy", "pywin32"}


def cpu_wheel_size(version: str, py: str, local: Path | None) -> tuple[int | None, str]:
    tag = f"cp{py.replace('.', '')}"
    want = re.compile(rf"torch-{re.escape(version)}%2Bcpu-{tag}-{tag}-manylinux[^\"#]*x86_64\.whl")
    try:
        with urllib.request.urlopen(CPU_INDEX, timeout=TIMEOUT) as r:
            page = r.read().decode()
        m = want.search(page)
        if m:
            url = urllib.parse.urljoin(CPU_INDEX, m.group(0))
            req = urllib.request.Request(url, method="HEAD")
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                return int(r.headers["Content-Length"]), f"download.pytorch.org: {m.group(0)}"
    except OSError as exc:
        reason = f"download.pytorch.org not reachable ({type(exc).__name__})"
    else:
        reason = "download.pytorch.org lists no such wheel"
    if local is not None and local.is_file():
        return local.stat().st_size, f"{reason}; local wheel {local.name}"
    return None, reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", default="2.13.0")
    parser.add_argument("--python", default="3.13")
    parser.add_argument("--cpu-wheel", type=Path, help="a local torch CPU wheel to measure if "
                        "download.pytorch.org cannot be reached")
    args = parser.parse_args(argv)
    torch = pick("torch", SpecifierSet(f"=={args.version}"), args.python)
    assert torch is not None
    torch_bytes = int(torch[1]["size"])
    extra = cuda_closure(args.version, args.python)
    print(f"PyPI torch {args.version} ({torch[1]['filename']}): {torch_bytes / 1e6:,.0f} MB")
    for name, ver, wheel, size in extra:
        print(f"  + {name} {ver}: {size / 1e6:,.0f} MB ({wheel})")
    cuda_total = torch_bytes + sum(s for *_, s in extra)
    cpu, source = cpu_wheel_size(args.version, args.python, args.cpu_wheel)
    print(f"CUDA build from PyPI, torch and what it adds: {cuda_total / 1e6:,.0f} MB of wheels")
    print(f"CPU build: {'unknown' if cpu is None else f'{cpu / 1e6:,.0f} MB'} ({source})")
    print(json.dumps({"torch": args.version, "python": args.python, "pypi_torch_bytes": torch_bytes,
                      "cuda_extra_bytes": sum(s for *_, s in extra), "cuda_total_bytes": cuda_total,
                      "cpu_wheel_bytes": cpu, "cpu_source": source,
                      "cuda_packages": [{"name": n, "version": v, "bytes": s} for n, v, _, s in extra]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
