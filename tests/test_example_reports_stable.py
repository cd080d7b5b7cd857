"""The example project's JSON reports keep every value they had when these snapshots were taken.

The snapshots under tests/data/example_reports/ were written before the package
was split into layers; a refactoring must leave them unchanged, with and without
xdist. New report keys may be added (new metrics add keys, they never change old
ones), so only the snapshot's keys are compared. Timings and paths are left out.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "data" / "example_reports"
VOLATILE = frozenset({"started_at", "duration_sec", "elapsed_sec"})


def _kept(snapshot: Any, actual: Any, where: str = "report") -> list[str]:
    """Where `actual` lost or changed a value that `snapshot` has."""
    if isinstance(snapshot, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object"]
        problems = []
        for key, value in snapshot.items():
            if key not in actual:
                problems.append(f"{where}.{key}: missing")
            else:
                problems += _kept(value, actual[key], f"{where}.{key}")
        return problems
    if isinstance(snapshot, list):
        if not isinstance(actual, list) or len(actual) != len(snapshot):
            return [f"{where}: expected a list of {len(snapshot)}"]
        return [
            p
            for i, (s, a) in enumerate(zip(snapshot, actual, strict=True))
            for p in _kept(s, a, f"{where}[{i}]")
        ]
    if isinstance(snapshot, float) and isinstance(actual, float):
        # Python 3.12 made sum() of floats compensated, so sums may differ in the last bits across versions.
        same = math.isclose(snapshot, actual, rel_tol=1e-12, abs_tol=1e-15)
    else:
        same = snapshot == actual
    return [] if same else [f"{where}: {snapshot!r} became {actual!r}"]


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_volatile(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(item) for item in value]
    return value


@pytest.mark.parametrize("workers", [None, "2"], ids=["serial", "xdist"])
@pytest.mark.parametrize(
    ("snapshot", "responses"),
    [("recorded.json", "responses.jsonl"), ("regression.json", "regression.jsonl")],
)
def test_example_report_matches_snapshot(
    tmp_path: Path, snapshot: str, responses: str, workers: str | None
) -> None:
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pytest", "example_project", "-q", "-p", "no:cacheprovider"]
    command += [
        "--graphrag-responses",
        f"example_project/recordings/{responses}",
        "--graphrag-report",
        str(report),
    ]
    if workers:
        command += ["-n", workers]
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    expected = json.loads((SNAPSHOTS / snapshot).read_text(encoding="utf-8"))
    actual = _without_volatile(json.loads(report.read_text(encoding="utf-8")))
    assert _kept(expected, actual) == []
