"""The `judge_spend` section of the report: what the judge cost against the budget, the limits, and
the questions a limit, a cache miss in a cache-only run or an unanswered batch left `not_evaluated`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.report.run_coverage import listed
from pytest_graphrag_eval.report_model import BatchSpend, JudgeSpend, Refusal, refusal_of

_SHOWN_IDS = 5
_SHOWN_KEYS = 3


def spend_section(
    stats: Mapping[str, Any] | None,
    results: Sequence[Mapping[str, Any]],
    *,
    max_cost_usd: float | None = None,
    max_calls: int | None = None,
    cache_only: bool = False,
    batches: Sequence[Mapping[str, Any]] | None = None,
) -> JudgeSpend | None:
    """The section for the report, or None when no judge ran and no limit or cache-only mode was set;
    `stats` are the judge client's counters summed over the run's processes."""
    limited = max_cost_usd is not None or max_calls is not None
    if stats is None and not limited and not cache_only:
        return None
    stats = stats or {}
    return JudgeSpend(
        cost_usd=round(float(stats.get("cost_usd", 0.0)), 6),
        requests=int(stats.get("calls_made", 0)),
        cache_hits=int(stats.get("cache_hits", 0)),
        input_tokens=int(stats.get("input_tokens", 0)),
        output_tokens=int(stats.get("output_tokens", 0)),
        max_cost_usd=max_cost_usd,
        max_calls=max_calls,
        refused_calls=int(stats.get("budget_refused", 0)),
        not_evaluated_ids=_ids(results, lambda result: result.get("outcome") == "not_evaluated"),
        cache_miss_ids=_ids(results, lambda result: refusal_of(result) == "cache_miss")
        if cache_only
        else None,
        cache_miss_keys=tuple(sorted(str(key) for key in stats.get("cache_miss_keys") or ()))
        if cache_only
        else (),
        batch=BatchSpend(
            tuple(dict(batch) for batch in batches),
            int(stats.get("batch_requests", 0)),
            int(stats.get("batch_failed", 0)),
            _ids(results, lambda result: refusal_of(result) is Refusal.BATCH),
        )
        if batches is not None
        else None,
    )


def _ids(
    results: Sequence[Mapping[str, Any]], chosen: Callable[[Mapping[str, Any]], bool]
) -> tuple[str, ...]:
    return tuple(str(result["question_id"]) for result in results if chosen(result))


def spend_lines(section: JudgeSpend | None) -> list[str]:
    """The section as plain lines (terminal summary; the Markdown summary escapes nothing in them)."""
    if section is None:
        return []
    spent = f"judge spend: ${section.cost_usd:.4f}"
    if section.max_cost_usd is not None:
        spent += f" of a ${section.max_cost_usd:g} budget"
    spent += f", {section.requests} requests"
    if section.max_calls is not None:
        spent += f" of at most {section.max_calls}"
    spent += f", {section.cache_hits} cache hits"
    lines = [spent]
    missed = set(section.cache_miss_ids or ())  # not evaluated too, but said on their own line
    stopped = [question for question in section.not_evaluated_ids if question not in missed]
    if section.refused_calls or stopped:
        lines.append(
            f"budget reached: {len(stopped)} questions not evaluated "
            f"({section.refused_calls} judge calls not sent)" + _first(stopped)
        )
    batch = section.batch
    if batch is not None:
        resumed = sum(1 for record in batch.batches if record.get("resumed"))
        lines.append(
            f"judge batch: {len(batch.batches)} batches"
            + (f" ({resumed} resumed)" if resumed else "")
            + f", {batch.requests} requests submitted, at batch prices"
        )
        for record in batch.batches:
            if record.get("status") != "completed" or record.get("failed"):
                lines.append(
                    f"judge batch {record['id']} {record['status']}: {record['answered']} of "
                    f"{record['requests']} requests answered (kept in the cache)"
                )
        if batch.unanswered_ids:
            lines.append(
                f"judge batch: {len(batch.unanswered_ids)} questions had judge requests no batch answered"
                + _first(batch.unanswered_ids)
            )
    if section.cache_miss_ids is not None:
        lines.append(
            f"cache-only: {len(section.cache_miss_ids)} questions not evaluated, their judge calls are "
            "missing from the cache" + _first(section.cache_miss_ids)
        )
        keys = section.cache_miss_keys
        if keys:
            lines.append(
                f"cache-only: {len(keys)} missing cache keys (all in the JSON report's judge_spend."
                f"cache_miss_keys): {listed(keys, _SHOWN_KEYS)}"
            )
    return lines


def cache_only_incomplete(section: JudgeSpend | None) -> str | None:
    """Why a cache-only run fails although every question it evaluated passed, or None: CI must not go
    green on an empty or stale cache."""
    if section is None or not section.cache_miss_ids:
        return None
    return (
        f"cache-only run incomplete: {len(section.cache_miss_ids)} questions not evaluated because "
        "their judge calls are missing from the cache, so this run fails; fill the cache with a run "
        "without --graphrag-cache-only"
    )


def merge_spend(
    sections: Sequence[JudgeSpend | None], results: Sequence[Mapping[str, Any]]
) -> JudgeSpend | None:
    """The section of a run made of shards: spend summed, questions recounted, limits summed (None when
    a shard had none)."""
    present = [section for section in sections if section is not None]
    if not present:
        return None
    batched = [section.batch for section in present if section.batch is not None]
    return spend_section(
        {
            "cost_usd": sum(section.cost_usd for section in present),
            "calls_made": sum(section.requests for section in present),
            "cache_hits": sum(section.cache_hits for section in present),
            "input_tokens": sum(section.input_tokens for section in present),
            "output_tokens": sum(section.output_tokens for section in present),
            "budget_refused": sum(section.refused_calls for section in present),
            "batch_requests": sum(batch.requests for batch in batched),
            "batch_failed": sum(batch.unanswered_requests for batch in batched),
            "cache_miss_keys": {key for section in present for key in section.cache_miss_keys},
        },
        results,
        max_cost_usd=_summed_limit([section.max_cost_usd for section in present]),
        max_calls=_summed_limit([section.max_calls for section in present]),
        cache_only=any(section.cache_only for section in present),
        batches=[record for batch in batched for record in batch.batches] if batched else None,
    )


def _summed_limit(limits: Sequence[Any]) -> Any:
    return sum(limits) if limits and all(limit is not None for limit in limits) else None


def add_process_stats(total: dict[str, Any], stats: Mapping[str, Any]) -> None:
    """Add one process's judge counters to `total` (xdist workers each have their own client);
    lists (models without a price, missing cache keys) are joined, sorted and without repeats."""
    for key, value in stats.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value
        elif isinstance(value, list):
            total[key] = sorted({*total.get(key, []), *value})


def _first(ids: Sequence[str]) -> str:
    return f": {listed(ids, _SHOWN_IDS)}" if ids else ""
