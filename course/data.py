"""The TinyStories text: download once (the first 4,000,000 bytes), cache, verify.

Where the text comes from, in order:
1. the file named by the environment variable COURSE_STORIES_FILE, if set;
2. the cache, data_cache/tinystories-4MB.txt, if its manifest (size and sha256) matches;
3. a download of the first 4,000,000 bytes of TinyStoriesV2-GPT4-valid.txt with an HTTP
   range request (a server that ignores the range is read only that far), written to the
   cache atomically together with its manifest.

Without the internet, put a copy of the text into the cache once:
``python -m course.data --from FILE`` (``course data --from FILE`` on the instructor's side).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

URL = ("https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
       "TinyStoriesV2-GPT4-valid.txt")
NBYTES = 4_000_000
CACHE_NAME = "tinystories-4MB.txt"
ENV_FILE = "COURSE_STORIES_FILE"
ENV_CACHE = "COURSE_DATA_CACHE"
ENV_URL = "COURSE_STORIES_URL"


class StoriesUnavailable(RuntimeError):
    """The stories could not be found locally nor downloaded."""


def cache_dir() -> Path:
    """data_cache/ beside the course package (or $COURSE_DATA_CACHE)."""
    return Path(os.environ.get(ENV_CACHE) or Path(__file__).resolve().parent.parent / "data_cache")


def _manifest_path(path: Path) -> Path:
    return path.with_suffix(".json")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)           # mkstemp makes it private; the grader's sandbox must read it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_to_cache(data: bytes, source: str, directory: Path | None = None) -> Path:
    """Write text and its manifest (source, size, sha256) into the cache, atomically."""
    path = (directory or cache_dir()) / CACHE_NAME
    manifest = {"source": source, "bytes": len(data), "sha256": _sha256(data)}
    _write_atomic(path, data)
    _write_atomic(_manifest_path(path), (json.dumps(manifest, indent=1) + "\n").encode())
    return path


def check_cache(path: Path) -> str | None:
    """None if the cached file matches its manifest, else what is wrong with it."""
    manifest_file = _manifest_path(path)
    if not manifest_file.exists():
        return f"{manifest_file.name} (its size and checksum) is missing"
    try:
        manifest = json.loads(manifest_file.read_text())
        size, digest = int(manifest["bytes"]), str(manifest["sha256"])
    except (ValueError, KeyError, TypeError):
        return f"{manifest_file.name} is not a valid manifest"
    data = path.read_bytes()
    if len(data) != size:
        return f"it has {len(data):,} bytes but should have {size:,} (truncated?)"
    if _sha256(data) != digest:
        return "its sha256 checksum does not match (corrupt?)"
    return None


def download(url: str = URL, nbytes: int = NBYTES, timeout: float = 60.0) -> bytes:
    """The first `nbytes` of `url`, asked for with a range request and cut there in any case."""
    import requests  # imported here so that importing the course stays fast

    headers = {"Range": f"bytes=0-{nbytes - 1}"}
    with requests.get(url, headers=headers, stream=True, timeout=timeout) as response:
        response.raise_for_status()
        chunks, got = [], 0
        for chunk in response.iter_content(chunk_size=1 << 16):
            chunks.append(chunk)
            got += len(chunk)
            if got >= nbytes:          # the server ignored the range: stop reading here
                break
    data = b"".join(chunks)[:nbytes]
    if not data:
        raise StoriesUnavailable(f"{url} returned no data")
    return data


def load_text(verbose: bool = True) -> str:
    """The stories as one string (see the module docstring for where it comes from)."""
    named = os.environ.get(ENV_FILE)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise StoriesUnavailable(f"{ENV_FILE}={named} but there is no such file")
        return path.read_bytes()[:NBYTES].decode("utf-8", errors="ignore")

    path = cache_dir() / CACHE_NAME
    problem = None
    if path.exists():
        problem = check_cache(path)
        if problem is None:
            return path.read_bytes().decode("utf-8", errors="ignore")
        if verbose:
            print(f"Ignoring the cached stories {path}: {problem}. Downloading them again.")

    url = os.environ.get(ENV_URL, URL)
    try:
        data = download(url, NBYTES)
    except Exception as error:   # no network, HTTP error, ...
        why = f"the cached copy is unusable ({problem}) and " if problem else ""
        raise StoriesUnavailable(
            f"Could not get the TinyStories text: {why}the download failed ({error}).\n"
            f"Either connect to the internet, or download\n    {url}\n"
            f"(its first {NBYTES:,} bytes are enough) and save it as\n    {path}\n"
            f"or point the environment variable {ENV_FILE} at a TinyStories text file."
        ) from error
    save_to_cache(data, url, path.parent)
    if verbose:
        print(f"Saved {len(data):,} bytes of TinyStories to {path}")
    return data.decode("utf-8", errors="ignore")


def main(argv: list[str] | None = None, prog: str = "python -m course.data") -> int:
    """Put a local TinyStories text file (its first 4,000,000 bytes) into the data cache."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog=prog,
                                     description="Put a TinyStories text file into the data cache.")
    parser.add_argument("--from", dest="source", type=Path, required=True)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.source.is_file():
        parser.error(f"no such file: {args.source}")
    data = args.source.read_bytes()[:NBYTES]
    path = save_to_cache(data, f"local file {args.source.name}", cache_dir())
    print(f"cached {len(data):,} bytes from {args.source} as {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
