"""Helpers of the history tests: reports of runs that differ over time, and store URLs of both kinds."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from synthetic_report import synthetic_report

from pytest_graphrag_eval.aggregates import compute_aggregates


@cache
def _base(questions: int) -> dict[str, Any]:
    report = synthetic_report(questions, templates=3, seed=7)
    report.pop("comparison", None)
    return report


def run_report(
    number: int,
    *,
    questions: int = 12,
    failing: Iterable[str] = (),
    corpus: str = "sha256:aaa",
    graph: str | None = None,
    shard: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Run `number` (started `number` hours into 2026): the listed question ids failed, the rest passed."""
    report = copy.deepcopy(_base(questions))
    failed = set(failing)
    for result in report["results"]:
        bad = result["question_id"] in failed
        result["outcome"] = "failed" if bad else "passed"
        result["steps_score"] = 0.0 if bad else 1.0
        result["failures"] = ["steps_score = 0, required >= 1"] if bad else []
    report["aggregates"] = compute_aggregates(report["results"])
    metadata = report["metadata"]
    metadata["started_at"] = f"2026-01-{1 + number // 24:02d}T{number % 24:02d}:00:00Z"
    metadata["corpus_files"] = [{"file": "corpus.yaml", "sha256": corpus, "questions": questions}]
    metadata["settings"] = {
        "thresholds": [["steps_score>=1", "ini"]],
        "gates": [],
        "baseline": None,
        "confidence": 0.95,
        "resamples": 2000,
    }
    if graph is not None:
        metadata["graph"] = {"files": [{"path": "grid.ttl", "sha256": graph}]}
    if shard is not None:
        index, count = shard
        ids = [r for position, r in enumerate(report["results"]) if position % count == index - 1]
        positions = [[0, position] for position in range(questions) if position % count == index - 1]
        report["results"] = ids
        metadata["shard"] = {"index": index, "count": count, "selected_by": "--graphrag-shard"}
        metadata["corpus_positions"] = {"results": positions, "unanswered": []}
        report["gates"] = []
        report["aggregates"] = compute_aggregates(ids)
    return report


def without_times(document: Any) -> Any:
    """A CLI --json document with the recording time (which differs between two stores) left out."""
    text = json.dumps(document, sort_keys=True)
    data = json.loads(text)

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items() if key != "recorded_at"}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return strip(data)


def pytest_run(cwd: Path, *arguments: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m pytest ARGUMENTS` in `cwd`, as CI runs it: no CI or PostgreSQL variables of ours leak in."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "CI", "PG"))}
    if home is not None:
        environ["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environ,
    )
