"""Comparing a run with a baseline report, and summarising repeated attempts (pure, pytest-free).

The statistics need the optional numpy/scipy (`pip install 'pytest-graphrag-eval[compare]'`);
they are imported only when a comparison is computed.
"""

from .baseline import check_report, load_baseline
from .classify import Classification, classify, passed, question_key
from .comparison import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Comparison, QuestionChange, compare_reports
from .hashing import content_hash
from .paired import MetricChange, PairedSample, mcnemar_exact, min_detectable_delta, paired_changes
from .repeats import AttemptSummary, MetricSpread, flaky_rate, pass_at_k, pass_hat_k, summarize_attempts

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
