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
from pytest_graphrag_eval.compare.metric_columns import MetricColumns
from pytest_graphrag_eval.compare.numeric import numpy
from pytest_graphrag_eval.compare.paired import (
    MetricChange,
    PairedSample,
    binary_change,
    paired_changes,
    scoped_paired_changes,
)
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.report_model import QuestionResult, ReportDocument, parse_results

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
# Below this magnitude the difference of two values cannot overflow to infinity.
_NO_OVERFLOW = 2.0**1022
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
    """How one question changed, with baseline, current and delta of every metric finite in both runs."""

    question_id: str
    template_id: str
    classification: Classification
    baseline_outcome: str | None
    current_outcome: str | None
    deltas: dict[str, dict[str, float]] = field(repr=False)
    nodeid: str | None = None

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
    # Every number of `to_dict()` is finite: the section is plain JSON (`formats.plain_json`).
    all_finite: bool = field(default=False, repr=False)

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
    baseline_by_key = {result.key: result.record for result in baseline.results}
    current_by_key = {result.key: result.record for result in current_results}
    before = MetricColumns(list(baseline_by_key.values()))
    after = MetricColumns(list(current_by_key.values()))
    baseline_positions = {key: position for position, key in enumerate(baseline_by_key)}
    questions = []
    paired: list[tuple[int, int, QuestionChange]] = []  # (current position, baseline position, change)
    for position, (key, result) in enumerate(current_by_key.items()):
        old_position = baseline_positions.get(key)
        old = baseline_by_key[key] if old_position is not None else None
        change = _question_change(
            old, result, _deltas(before, old_position, after, position) if old_position is not None else {}
        )
        questions.append(change)
        if old_position is not None and change.classification in _PAIRED:
            paired.append((position, old_position, change))
    questions += [
        _question_change(result, None, {})
        for key, result in baseline_by_key.items()
        if key not in current_by_key
    ]
    samples = _scoped_samples(paired, before, after)
    outcome_sample = _outcome_sample([change for _, _, change in paired])
    scoped = scoped_paired_changes(samples, confidence=confidence, resamples=resamples, seed=seed)
    metrics = scoped[None]
    per_template = {template: changes for template, changes in scoped.items() if template is not None}
    outcomes = binary_change(outcome_sample, confidence=confidence)
    started_at = baseline.metadata.get("started_at")
    changes = chain(metrics.values(), [outcomes], *(scoped.values() for scoped in per_template.values()))
    return Comparison(
        baseline={"path": baseline_path, "started_at": started_at, "questions": len(baseline.results)},
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        questions=tuple(questions),
        metrics=metrics,
        per_template=per_template,
        outcomes=outcomes,
        samples=samples,
        outcome_sample=outcome_sample,
        all_finite=max(before.largest_magnitude(), after.largest_magnitude()) < _NO_OVERFLOW
        and (started_at is None or isinstance(started_at, str))
        and all(change.all_finite() for change in changes),
    )


def _check_confidence(confidence: float) -> None:
    if not isinstance(confidence, float) or not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"the confidence level must be a number between 0 and 1, got {confidence!r}")


def _check_settings(confidence: float, resamples: int) -> None:
    _check_confidence(confidence)
    if not isinstance(resamples, int) or resamples < 100:
        raise ConfigurationError(f"bootstrap resamples must be an integer >= 100, got {resamples!r}")


def _question_change(
    baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None, deltas: dict[str, dict[str, float]]
) -> QuestionChange:
    either = current if current is not None else baseline
    assert either is not None
    nodeids = [result.get("nodeid") for result in (current, baseline) if result is not None]
    return QuestionChange(
        question_id=str(either["question_id"]),
        template_id=str(either["template_id"]),
        classification=classify(baseline, current),
        baseline_outcome=baseline.get("outcome") if baseline is not None else None,
        current_outcome=current.get("outcome") if current is not None else None,
        deltas=deltas,
        nodeid=next((nodeid for nodeid in nodeids if isinstance(nodeid, str)), None),
    )


def _deltas(before: MetricColumns, old: int, after: MetricColumns, new: int) -> dict[str, dict[str, float]]:
    """baseline, current and delta of every metric finite in both runs, in the current result's key order."""
    deltas = {}
    for metric in after.ordered_metrics(new):
        value = after.columns[metric][new]
        column = before.columns.get(metric)
        previous = column[old] if column is not None else None
        if value is not None and previous is not None:
            deltas[metric] = {"baseline": previous, "current": value, "delta": value - previous}
    return deltas


def _scoped_samples(
    paired: Sequence[tuple[int, int, QuestionChange]], before: MetricColumns, after: MetricColumns
) -> dict[str | None, dict[str, PairedSample]]:
    """Paired values per scope (None: all questions; else a template id) and metric, column by column.

    Metrics come in the order they are first met in the current results (in a result's own key order).
    """
    np = numpy()
    scopes: dict[str | None, Any] = {None: np.arange(len(paired))}
    by_template: dict[str, list[int]] = {}
    for row, (_, _, change) in enumerate(paired):
        by_template.setdefault(change.template_id, []).append(row)
    scopes.update((template, np.array(rows, dtype=np.intp)) for template, rows in by_template.items())
    new_rows = np.array([position for position, _, _ in paired], dtype=np.intp)
    old_rows = np.array([position for _, position, _ in paired], dtype=np.intp)
    values = {}
    first_met = {}
    for metric, column in after.columns.items():
        current = np.array(column, dtype=float)[new_rows]  # None reads as NaN
        met = np.flatnonzero(~np.isnan(current))
        if met.size:
            values[metric] = current
            first_met[metric] = (int(met[0]), after.ordered_metrics(paired[met[0]][0]).index(metric))
    samples: dict[str | None, dict[str, PairedSample]] = {scope: {} for scope in scopes}
    for metric in sorted(values, key=first_met.__getitem__):
        baseline_column = before.columns.get(metric)
        if baseline_column is None:
            continue
        baseline_values, current = np.array(baseline_column, dtype=float)[old_rows], values[metric]
        both = ~(np.isnan(baseline_values) | np.isnan(current))
        for scope, rows in scopes.items():
            rows = rows[both[rows]]
            if rows.size:
                samples[scope][metric] = PairedSample(baseline_values[rows], current[rows])
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
