"""Comparing a run with a baseline report, and summarising repeated attempts (pure, pytest-free).

    baseline = load_baseline(path)                       # InputError naming the file if unusable
    comparison = compare_reports(baseline, results, baseline_path=str(path))
    report["comparison"] = comparison.to_json()          # the format_version 2 `comparison` section
    comparison.regressions                               # question ids: passed then, failing now
    comparison.change("answer_f1", template=None, confidence=0.99)   # delta, ci_low, ci_high, p_value

`results` are the current run's result dicts with `outcome` (and `content_hash`,
else it is computed with `content_hash`). The statistics need the optional
numpy/scipy (the `[compare]` extra); they are imported
only when a comparison is computed, and their absence is a ConfigurationError.
"""

from pytest_graphrag_eval.compare.baseline import check_report, load_baseline
from pytest_graphrag_eval.compare.classify import classify, passed, question_key
from pytest_graphrag_eval.compare.comparison import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Comparison,
    compare_reports,
)
from pytest_graphrag_eval.compare.hashing import content_hash
from pytest_graphrag_eval.compare.paired import (
    PairedSample,
    mcnemar_exact,
    min_detectable_delta,
    paired_changes,
)
from pytest_graphrag_eval.compare.repeats import (
    AttemptSummary,
    MetricSpread,
    flaky_rate,
    pass_at_k,
    pass_hat_k,
    summarize_attempts,
)
from pytest_graphrag_eval.report_model import Classification, MetricChange, QuestionChange

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "AttemptSummary",
    "Classification",
    "Comparison",
    "MetricChange",
    "MetricSpread",
    "PairedSample",
    "QuestionChange",
    "check_report",
    "classify",
    "compare_reports",
    "content_hash",
    "flaky_rate",
    "load_baseline",
    "mcnemar_exact",
    "min_detectable_delta",
    "paired_changes",
    "pass_at_k",
    "pass_hat_k",
    "passed",
    "question_key",
    "summarize_attempts",
]
