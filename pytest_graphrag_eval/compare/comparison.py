"""compare_documents(): the `comparison` section of the JSON report (format_version 2), typed
(`report_model.ComparisonSection`).

Questions are matched by (template id, question id). Only questions present in
both runs with the same content hash are paired for statistics; edited ones are
listed but kept out, since a change of the question is not a change of the agent.
Per metric, `baseline` and `current` are the means over the paired questions, so
`delta` is exactly the mean paired difference the interval is about.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

from pytest_graphrag_eval.compare import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from pytest_graphrag_eval.compare.classify import classify, passed
from pytest_graphrag_eval.compare.metrics import metric_values
from pytest_graphrag_eval.compare.numeric import numpy
from pytest_graphrag_eval.compare.paired import (
    PairedSample,
    binary_change,
    paired_changes,
    scoped_paired_changes,
)
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.report_model import (
    CHANGE_LISTS,
    Classification,
    ComparedBaseline,
    ComparisonSection,
    MetricChange,
    QuestionChange,
    QuestionResult,
    ReportDocument,
)

# Below this magnitude the difference of two values cannot overflow to infinity.
_NO_OVERFLOW = 2.0**1022
_PAIRED = frozenset({Classification.REGRESSED, Classification.FIXED, Classification.UNCHANGED})
_CLASS_OF_LIST = dict(CHANGE_LISTS)


@dataclass(frozen=True)
class Comparison(ComparisonSection):
    """The comparison of a run with its baseline: the report's section, and the paired samples it
    was computed from, so `change()` recomputes at another confidence level."""

    samples: dict[str | None, dict[str, PairedSample]] = field(repr=False)
    # Every number of `to_json()` is finite: the section is plain JSON (`formats.plain_json`).
    all_finite: bool = field(default=False, repr=False)

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
        classification = _CLASS_OF_LIST[kind]
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


def compare_documents(
    baseline: ReportDocument,
    current_results: Sequence[QuestionResult],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    baseline_path: str | None = None,
) -> Comparison:
    """Compare the current run's results, read and checked (typed), with a baseline report's."""
    _check_settings(confidence, resamples)
    baseline_by_key = {result.key: result.record for result in baseline.results}
    current_by_key = {result.key: result.record for result in current_results}
    questions = []
    paired: list[Pair] = []
    largest = 0.0  # the largest magnitude of a metric value: below _NO_OVERFLOW no delta is infinite
    # Result by result: a merge's results lie scattered in memory, where reading them key by key
    # (column by column) took three times as long.
    for key, result in current_by_key.items():
        old = baseline_by_key.get(key)
        values = metric_values(result)
        old_values = metric_values(old) if old is not None else None
        largest = max([largest, *map(abs, values.values()), *map(abs, (old_values or {}).values())])
        change = _question_change(old, result, _deltas(old_values, values) if old_values is not None else {})
        questions.append(change)
        if old_values is not None and change.classification in _PAIRED:
            paired.append(Pair(old_values, values, change))
    questions += [
        _question_change(result, None, {})
        for key, result in baseline_by_key.items()
        if key not in current_by_key
    ]
    samples = _scoped_samples(paired)
    scoped = scoped_paired_changes(samples, confidence=confidence, resamples=resamples, seed=seed)
    metrics = scoped[None]
    per_template = {template: changes for template, changes in scoped.items() if template is not None}
    outcomes = binary_change(_outcome_sample([pair.change for pair in paired]), confidence=confidence)
    started_at = baseline.metadata.get("started_at")
    changes = chain(metrics.values(), [outcomes], *(scoped.values() for scoped in per_template.values()))
    return Comparison(
        baseline=ComparedBaseline(baseline_path, started_at, len(baseline.results)),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        questions=tuple(questions),
        metrics=metrics,
        per_template=per_template,
        outcomes=outcomes,
        samples=samples,
        all_finite=largest < _NO_OVERFLOW
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


def _deltas(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, dict[str, float]]:
    """baseline, current and delta of every metric finite in both runs, in the current result's key order."""
    return {
        metric: {"baseline": before[metric], "current": value, "delta": value - before[metric]}
        for metric, value in after.items()
        if metric in before
    }


class Pair(NamedTuple):
    """A question paired for statistics: its finite metric values in both runs, and its change."""

    before: dict[str, float]
    after: dict[str, float]
    change: QuestionChange


def _scoped_samples(paired: Sequence[Pair]) -> dict[str | None, dict[str, PairedSample]]:
    """Paired values per scope (None: all questions; else a template id) and metric, column by column.

    Metrics come in the order they are first met in the current results.
    """
    np = numpy()
    scopes: dict[str | None, Any] = {None: np.arange(len(paired))}
    by_template: dict[str, list[int]] = {}
    for row, pair in enumerate(paired):
        by_template.setdefault(pair.change.template_id, []).append(row)
    scopes.update((template, np.array(rows, dtype=np.intp)) for template, rows in by_template.items())
    samples: dict[str | None, dict[str, PairedSample]] = {scope: {} for scope in scopes}
    metrics = list(dict.fromkeys(chain.from_iterable(pair.after for pair in paired)))
    befores = _value_rows(np, [pair.before for pair in paired], metrics)
    afters = _value_rows(np, [pair.after for pair in paired], metrics)
    for column, metric in enumerate(metrics):
        before, after = befores[:, column], afters[:, column]
        both = ~(np.isnan(before) | np.isnan(after))
        for scope, rows in scopes.items():
            rows = rows[both[rows]]
            if rows.size:
                samples[scope][metric] = PairedSample(before[rows], after[rows])
    return samples


def _value_rows(np: Any, rows: Sequence[Mapping[str, float]], metrics: Sequence[str]) -> Any:
    """The `metrics` of each row as an n x m array, NaN where a row lacks one: a row holding them all
    (nearly every one) is read in one call instead of one lookup per metric."""
    if not metrics:
        return np.empty((len(rows), 0))
    read = itemgetter(*metrics) if len(metrics) > 1 else lambda row: (row[metrics[0]],)
    values = []
    for row in rows:
        try:
            values.append(read(row))
        except KeyError:
            values.append(tuple([row.get(metric, math.nan) for metric in metrics]))
    return np.array(values, dtype=float).reshape(len(rows), len(metrics))


def _outcome_sample(paired: Sequence[QuestionChange]) -> PairedSample:
    """1/0 pass values of the pairs whose outcome is pass or fail in both runs."""
    old, new = [], []
    for change in paired:
        before, after = passed(change.baseline_outcome), passed(change.current_outcome)
        if before is not None and after is not None:
            old.append(float(before))
            new.append(float(after))
    return PairedSample(tuple(old), tuple(new))
