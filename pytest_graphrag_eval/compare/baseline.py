"""Read and check the JSON report of an earlier run before comparing against it.

A baseline written by report format_version 1 is refused with a message to
regenerate it: version 1 records no per-question outcome, so regressions (passed
then, failing now) cannot be told, and a comparison without them would look
clean while hiding exactly what it is for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.compare.classify import OUTCOMES, question_key
from pytest_graphrag_eval.corpus.input_files import read_input_text
from pytest_graphrag_eval.errors import InputError, SourceLocation

MIN_FORMAT_VERSION = 2


def load_baseline(path: str | Path) -> dict[str, Any]:
    """The report at `path`, checked by `check_report`; an `InputError` naming the file otherwise."""
    # Bounded and encoding-checked like every user file: a baseline is an artifact of another run.
    text = read_input_text(path, what="baseline report")
    try:
        report = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"the baseline report is not JSON: {error.msg} (column {error.colno})",
            SourceLocation(file=str(path), line=error.lineno),
        ) from None
    check_report(report, str(path))
    return dict(report)


def check_report(report: Any, source: str) -> None:
    """Raise `InputError` unless `report` is a format_version>=2 report with well-formed results."""
    location = SourceLocation(file=source)
    if not isinstance(report, Mapping) or "results" not in report or "format_version" not in report:
        raise InputError(
            "not a pytest-graphrag-eval JSON report (no `format_version` or `results`)", location
        )
    version = report["format_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError("`format_version` must be an integer", location, "format_version")
    if version < MIN_FORMAT_VERSION:
        raise InputError(
            f"the baseline was written with report format_version {version}, which records no "
            "per-question outcome; regenerate it with this version of pytest-graphrag-eval "
            f"(format_version {MIN_FORMAT_VERSION} or later)",
            location,
            "format_version",
        )
    check_results(report["results"], source)


def check_results(results: Any, source: str) -> None:
    """Each result is a mapping with a template id, a question id and a known outcome; no duplicates."""
    if not isinstance(results, list):
        raise InputError("`results` must be a list", SourceLocation(file=source), "results")
    seen: set[tuple[str, str]] = set()
    for index, result in enumerate(results):
        if not isinstance(result, Mapping):
            raise InputError(f"results[{index}] is not an object", SourceLocation(file=source), "results")
        for field in ("template_id", "question_id"):
            if not isinstance(result.get(field), str):
                raise InputError(
                    f"results[{index}] has no string `{field}`", SourceLocation(file=source), field
                )
        outcome = result.get("outcome")
        if outcome not in OUTCOMES:
            raise InputError(
                f"`outcome` must be one of {', '.join(sorted(OUTCOMES))}, got {outcome!r}",
                _where(source, result),
                "outcome",
            )
        key = question_key(result)
        if key in seen:
            raise InputError(
                "the question appears twice in the results", _where(source, result), "question_id"
            )
        seen.add(key)


def _where(source: str, result: Mapping[str, Any]) -> SourceLocation:
    return SourceLocation(file=source, template_id=result["template_id"], question_id=result["question_id"])
