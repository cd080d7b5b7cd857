"""compare_reports(): the `comparison` section of the JSON report (format_version 2).

Questions are matched by (template id, question id). Only questions present in
both runs with the same content hash are paired for statistics; edited ones are
listed but kept out, since a change of the question is not a change of the agent.
Per metric, `baseline` and `current` are the means over the paired questions, so
`delta` is exactly the mean paired difference the interval is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from pytest_graphrag_eval.compare.classify import Classification, classify, passed
from pytest_graphrag_eval.compare.metrics import metric_values
from pytest_graphrag_eval.compare.numeric import numpy
from pytest_graphrag_eval.compare.paired import MetricChange, PairedSample, binary_change, paired_changes
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.report_model import QuestionResult, ReportDocument, parse_results

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
_PAIRED = frozenset({Classification.REGRESSED, Classification.FIXED, Classification.UNCHANGED})
_LISTS = (
    ("regressions", Classification.REGRESSED),
    ("fixed", Classification.FIXED),
    ("new", Classification.NEW),
    ("removed", Classification.REMOVED),
    ("edited", Classification.EDITED),
    ("unchanged", Classification.UNCHANGED),
    ("not_evaluated", Classification.NOT_EVALUATED),
)


@dataclass(frozen=True)
class QuestionChange:
    """How one question changed, with its metric values in each run (empty for the missing run)."""

    question_id: str
    template_id: str
    classification: Classification
    baseline_outcome: str | None
    current_outcome: str | None
    baseline_values: dict[str, float] = field(repr=False)
    current_values: dict[str, float] = field(repr=False)
    nodeid: str | None = None

    @property
    def deltas(self) -> dict[str, dict[str, float]]:
        """baseline, current and delta of every metric numeric in both runs."""
        old = self.baseline_values
        return {
            metric: {"baseline": old[metric], "current": value, "delta": value - old[metric]}
            for metric, value in self.current_values.items()
            if metric in old
        }

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "question_id": self.question_id,
            "template_id": self.template_id,
            "classification": str(self.classification),
            "baseline_outcome": self.baseline_outcome,
            "current_outcome": self.current_outcome,
            "deltas": self.deltas,
        }
        if self.nodeid is not None:
            data["nodeid"] = self.nodeid
        return data


@dataclass(frozen=True)
class Comparison:
    """The comparison of a run with its baseline; `change()` recomputes at another confidence level."""

    baseline: dict[str, Any]
    confidence: float
    resamples: int
    seed: int
    questions: tuple[QuestionChange, ...]
    metrics: dict[str, MetricChange]
    per_template: dict[str, dict[str, MetricChange]]
    outcomes: MetricChange
    samples: dict[str | None, dict[str, PairedSample]] = field(repr=False)
    outcome_sample: PairedSample = field(repr=False)

    def ids(self, classification: Classification) -> list[str]:
        """Question ids with this classification, in report order."""
        return [change.question_id for change in self.questions if change.classification == classification]

    @property
    def regressions(self) -> list[str]:
        return self.ids(Classification.REGRESSED)

    def change(
        self, metric: str, *, template: str | None = None, confidence: float | None = None
    ) -> MetricChange:
        """A metric's change over all paired questions (or one template's), at any confidence level.

        Deterministic: at the comparison's own level it is the stored value, at another
        level the same seeded bootstrap is rerun on the stored paired differences.
        """
        stored = self.metrics if template is None else self.per_template.get(template, {})
        if metric not in stored:
            scope = "all questions" if template is None else f"template {template!r}"
            raise KeyError(f"no paired values of {metric!r} for {scope}")
        if confidence is None or confidence == self.confidence:
            return stored[metric]
        _check_confidence(confidence)
        scope_samples = self.samples[template]
        same_length = {
            name: sample
            for name, sample in scope_samples.items()
            if len(sample.baseline) == len(scope_samples[metric].baseline)
        }
        changes = paired_changes(same_length, confidence=confidence, resamples=self.resamples, seed=self.seed)
        return changes[metric]

    def count(self, kind: str, template: str | None = None) -> int:
        """How many questions (of one template, or all) changed this way: `regressions`, `fixed`, ..."""
        classification = dict(_LISTS)[kind]
        return sum(
            1
            for change in self.questions
            if change.classification == classification and template in (None, change.template_id)
        )

    def metric_change(
        self, metric: str, template: str | None = None, confidence: float | None = None
    ) -> MetricChange | None:
        """`change()`, or None when no question has the metric in both runs (for gates on change)."""
        try:
            return self.change(metric, template=template, confidence=confidence)
        except KeyError:
            return None

    def template_ids(self) -> list[str]:
        """Templates with paired questions, sorted (what `template[*]` gates on change expand to)."""
        return sorted(self.per_template)

    def outcome_change(self, *, confidence: float | None = None) -> MetricChange:
        """The pass-rate change (exact McNemar) at any confidence level."""
        if confidence is None or confidence == self.confidence:
            return self.outcomes
        _check_confidence(confidence)
        return binary_change(self.outcome_sample, confidence=confidence)

    def to_dict(self) -> dict[str, Any]:
        """Exactly the `comparison` section of the JSON report."""
        data: dict[str, Any] = {
            "baseline": dict(self.baseline),
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
        }
        for name, classification in _LISTS:
            data[name] = self.ids(classification)
        outcomes = self.outcomes.to_dict()
        data["questions"] = [change.to_dict() for change in self.questions]
        data["metrics"] = {metric: change.to_dict() for metric, change in self.metrics.items()}
        data["per_template"] = {
            template: {metric: change.to_dict() for metric, change in changes.items()}
            for template, changes in self.per_template.items()
        }
        data["outcomes"] = {
            "baseline_pass_rate": outcomes.pop("baseline"),
            "current_pass_rate": outcomes.pop("current"),
            **outcomes,
        }
        return data


def compare_reports(
    baseline_report: Mapping[str, Any],
    current_results: Sequence[Mapping[str, Any]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    baseline_path: str | None = None,
) -> Comparison:
    """Compare the current run's results with a baseline report (see `load_baseline`)."""
    _check_settings(confidence, resamples)
    baseline = ReportDocument.from_json(baseline_report, baseline_path or "baseline report")
    current = parse_results(current_results, "current run", require_outcome=True)
    return compare_documents(
        baseline, current, confidence=confidence, resamples=resamples, seed=seed, baseline_path=baseline_path
    )


