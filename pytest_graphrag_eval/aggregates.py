"""compute_aggregates(): per-template, micro and macro statistics of results.

Every numeric key of the successful questions is aggregated, so a new scorer's metric can be gated
without changes here; `not_evaluated` questions are only counted, as their scores are incomplete.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from os import PathLike
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.sparql_results import SelectRowCounts
from pytest_graphrag_eval.formats.typed_results import typed_row_count
from pytest_graphrag_eval.scoring import ScoredResults

STAT_NAMES = ("sum", "mean", "median", "min", "max")
# Metrics the retrieval judges write on each judged retrieval step (answers/retrieval_judges.py).
STEP_METRICS = tuple(
    f"retrieval_{side}_{measure}"
    for side in ("answer", "context")
    for measure in ("recall", "precision", "f1")
)
NOT_METRIC_KEYS = frozenset({"template_id", "question_id", "question_text"})  # numbers, but ids or texts
# Value types that are never a metric value: most of a result's other values (texts, steps, flags, nulls),
# which readers of many results pass over by exact type before any call.
NEVER_METRIC_TYPES = frozenset({str, list, dict, bool, type(None)})


def is_metric_value(key: str, value: object) -> bool:
    """True for result values that are aggregated: real numbers that are not flags."""
    return key not in NOT_METRIC_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool)


def compute_aggregates(
    results: Sequence[Mapping[str, object]], config_file_path: str | PathLike[str] | None = None
) -> dict[str, Any]:
    """Aggregate results as the seed does: `per_template`, `micro` and `macro`; `config_file_path`
    is only checked, so a broken one is reported."""
    if config_file_path is not None:
        from pytest_graphrag_eval.answers.config_file import load_answers_config

        load_answers_config(Path(config_file_path))
    row_counts = results.row_counts if isinstance(results, ScoredResults) else None
    by_template: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        by_template.setdefault(str(result["template_id"]), []).append(result)
    template_values = {template_id: _metric_values(group) for template_id, group in by_template.items()}
    per_template = {
        template_id: _group_stats(group, template_values[template_id], with_steps=True, row_counts=row_counts)
        for template_id, group in by_template.items()
    }
    micro_values = _micro_values(results, by_template, template_values)
    return {
        "per_template": per_template,
        "micro": _group_stats(results, micro_values, with_steps=False),
        "macro": _macro(per_template.values()),
    }


NOT_EVALUATED_COUNT = "number_of_not_evaluated_samples"


def _group_stats(
    results: Sequence[Mapping[str, Any]],
    metric_values: Mapping[str, list[float]],
    *,
    with_steps: bool,
    row_counts: SelectRowCounts | None = None,
) -> dict[str, Any]:
    """The group's counts and statistics; `metric_values`: those of its `_aggregated` results
    (`_metric_values_by_template`)."""
    evaluated = [result for result in results if result.get("outcome") != "not_evaluated"]
    successes = [result for result in evaluated if result.get("status") == "success"]
    stats: dict[str, Any] = {
        "number_of_error_samples": len(evaluated) - len(successes),
        "number_of_success_samples": len(successes),
    }
    if len(evaluated) < len(results):
        stats[NOT_EVALUATED_COUNT] = len(results) - len(evaluated)
    for metric, values in metric_values.items():
        stats[metric] = describe(values)
    flaky = [value for result in evaluated if isinstance(value := result.get("flaky"), int)]
    if flaky:  # questions asked several times (--graphrag-agent-repeats)
        stats["flaky_rate"] = sum(flaky) / len(flaky)
    if with_steps and (summary := steps_summary(successes, row_counts)):
        stats["steps"] = summary
    return stats


def _aggregated(result: Mapping[str, Any]) -> bool:
    """A result whose metric values are aggregated: evaluated, and answered by the agent."""
    return result.get("outcome") != "not_evaluated" and result.get("status") == "success"


def _metric_values(results: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Each metric's values over the `_aggregated` results, in their order: read in one pass over the
    results' values, the longest part of the aggregates."""
    values: dict[str, list[float]] = {}
    for result in results:
        if not _aggregated(result):
            continue
        for key, value in result.items():
            # Most values are exactly int, float or str: decided by type alone, no call per value.
            kind = type(value)
            if kind is str or kind is dict or kind is list:
                continue
            if ((kind is float or kind is int) and key not in NOT_METRIC_KEYS) or is_metric_value(key, value):
                values.setdefault(key, []).append(value)
    return values


