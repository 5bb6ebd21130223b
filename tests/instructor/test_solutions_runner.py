"""`course solutions`: choosing notebooks, running them headless, reporting failures."""
from __future__ import annotations

import json

import nbformat
import pytest

from instructor import solutions
from instructor.solutions import FindNotebooks, Outcome, Report


def _notebook(path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# title")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture
def folder(tmp_path):
    for name in ["01_no_talking", "02_with_position", "03_attention", "10_extra"]:
        _notebook(tmp_path / f"{name}.ipynb", "x = 1")
    (tmp_path / "notes.ipynb").write_text("{}")           # not NN_name: never run
    (tmp_path / "course.toml").write_text('[course]\nnotebooks = ["01_no_talking", "02_with_position", '
                                          '"03_attention", "10_extra"]\n')
    return tmp_path


def test_all_notebooks_in_course_order(folder):
    assert [p.stem for p in FindNotebooks([], folder, folder / "course.toml")] == [
        "01_no_talking", "02_with_position", "03_attention", "10_extra"]


@pytest.mark.parametrize("name", ["03_attention", "03", "3", "attention", "03_attention.ipynb"])
def test_a_notebook_by_stem_number_or_part_of_its_name(folder, name):
    assert [p.stem for p in FindNotebooks([name], folder, folder / "course.toml")] == ["03_attention"]


def test_chosen_notebooks_run_in_course_order_once(folder):
    chosen = FindNotebooks(["attention", "01", str(folder / "03_attention.ipynb")], folder,
                            folder / "course.toml")
    assert [p.stem for p in chosen] == ["01_no_talking", "03_attention"]


@pytest.mark.parametrize("name", ["07", "softmax", "_"])
def test_unknown_or_ambiguous_names_are_refused(folder, name):
    with pytest.raises(ValueError, match="solution notebook"):
        FindNotebooks([name], folder, folder / "course.toml")


def test_bad_names_and_empty_folders_exit_2(folder, tmp_path_factory, capsys):
    assert solutions.main(["--solutions", str(folder), "--config", str(folder / "course.toml"),
                           "nonexistent"]) == 2
    empty = tmp_path_factory.mktemp("empty")
    assert solutions.main(["--solutions", str(empty)]) == 2
    assert "no solution notebooks" in capsys.readouterr().err


def test_report_names_the_cell_and_the_error():
    outcome = Outcome(notebook="03_attention", ok=False, seconds=1.0, executed="x.ipynb",
                      failed_cell=4, error="AssertionError: rows don't sum to one",
                      traceback="Traceback\n  line\nAssertionError: rows don't sum to one",
                      cell_source="w = Attention(q, k, v)\nassert ok")
    text = Report(outcome)
    assert "03_attention" in text and "cell 4" in text and "assert ok" in text
    assert "AssertionError: rows don't sum to one" in text


@pytest.mark.e2e
def test_runs_notebooks_writes_copies_and_reports_the_failing_cell(tmp_path, monkeypatch, capsys):
    """One kernel per notebook: a good one (in quick mode) and one that fails in its third cell."""
    monkeypatch.delenv("COURSE_QUICK", raising=False)
    src, out = tmp_path / "solutions", tmp_path / "out"
    src.mkdir()
    _notebook(src / "01_good.ipynb",
              "import os\nfrom course.training import Steps\nprint('QUICK', os.environ.get('COURSE_QUICK'))",
              "print('STEPS', Steps(1500))")
    _notebook(src / "02_bad.ipynb", "x = 1", "y = x + 1", "assert y == 3, 'y should be three'",
              "print('never here')")

    (src / "course.toml").write_text('[course]\nnotebooks = ["01_good", "02_bad"]\n')
    status = solutions.main(["--solutions", str(src), "--config", str(src / "course.toml"), "--out", str(out),
                             "--quick"])
    printed = capsys.readouterr()
    assert status == 1
    text = printed.out + printed.err
    assert "02_bad" in text and "AssertionError: y should be three" in text and "cell 3" in text
    for stem in ["01_good", "02_bad"]:
        assert (out / f"{stem}.ipynb").exists() and (out / f"{stem}.html").stat().st_size > 1000
    good = nbformat.read(out / "01_good.ipynb", as_version=4)
    outputs = "".join(o.get("text", "") for cell in good.cells if cell.cell_type == "code"
                      for o in cell.outputs)
    assert "QUICK 1" in outputs and "STEPS 200" in outputs          # quick mode reached the kernel
    summary = json.loads((out / "summary.json").read_text())
    assert summary["quick"] is True and summary["ok"] is False
    assert [(n["notebook"], n["ok"], n["failed_cell"]) for n in summary["notebooks"]] == [
        ("01_good", True, None), ("02_bad", False, 3)]
    import os
    assert "COURSE_QUICK" not in os.environ                        # the caller's environment is restored


def test_a_master_the_course_does_not_list_is_refused(folder):
    """`course solutions` runs what the course lists, and says so when a master is not listed."""
    _notebook(folder / "11_stray.ipynb", "x = 1")
    with pytest.raises(ValueError, match="11_stray.ipynb is not in course.toml"):
        FindNotebooks([], folder, folder / "course.toml")
