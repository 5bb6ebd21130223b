"""course build rebuilds only what is stale (instructor/stamps.py): a notebook whose inputs and
built files are as its last build left them is not built again; a change to its master, to an
earlier master's reference cells, or to one of its built files makes it stale, and says which."""
from __future__ import annotations

import pytest

from instructor import build, masters, stamps, test_files

# builds into the repository and edits a built file for a moment: with the end-to-end half, which
# reads the built files, and not beside it (`make test` runs the unit half alongside)
pytestmark = pytest.mark.e2e

NAME = "03_attention"


def _fresh() -> None:
    build.build([NAME])                                  # nothing to do when it is up to date
    assert stamps.stale(NAME) is None


def test_a_built_notebook_is_fresh_and_a_second_build_builds_nothing():
    _fresh()
    built = []
    assert build.build([NAME], report=lambda name, why: built.append(name)) == [] and built == []


def test_a_built_file_changed_by_hand_makes_its_notebook_stale():
    _fresh()
    path = build.ROOT / "notebooks" / "tests" / NAME / "q1.py"
    text = path.read_text()
    try:
        path.write_text(text + "\n")
        assert stamps.stale(NAME) == "a built file is not what its last build wrote"
    finally:
        path.write_text(text)
    assert stamps.stale(NAME) is None


def test_the_master_and_the_build_code_are_inputs(monkeypatch):
    _fresh()
    real = stamps.inputs(NAME)
    for kind in ("master", "build code", "course package", "tools"):
        monkeypatch.setattr(stamps, "inputs", lambda name, kind=kind: {**real, kind: "other"})
        assert stamps.stale(NAME) == f"its {kind} changed"


def test_an_earlier_masters_reference_cells_reach_the_later_masters():
    # the given-earlier cell of a later master holds the earlier reference cells, so a change to them
    # changes the later master's own bytes, which are its input
    later = masters.read_master("04_head")
    given = next(c for c in later.cells if "given-earlier" in masters.cell_tags(c))
    assert all(code in given.source for code in masters.reference_code(NAME))
    assert stamps.inputs("04_head")["master"] == stamps._digest([masters.SOLUTIONS / "04_head.ipynb"])


def test_the_graders_test_files_are_the_cells_as_written():
    nb = masters.read_master(NAME)
    cells = test_files.test_cells(nb)
    written = (build.ASSIGNMENTS / NAME / "tests" / "q1.py").read_text()
    for source in cells["q1"]:
        body = source.split("# END TEST CONFIG\n", 1)[1].rsplit("\n", 1)[0]
        assert body in written
