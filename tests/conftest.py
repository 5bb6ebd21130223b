import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside the clone, or where `make test SHARED=...` says it is
SHARED = Path(os.environ.get("COURSE_SHARED") or ROOT.parent / "shared")
SHARED_TRAIN = SHARED / "data" / "tinystories" / "TinyStories-train-first2MiB.txt"

torch.set_num_threads(1)


@pytest.fixture
def shared_stories(monkeypatch):
    """The genuine TinyStories text in ../shared, as the stories of the course."""
    if not SHARED_TRAIN.exists():
        pytest.skip(f"{SHARED}/data/tinystories is not here")
    monkeypatch.setenv("COURSE_STORIES_FILE", str(SHARED_TRAIN))
    from course import stories
    stories._world.cache_clear()
    yield stories
    stories._world.cache_clear()


def pytest_collection_modifyitems(items):
    """A test not marked e2e is a unit test: `-m unit` and `-m e2e` split the suite in two."""
    for item in items:
        if item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


os.environ.setdefault("MPLBACKEND", "Agg")
