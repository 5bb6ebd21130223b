"""Publishing: course.toml is the one place the course's address lives; the build writes it into
the setup cells, the Colab badges and README's table; `course release` names what it releases."""
import shutil
import zipfile

import nbformat
import pytest

from instructor import build, cli, masters, publish, release

ROOT = build.ROOT
NAMES = release.built_names()


def _config(tmp_path, body: str):
    path = tmp_path / "course.toml"
    path.write_text(body)
    return path


def test_config_defaults_and_addresses(tmp_path):
    settings = publish.load(_config(tmp_path, '[publish]\nrepository = "uni-x/tfs-2026"\n'))
    assert settings.bundle == "https://raw.githubusercontent.com/uni-x/tfs-2026/main/course-student.zip"
    assert settings.colab("03_attention") == ("https://colab.research.google.com/github/uni-x/tfs-2026/"
                                              "blob/main/notebooks/03_attention.ipynb")
    moved = publish.load(_config(tmp_path, '[publish]\nrepository = "a/b"\nbranch = "fall"\n'
                                           'bundle_url = "https://example.org/c.zip"  # own server\n'))
    assert moved.bundle == "https://example.org/c.zip"
    assert "/a/b/blob/fall/notebooks/01_no_talking.ipynb" in moved.badge("01_no_talking")


@pytest.mark.parametrize("body, says", [
    ('[publish]\nrepository = "https://github.com/a/b"\n', "owner/name"),
    ('[publish]\nrepository = "a/b"\nbundle_url = "ftp://x/y.zip"\n', "bundle_url"),
    ('[publish]\nrepository = "a/b"\nrepo = "a/c"\n', "unknown"),
    ('[publsh]\nrepository = "a/b"\n', "[publish]"),
    ('[publish]\nrepository = a/b\n', "TOML"),
])
def test_config_errors_say_what_is_wrong(tmp_path, body, says):
    with pytest.raises(publish.ConfigError, match=rf".*{__import__('re').escape(says)}"):
        publish.load(_config(tmp_path, body))


def test_gradescope_visibility_defaults_and_settings(tmp_path):
    """[gradescope] is optional: Gradescope's results wait for Publish Grades, the public tests'
    summary is visible at once; each may be any of Gradescope's four values."""
    plain = _config(tmp_path, '[publish]\nrepository = "a/b"\n')
    assert publish.gradescope(plain) == publish.Gradescope("after_published", "visible")
    for value in publish.VISIBILITIES:
        path = _config(tmp_path, f'[publish]\nrepository = "a/b"\n[gradescope]\nvisibility = "{value}"\n'
                                 'public_visibility = "after_due_date"  # with the answers\n')
        assert publish.gradescope(path) == publish.Gradescope(value, "after_due_date")
        assert publish.load(path).repository == "a/b"              # one file, both tables
    assert publish.gradescope().visibility in publish.VISIBILITIES        # the committed course.toml


@pytest.mark.parametrize("body, says", [
    ('[gradescope]\nvisibility = "after_grading"\n',
     "one of hidden, after_due_date, after_published, visible"),
    ('[gradescope]\npublic_visibility = "shown"\n', "public_visibility must be one of"),
    ('[gradescope]\nshow_total = "yes"\n', "unknown setting"),
    ('gradescope = "visible"\n', "must be a table"),
])
def test_gradescope_errors_say_what_is_wrong(tmp_path, body, says):
    with pytest.raises(publish.ConfigError, match=__import__("re").escape(says)):
        publish.gradescope(_config(tmp_path, body + '[publish]\nrepository = "a/b"\n'))


def test_the_committed_build_follows_course_toml():
    """What `course build --check` guards, stated directly: every student notebook opens with its
    badge, its setup cell downloads from the configured address, README has the table."""
    settings = publish.load()
    for name in NAMES:
        nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source == settings.badge(name)
        setup = next(c.source for c in nb.cells if "setup" in c.metadata.get("tags", []))
        assert f'COURSE_URL = "{settings.bundle}"' in setup
    readme = (ROOT / "README.md").read_text()
    assert publish.badge_table(settings, build.masters()) in readme
    assert publish.with_badge_table(readme, settings, build.masters()) == readme
    for path in sorted((ROOT / "nbgrader" / "source").glob("*/*.ipynb")):   # a hub is not Colab
        assert "colab-badge.svg" not in path.read_text(), path


def test_moving_the_course_is_an_edit_of_course_toml(tmp_path, monkeypatch):
    """prepare_master takes the address from course.toml alone: a new repository moves the badge and
    the setup cell's download, and the nbgrader course has no Colab badge."""
    name = build.masters()[0]
    monkeypatch.setattr(publish, "CONFIG", _config(tmp_path, '[publish]\nrepository = "uni-x/tfs"\n'))
    monkeypatch.setattr(masters, "SOLUTIONS", tmp_path / "solutions")    # where masters are read and written
    (tmp_path / "solutions").mkdir()
    master = nbformat.read(ROOT / "solutions" / f"{name}.ipynb", as_version=4)
    master.cells = [c for c in master.cells if "colab" not in c.metadata.get("tags", [])]   # as before
    nbformat.write(master, tmp_path / "solutions" / f"{name}.ipynb")
    assert build.prepare_master(name)
    cells = build.read_master(name).cells
    assert cells[0].cell_type == "raw" and "ASSIGNMENT CONFIG" in cells[0].source
    assert cells[1].metadata["tags"] == ["colab"]
    assert "github/uni-x/tfs/blob/main/notebooks/" in cells[1].source
    setup = next(c.source for c in cells if "setup" in c.metadata.get("tags", []))
    assert 'COURSE_URL = "https://raw.githubusercontent.com/uni-x/tfs/main/course-student.zip"' in setup
    assert not build.prepare_master(name), "a second run must change nothing"


