"""`compare_reports`: the comparison of report mappings, as the tests write them, through the typed
`compare_documents` the plugin and the merge call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.compare import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from pytest_graphrag_eval.compare.comparison import Comparison, compare_documents
from pytest_graphrag_eval.report_model import ReportDocument, parse_results


def compare_reports(
    baseline_report: Mapping[str, Any],
    current_results: Sequence[Mapping[str, Any]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    baseline_path: str | None = None,
) -> Comparison:
    """Compare a run's results with a baseline report, both as JSON mappings."""
    baseline = ReportDocument.from_json(baseline_report, baseline_path or "baseline report")
    current = parse_results(current_results, "current run", require_outcome=True)
    return compare_documents(
        baseline, current, confidence=confidence, resamples=resamples, seed=seed, baseline_path=baseline_path
    )
