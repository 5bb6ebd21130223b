"""The course's notebooks come from one list, course.toml's [course] notebooks, checked when read."""
from __future__ import annotations

import pytest

from instructor import publish, registry

pytestmark = pytest.mark.unit


def _config(tmp_path, body: str):
    path = tmp_path / "course.toml"
    path.write_text(body)
    return path


def test_the_committed_list_is_the_course_in_order():
    names = registry.notebooks()
    assert names[0] == "01_no_talking" and names[-1] == "10_gpt_extension"
    assert registry.upto("03_attention") == names[:3]
    assert registry.strays() == []                     # every master listed, every listed master there


def test_the_python_3_10_reader_reads_the_same_list():
    text = publish.CONFIG.read_text()
    assert publish._read_flat_toml(text)["course"]["notebooks"] == registry.notebooks()


@pytest.mark.parametrize("body, said", [
    ("[publish]\nrepository = \"a/b\"\n", "has no [course] notebooks"),
    ("[course]\nnotebooks = \"01_a\"\n", "must be a list"),
    ("[course]\nnotebooks = []\n", "must be a list"),
    ("[course]\nnotebooks = [\"01_a\", \"1_b\"]\n", "'1_b' is not named NN_name"),
    ("[course]\nnotebooks = [\"01_a\", \"02_B\"]\n", "'02_B' is not named NN_name"),
    ("[course]\nnotebooks = [\"01_a\", \"01_a\"]\n", "'01_a' comes after one numbered 01"),
    ("[course]\nnotebooks = [\"02_a\", \"01_b\"]\n", "'01_b' comes after one numbered 02"),
    ("[course]\nnotebooks = [\"01_a\"]\ncolour = \"red\"\n", "unknown setting(s) ['colour']"),
])
def test_a_wrong_list_is_refused_with_a_sentence(tmp_path, body, said):
    with pytest.raises(publish.ConfigError) as caught:
        registry.notebooks(_config(tmp_path, body))
    assert said in str(caught.value)


def test_a_master_not_listed_and_a_listed_notebook_without_master_are_named(tmp_path):
    config = _config(tmp_path, '[course]\nnotebooks = ["01_a", "02_b"]\n')
    (tmp_path / "01_a.ipynb").write_text("{}")
    (tmp_path / "03_c.ipynb").write_text("{}")
    found = registry.strays(tmp_path, config)
    assert any("03_c.ipynb is not in course.toml" in s for s in found)
    assert any("lists 02_b" in s and "02_b.ipynb is missing" in s for s in found)


def test_course_build_refuses_a_master_the_course_does_not_list(tmp_path, monkeypatch, capsys):
    from instructor import build
    monkeypatch.setattr(registry, "SOLUTIONS", tmp_path)
    monkeypatch.setattr(registry.strays, "__defaults__", (tmp_path, None))
    for name in registry.notebooks() + ["10_stray"]:
        (tmp_path / f"{name}.ipynb").write_text("{}")
    assert build.main([]) == 2
    assert "10_stray.ipynb is not in course.toml's [course] notebooks" in capsys.readouterr().err