def test_readme_table_needs_its_markers():
    settings = publish.load()
    with pytest.raises(publish.ConfigError, match="markers"):
        publish.with_badge_table("# no table here\n", settings, NAMES)
    text = f"before\n{publish.TABLE_START}\nold\n{publish.TABLE_END}\nafter\n"
    once = publish.with_badge_table(text, settings, NAMES[:2])
    assert once.startswith("before\n") and once.endswith("after\n") and "old" not in once
    assert once.count("colab-badge.svg") == 2
    assert publish.with_badge_table(once, settings, NAMES[:2]) == once


@pytest.mark.parametrize("upto", ["3", "attention", "99", "03_atention", "03", "03_attention.ipynb"])
def test_release_upto_must_name_a_notebook_exactly(tmp_path, capsys, upto):
    out = tmp_path / "public"
    assert cli.main(["release", str(out), "--upto", upto]) == 2
    err = capsys.readouterr().err
    assert repr(upto) in err and all(name in err for name in NAMES)
    assert not out.exists()


def test_release_without_upto_or_all_refuses(tmp_path, capsys):
    assert cli.main(["release", str(tmp_path / "public")]) == 2
    err = capsys.readouterr().err
    assert "--upto" in err and "--all" in err
    assert not (tmp_path / "public").exists()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["release", str(tmp_path / "public"), "--upto", NAMES[0], "--all"])
    assert exit_.value.code == 2


def test_release_upto_writes_the_public_tree(tmp_path, capsys):
    out = tmp_path / "public"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert cli.main(["release", str(out), "--all"]) == 0
    capsys.readouterr()
    assert cli.main(["release", str(out), "--upto", "03_attention"]) == 0   # a smaller one after
    printed = capsys.readouterr().out
    assert "This release gives away the answers of 2 earlier notebook(s)" in printed
    assert "01_no_talking: TrainTwoSentences" in printed and "02_with_position: WithPosition" in printed
    assert "03_attention:" not in printed and "WARNING" not in printed
    shipped = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert ".git/HEAD" in shipped, "the public clone's own files are kept"
    notebooks = [p for p in shipped if p.startswith("notebooks/") and p.endswith(".ipynb")]
    assert notebooks == [f"notebooks/{n}.ipynb" for n in NAMES[:3]]
    tests = {p.split("/")[2] for p in shipped if p.startswith("notebooks/tests/")}
    assert tests == set(NAMES[:3])
    assert "course/__init__.py" in shipped and "course-student.zip" in shipped
    assert "course/__main__.py" not in shipped and "course/tinydenoiser.py" not in shipped
    assert not any(p.startswith(("solutions/", "autograder/", "nbgrader/")) for p in shipped)
    readme = (out / "README.md").read_text()
    assert readme.count("colab-badge.svg") == 3 and publish.load().colab("03_attention") in readme
    bundle = zipfile.ZipFile(out / "course-student.zip")
    in_zip = sorted(n for n in bundle.namelist() if n != "README.md")
    assert in_zip == sorted(p for p in shipped if not p.startswith(".git/") and p not in
                            ("README.md", "course-student.zip"))
    assert bundle.read("README.md").decode() == readme


def test_release_all_says_what_it_gives_away(tmp_path, capsys):
    assert cli.main(["release", str(tmp_path / "public"), "--all"]) == 0
    printed = capsys.readouterr().out
    assert "WARNING: releasing every notebook gives away" in printed
    assert "This release gives away" not in printed               # nothing counts as done
    found = release.given_away(NAMES)
    for name in NAMES[:-1]:                                      # each in the GIVEN cells of the next
        defined = list(dict.fromkeys(f.answer.name for f in found if f.answer.notebook == name))
        assert defined and f"  {name}: {', '.join(defined)}" in printed
    assert "08_causal: Attention, Block, Head, MultiHead, MyTransformer, WriteLeftToRight" in printed
    assert "in course/tinydenoiser.py (AllHeads holds Attention, DenoiserBlock holds Block" in printed


def test_release_refuses_the_private_repository(tmp_path, capsys):
    private = tmp_path / "clone"
    shutil.copytree(ROOT / "notebooks", private / "notebooks")
    (private / "solutions").mkdir()
    assert cli.main(["release", str(private), "--upto", NAMES[0]]) == 2
    assert "private repository" in capsys.readouterr().err
    assert (private / "notebooks" / f"{NAMES[-1]}.ipynb").exists(), "nothing removed"
    assert cli.main(["release", str(ROOT), "--upto", NAMES[0]]) == 2
