"""The `course` command: one verb per job, clear errors."""
import subprocess
import sys

from course import data
from instructor.cli import main


def test_help_lists_every_verb(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for verb in ("build", "grade", "solutions", "release", "data"):
        assert f"course {verb}" in text


def test_unknown_verb_fails_clearly(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_build_rejects_unknown_notebooks():
    out = subprocess.run([sys.executable, "-m", "course", "build", "09_nope"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "unknown notebook" in out.stderr


def test_data_from_a_local_file(tmp_path, monkeypatch):
    source = tmp_path / "stories.txt"
    source.write_text("Once upon a time.\n<|endoftext|>\n")
    monkeypatch.setenv(data.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(data.ENV_FILE, raising=False)
    assert main(["data", "--from", str(source)]) == 0
    cached = tmp_path / "cache" / data.CACHE_NAME
    assert cached.read_text() == source.read_text()
    assert data.check_cache(cached) is None
    assert data.load_text(verbose=False) == source.read_text()
