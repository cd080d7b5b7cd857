"""Comparing a run with a baseline report, and summarising repeated attempts (pure, pytest-free).

The statistics need numpy/scipy (the `[compare]` extra), imported only when a comparison is
computed; without them it is a ConfigurationError.
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
