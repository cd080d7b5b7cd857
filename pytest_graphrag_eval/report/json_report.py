"""The JSON report and the recording of live responses, written atomically.

Results arrive in completion order (and from several xdist workers); they are
kept with a sort key from their corpus position so the report is the same
however the run was scheduled.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.gates.model import GateResult
from pytest_graphrag_eval.report.atomic import write_text_atomic

REPORT_FORMAT_VERSION = 2


class ResultCollector:
    """Results and live responses keyed by their corpus order."""

    def __init__(self) -> None:
        self.results: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.responses: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add(self, order: Sequence[Any], result: dict[str, Any]) -> None:
        self.results[tuple(order)] = result

    def add_response(self, order: Sequence[Any], response: dict[str, Any]) -> None:
        self.responses[tuple(order)] = response

    def ordered_results(self) -> list[dict[str, Any]]:
        return [self.results[key] for key in sorted(self.results)]

    def ordered_responses(self) -> list[dict[str, Any]]:
        return [self.responses[key] for key in sorted(self.responses)]


def build_report(
    results: list[dict[str, Any]],
    aggregates: Mapping[str, Any],
    gates: Sequence[GateResult],
    run_settings: Mapping[str, Any],
    *,
    started: float,
    interrupted: bool,
    comparison: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """The report document: results, aggregates, gates and run metadata.

    `run_settings` is what the run was configured with (corpus, responses, judge...), as JSON values.
    """
    report: dict[str, Any] = {
        "format_version": REPORT_FORMAT_VERSION,
        "results": results,
        "aggregates": dict(aggregates),
        "gates": [gate.to_dict() for gate in gates],
        "metadata": {
            "tool": "pytest-graphrag-eval",
            "version": _version(),
            "python": platform.python_version(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "duration_sec": round(time.time() - started, 3),
            "interrupted": interrupted,
            "questions": len(results),
            **run_settings,
        },
    }
    if comparison is not None:
        report["comparison"] = dict(comparison)
    if warnings:
        report["warnings"] = list(warnings)
    return report


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON next to `path` and rename it into place, so readers never see half a file."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_recording(path: Path, responses: Sequence[Mapping[str, Any]]) -> None:
    """Live responses in the replay format: one JSON object per line (JSONL)."""
    write_text_atomic(
        path, "".join(json.dumps(response, ensure_ascii=False) + "\n" for response in responses)
    )


def _version() -> str:
    try:
        return metadata.version("pytest-graphrag-eval")
    except metadata.PackageNotFoundError:
        return "unknown"