def compare_documents(
    baseline: ReportDocument,
    current_results: Sequence[QuestionResult],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    baseline_path: str | None = None,
) -> Comparison:
    """`compare_reports` of a report and results already read and checked (typed): nothing parsed twice."""
    _check_settings(confidence, resamples)
    baseline_results = {result.key: result.record for result in baseline.results}
    current_by_key = {result.key: result.record for result in current_results}
    questions = [
        _question_change(baseline_results.get(key), result) for key, result in current_by_key.items()
    ]
    questions += [
        _question_change(result, None)
        for key, result in baseline_results.items()
        if key not in current_by_key
    ]
    paired = [change for change in questions if change.classification in _PAIRED]
    samples = _scoped_samples(paired)
    outcome_sample = _outcome_sample(paired)
    per_template = {
        template: paired_changes(scoped, confidence=confidence, resamples=resamples, seed=seed)
        for template, scoped in samples.items()
        if template is not None
    }
    return Comparison(
        baseline={
            "path": baseline_path,
            "started_at": baseline.metadata.get("started_at"),
            "questions": len(baseline.results),
        },
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        questions=tuple(questions),
        metrics=paired_changes(samples[None], confidence=confidence, resamples=resamples, seed=seed),
        per_template=per_template,
        outcomes=binary_change(outcome_sample, confidence=confidence),
        samples=samples,
        outcome_sample=outcome_sample,
    )


def _check_confidence(confidence: float) -> None:
    if not isinstance(confidence, float) or not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"the confidence level must be a number between 0 and 1, got {confidence!r}")


def _check_settings(confidence: float, resamples: int) -> None:
    _check_confidence(confidence)
    if not isinstance(resamples, int) or resamples < 100:
        raise ConfigurationError(f"bootstrap resamples must be an integer >= 100, got {resamples!r}")


def _question_change(baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> QuestionChange:
    either = current if current is not None else baseline
    assert either is not None
    nodeids = [result.get("nodeid") for result in (current, baseline) if result is not None]
    return QuestionChange(
        question_id=str(either["question_id"]),
        template_id=str(either["template_id"]),
        classification=classify(baseline, current),
        baseline_outcome=baseline.get("outcome") if baseline is not None else None,
        current_outcome=current.get("outcome") if current is not None else None,
        baseline_values=metric_values(baseline) if baseline is not None else {},
        current_values=metric_values(current) if current is not None else {},
        nodeid=next((nodeid for nodeid in nodeids if isinstance(nodeid, str)), None),
    )


def _scoped_samples(paired: Sequence[QuestionChange]) -> dict[str | None, dict[str, PairedSample]]:
    """Paired values per scope (None: all questions; else a template id) and metric, column by column."""
    np = numpy()
    metrics = dict.fromkeys(chain.from_iterable(change.current_values for change in paired))
    scopes: dict[str | None, Any] = {None: np.arange(len(paired))}
    templates = np.array([change.template_id for change in paired], dtype=object)
    for template in dict.fromkeys(templates.tolist()):
        scopes[template] = np.flatnonzero(templates == template)
    samples: dict[str | None, dict[str, PairedSample]] = {scope: {} for scope in scopes}
    for metric in metrics:
        before = np.array([change.baseline_values.get(metric, np.nan) for change in paired], dtype=float)
        after = np.array([change.current_values.get(metric, np.nan) for change in paired], dtype=float)
        both = ~(np.isnan(before) | np.isnan(after))
        for scope, rows in scopes.items():
            rows = rows[both[rows]]
            if rows.size:
                samples[scope][metric] = PairedSample(before[rows], after[rows])
    return samples


def _outcome_sample(paired: Sequence[QuestionChange]) -> PairedSample:
    """1/0 pass values of the pairs whose outcome is pass or fail in both runs."""
    old, new = [], []
    for change in paired:
        before, after = passed(change.baseline_outcome), passed(change.current_outcome)
        if before is not None and after is not None:
            old.append(float(before))
            new.append(float(after))
    return PairedSample(tuple(old), tuple(new))
