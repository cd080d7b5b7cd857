"""From eRAG's per-document labels to retrieval metrics per question, and their means.

Binary labels get every measure with trec_eval's values; continuous ones only `P` and `success`.
Where the published `erag` crashes (a measure without a cut-off, k beyond the list, an empty
list) we take the whole list, count missing ranks as 0 and score 0.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.metrics.measures import MeasurePlan, parse_measures
from pytest_graphrag_eval.metrics.ranking import score_ranking

CONTINUOUS_MEASURES = ("P", "success")


class ERagError(GraphragEvalError):
    """eRAG could not run: bad inputs, or a generator or downstream metric broke its contract."""


def check_label(value: Any, question: str, position: int) -> float | int:
    """A downstream score as a label: a number in [0, 1]; 0/1 become integers as in eRAG."""
    if isinstance(value, bool):
        return int(value)
    number = float(value) if isinstance(value, numbers.Real) else math.nan
    if math.isnan(number) or not 0 <= number <= 1:
        raise ERagError(
            f"the downstream metric must return a number in [0, 1], got {value!r} "
            f"for document #{position + 1} of question {question!r}"
        )
    return int(number) if number in (0, 1) else number


def score_labels(labels: Mapping[str, Sequence[float]], names: list[str]) -> dict[str, Any]:
    """eRAG's result: `{"per_input": {question: {metric: value}}, "aggregated": {metric: mean}}` for the
    metric `names` (checked by the caller before any label was made)."""
    binary = all(label in (0, 1) for values in labels.values() for label in values)
    per_input: dict[str, dict[str, float]] = {}
    plans: dict[int, MeasurePlan] = {}
    for question, values in labels.items():
        plan = plans.get(len(values))
        if plan is None:
            plan = plans[len(values)] = parse_measures(names, full_length=len(values))
            if not binary:
                _check_continuous(plan, names)
        if binary:
            relevance = [int(label) for label in values]
            per_input[question] = score_ranking(plan, relevance, relevance)
        else:
            per_input[question] = _continuous(plan, values)
    return {"per_input": per_input, "aggregated": _means(per_input)}


def _check_continuous(plan: MeasurePlan, names: list[str]) -> None:
    if plan.recall or plan.ndcg_cut or plan.map_cut or plan.map or plan.recip_rank or plan.ndcg:
        unsupported = sorted(name for name in names if not name.startswith(CONTINUOUS_MEASURES))
        raise ConfigurationError(
            "the downstream metric returned labels between 0 and 1 (not only 0 and 1); with such "
            f"labels eRAG defines only P and success, so {', '.join(unsupported)} cannot be computed "
            "(use a binary downstream metric such as exact_match, or drop those metrics)"
        )


def _continuous(plan: MeasurePlan, labels: Sequence[float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for cutoff, key in plan.precision:
        total: float = 0
        for label in labels[:cutoff]:
            total += label
        out[key] = total / cutoff
    for cutoff, key in plan.success:
        out[key] = max(labels[:cutoff], default=0)
    return out


def _means(per_input: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    if not per_input:
        return {}
    keys = next(iter(per_input.values())).keys()
    # The builtin sum, as the published package uses, so means agree with it to the last bit.
    return {key: sum(result[key] for result in per_input.values()) / len(per_input) for key in keys}