def _micro_values(
    results: Sequence[Mapping[str, Any]],
    by_template: Mapping[str, Sequence[Mapping[str, Any]]],
    template_values: Mapping[str, Mapping[str, list[float]]],
) -> dict[str, list[float]]:
    """`_metric_values(results)`, put together from the templates' own when each template's results
    come one after another (corpus order): the values' order decides their float sum, the keys' the
    report's."""
    grouped = chain.from_iterable(by_template.values())
    if not all(result is other for result, other in zip(results, grouped, strict=True)):
        return _metric_values(results)
    every: dict[str, list[float]] = {}
    for values in template_values.values():
        for key, column in values.items():
            every.setdefault(key, []).extend(column)
    return every


def describe(values: Sequence[float]) -> dict[str, float]:
    """sum, mean, median, min and max of a non-empty list of numbers."""
    return {
        "sum": sum(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }


def _macro(template_stats: Iterable[Mapping[str, object]]) -> dict[str, dict[str, float]]:
    means: dict[str, list[float]] = {}
    for stats in template_stats:
        for key, value in stats.items():
            if isinstance(value, Mapping) and "mean" in value:
                means.setdefault(key, []).append(value["mean"])
    return {key: {"mean": statistics.fmean(values)} for key, values in means.items()}


def steps_summary(
    results: Iterable[Mapping[str, Any]], row_counts: SelectRowCounts | None = None
) -> dict[str, dict[str, float]]:
    """How often each step name ran, once per question, with empty results, with errors (rows counted
    by scoring are not parsed again); then the judged retrieval-step metrics' statistics, one value
    per judged step (graphrag-eval's `steps` stats), read in the same pass over the steps."""
    # Plain dicts counted in place: `Counter.update` checked its argument against the Mapping ABC.
    summary: dict[str, dict[str, float]] = {  # counts, then statistics
        "total": {},
        "once_per_sample": {},
        "empty_results": {},
        "errors": {},
    }
    total, once, empty, errors = summary.values()
    judged: dict[str, list[float]] = {}
    for result in results:
        seen: set[str] = set()  # membership only: a set's order would change with the hash seed
        for step in result.get("actual_steps") or []:
            name = str(step.get("name"))
            total[name] = total.get(name, 0) + 1
            if name not in seen:
                seen.add(name)
                once[name] = once.get(name, 0) + 1
            if step.get("status") == "error":
                errors[name] = errors.get(name, 0) + 1
            elif _is_empty(step.get("output"), row_counts):
                empty[name] = empty.get(name, 0) + 1
            if name == "retrieval":
                for metric in STEP_METRICS:
                    if is_metric_value(metric, step.get(metric)):
                        judged.setdefault(metric, []).append(step[metric])
    summary.update((metric, describe(values)) for metric, values in judged.items())
    return {key: value for key, value in summary.items() if value}


def _is_empty(output: object, row_counts: SelectRowCounts | None) -> bool:
    rows = row_counts.rows(output) if row_counts is not None else None
    return is_empty_output(output) if rows is None else rows == 0


# The first characters of a JSON text the standard library reads (NaN and Infinity included).
_JSON_STARTS = frozenset('{["-0123456789tfnNI')


def is_empty_output(output: object) -> bool:
    """A step output with nothing in it: blank, `[]`/`{}`, or SPARQL JSON with no bindings."""
    if isinstance(output, str):
        text = output.strip()
        if not text:
            return True
        if text[0] not in _JSON_STARTS:  # plain text (a URI, a sentence): no JSON parser reads it
            return False
        rows = typed_row_count(text)
        if rows is not None:
            return rows == 0
        try:
            data = json_text.loads_shape(text)
        except ValueError:
            return False
    else:
        data = output  # an output recorded as a JSON value rather than text
    if isinstance(data, Mapping) and isinstance(data.get("results"), Mapping):
        return not data["results"].get("bindings")
    return data in ([], {}, None, "")
