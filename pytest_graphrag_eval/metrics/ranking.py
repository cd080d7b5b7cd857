"""Rank-based retrieval metrics on one ranked list, computed as trec_eval does.

Each measure has one definition here, with trec_eval's floating-point order of operations, so
values are bit-for-bit pytrec_eval's; `evaluate_run`, eRAG and the corpus scorer all use it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from math import log2

from pytest_graphrag_eval.metrics.measures import MeasurePlan

NOT_JUDGED = -1


def score_ranking(
    plan: MeasurePlan, rels: Sequence[int], judged: Iterable[int], relevance_level: int = 1
) -> dict[str, float]:
    """Values of every measure in `plan` for one ranked list: `rels` in rank order (NOT_JUDGED when
    absent), `judged` every judgement value of the query."""
    hit_ranks = [rank for rank, rel in enumerate(rels, 1) if rel >= relevance_level]
    first_hit = hit_ranks[0] if hit_ranks else 0
    num_rel = 0
    ideal: list[int] = []
    for value in judged:
        if value >= relevance_level:
            num_rel += 1
        if value > 0:
            ideal.append(value)
    out: dict[str, float] = {}
    for cutoff, key in plan.precision:
        out[key] = bisect_right(hit_ranks, cutoff) / cutoff
    for cutoff, key in plan.recall:
        out[key] = bisect_right(hit_ranks, cutoff) / num_rel if num_rel else 0.0
    for cutoff, key in plan.success:
        out[key] = 1.0 if hit_ranks and first_hit <= cutoff else 0.0
    if plan.recip_rank:
        out["recip_rank"] = 1.0 / first_hit if hit_ranks else 0.0
    if plan.map or plan.map_cut:
        _add_average_precision(plan, hit_ranks, num_rel, out)
    if plan.ndcg or plan.ndcg_cut:
        _add_ndcg(plan, rels, ideal, out)
    return out


def _add_average_precision(
    plan: MeasurePlan, hit_ranks: list[int], num_rel: int, out: dict[str, float]
) -> None:
    # sums[j]: precision at the first j relevant hits, added in rank order as trec_eval does.
    sums = [0.0]
    total = 0.0
    for found, rank in enumerate(hit_ranks, 1):
        total += found / rank
        sums.append(total)
    if plan.map:
        out["map"] = total / num_rel if hit_ranks else 0.0
    for cutoff, key in plan.map_cut:
        out[key] = sums[bisect_right(hit_ranks, cutoff)] / num_rel if num_rel else 0.0


def _add_ndcg(plan: MeasurePlan, rels: Sequence[int], ideal: list[int], out: dict[str, float]) -> None:
    gain_positions = []  # 0-based ranks with a positive gain
    dcg = [0.0]
    total = 0.0
    for position, rel in enumerate(rels):
        if rel > 0:
            total += rel / log2(position + 2)
            gain_positions.append(position)
            dcg.append(total)
    ideal.sort(reverse=True)
    idcg = [0.0]
    ideal_total = 0.0
    for position, gain in enumerate(ideal):
        ideal_total += gain / log2(position + 2)
        idcg.append(ideal_total)
    if plan.ndcg:
        out["ndcg"] = total / ideal_total if ideal_total > 0.0 else 0.0
    for cutoff, key in plan.ndcg_cut:
        ideal_at = idcg[min(cutoff, len(ideal))]
        out[key] = dcg[bisect_left(gain_positions, cutoff)] / ideal_at if ideal_at > 0.0 else 0.0


def ranked_judgements(judgements: Mapping[str, int], retrieved: Sequence[str]) -> list[int]:
    """Judgement of each retrieved id in rank order; a repeated id keeps its first rank."""
    return [judgements.get(doc_id, NOT_JUDGED) for doc_id in dict.fromkeys(retrieved)]


def recall_at_k(relevant: Collection[str], retrieved: Sequence[str], k: int | None) -> float:
    """Share of the relevant documents among the first `k` retrieved (all when k is None); ValueError
    without relevant documents or for a k that is not a positive integer."""
    if not relevant:
        raise ValueError("recall is undefined without relevant documents")
    if k is None:
        k = max(len(retrieved), 1)
    elif isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    judgements = dict.fromkeys(relevant, 1)
    plan = MeasurePlan(recall=((k, "recall"),))
    return score_ranking(plan, ranked_judgements(judgements, retrieved), judgements.values())["recall"]


def average_precision(relevant: Collection[str], retrieved: Sequence[str]) -> float:
    """Sum of the precision at each relevant hit over the number of relevant documents (those never
    retrieved count as 0); ValueError without relevant documents."""
    if not relevant:
        raise ValueError("average precision is undefined without relevant documents")
    judgements = dict.fromkeys(relevant, 1)
    plan = MeasurePlan(map=True)
    return score_ranking(plan, ranked_judgements(judgements, retrieved), judgements.values())["map"]
