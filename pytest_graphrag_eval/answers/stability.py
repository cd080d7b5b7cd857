"""Repeated judgments: the mean as the metric, and its spread (`_stdev`, `_min`, `_max`) next to it.

Any failed repeat makes the metric an error: a mean over the repeats that succeeded would hide the
instability the repeats are there to show.
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from pytest_graphrag_eval.answers.metric import AnswerInputs, AnswerMetric, MetricOutcome
from pytest_graphrag_eval.llm.judge import Usage
from pytest_graphrag_eval.scoring import SPREAD_SUFFIXES


def combine_repeats(
    outcomes: list[MetricOutcome], spread_keys: tuple[str, ...], error_key: str
) -> MetricOutcome:
    """Merge k outcomes of one metric into one (see the module docstring)."""
    usage = Usage()
    for outcome in outcomes:
        usage.add(outcome.usage)
    failures = [(index, outcome) for index, outcome in enumerate(outcomes, 1) if error_key in outcome.keys]
    if failures:
        index, failed = failures[0]
        failed_keys = dict(failed.keys)
        if len(outcomes) > 1:
            failed_keys[error_key] = f"judgment {index} of {len(outcomes)}: {failed_keys[error_key]}"
        return MetricOutcome(failed_keys, usage)
    keys: dict[str, Any] = dict(outcomes[0].keys)
    if len(outcomes) > 1:
        for key in spread_keys:
            values = [float(outcome.keys[key]) for outcome in outcomes]
            keys[key] = statistics.fmean(values)
            spread = (statistics.stdev(values), min(values), max(values))
            keys.update((key + suffix, value) for suffix, value in zip(SPREAD_SUFFIXES, spread, strict=True))
    return MetricOutcome(keys, usage)


async def evaluate_repeated(metric: AnswerMetric, inputs: AnswerInputs, repeats: int) -> MetricOutcome:
    """Judge `repeats` times concurrently (once for deterministic metrics) and combine."""
    count = repeats if metric.uses_llm else 1
    outcomes = await asyncio.gather(*(metric.evaluate(inputs, repeat) for repeat in range(count)))
    outcome = combine_repeats(list(outcomes), metric.spread_keys, metric.error_key)
    if metric.cost_key:
        outcome.keys[metric.cost_key] = outcome.usage.cost_usd
    return outcome
