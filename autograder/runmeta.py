"""What a grading run says about itself, handed from the engine to the report, the shards and the merge.

Written by :func:`autograder.api.grade` (and, for a merged class, :mod:`autograder.shard_merge`);
read by the report writer (the header of report.html and timings.json), stored in every shard's
result so that the merge can say how the shards ran, and read back by ``course grade``'s LMS export
(the gradebook the class was graded with). A key is absent where it does not apply.
"""
from __future__ import annotations

from typing import Any, TypedDict


class ShardRun(TypedDict):
    """One shard of a merged class, as the merge's report names it."""
    shard: int
    rows: int
    mode: str
    wall_seconds: float
    startup_seconds: float | None
    slurm: dict[str, str]
    kubernetes: dict[str, str]


class RunMeta(TypedDict, total=False):
    workers: int | None
    mode: str                          # the sandbox mode (the weakest of the shards, merged)
    mode_note: str                     # what that mode protects, in a sentence
    cgroups: str                       # "v1", "v2" or "none"
    cgroups_note: str
    warnings: list[str]                # shown at the top of the report
    wall_seconds: float
    startup_seconds: float
    grading_seconds: float
    grader_peak_memory_mb: float | None
    skipped: list[dict[str, str]]      # entries of the download left out: {"name", "rule"}
    cache: dict[str, Any]              # what --cache reused: {"reused", "partial", "fresh"}
    slurm: dict[str, str]              # where a shard ran (empty outside Slurm / Kubernetes)
    kubernetes: dict[str, str]
    gradebook: list[Any]               # the --gradebook of the shards: [path, column, export_partial]
    gradebook_conflict: str
    shards: list[ShardRun]
    merge_read_seconds: float
    merge_seconds: float
