"""Rank-based retrieval metrics computed as trec_eval does, their names as pytrec_eval spells them, and
`evaluate_run`: pytrec_eval's RelevanceEvaluator(qrels, metrics).evaluate(run) in pure Python.

Each measure has one definition here, with trec_eval's floating-point order of operations, so values are
bit-for-bit pytrec_eval's; `evaluate_run`, eRAG and the corpus scorer all use it. As in pytrec_eval, a
plain name next to the same measure with cut-offs adds nothing, result keys are always
`<measure>_<cutoff>`, ties are broken as trec_eval does (scores as 32-bit floats, then document id
descending) and only queries in both the run and non-empty judgements are evaluated.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import log2

from pytest_graphrag_eval.errors import ConfigurationError

NOT_JUDGED = -1
DEFAULT_CUTOFFS: dict[str, tuple[int, ...]] = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
}
SINGLE_MEASURES = ("map", "recip_rank", "ndcg")
SUPPORTED = (*DEFAULT_CUTOFFS, *SINGLE_MEASURES)
_WITH_CUTOFFS = re.compile(r"(P|recall|success|ndcg_cut|map_cut)[._](\d+(?:,\d+)*)")

Cutoffs = tuple[tuple[int, str], ...]
"""(cut-off, result key) pairs in increasing cut-off order."""


@dataclass(frozen=True)
class MeasurePlan:
    """Which measures to compute, with their cut-offs and result keys precomputed."""

    precision: Cutoffs = ()
    recall: Cutoffs = ()
    success: Cutoffs = ()
    ndcg_cut: Cutoffs = ()
    map_cut: Cutoffs = ()
    map: bool = False
    recip_rank: bool = False
    ndcg: bool = False


def parse_measures(metrics: str | Iterable[str], full_length: int | None = None) -> MeasurePlan:
    """Parse metric names; ConfigurationError names what is not supported.

    With `full_length` (eRAG's convention) a measure named without cut-off is taken at that length
    and keyed by its plain name, instead of trec_eval's default cut-offs.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    cutoffs: dict[str, set[int]] = {}
    plain: set[str] = set()
    singles: set[str] = set()
    for name in names:
        if not isinstance(name, str):
            raise ConfigurationError(f"metric names must be texts, got {name!r}")
        if name in SINGLE_MEASURES:
            singles.add(name)
        elif name in DEFAULT_CUTOFFS:
            cutoffs.setdefault(name, set())
            plain.add(name)
        elif match := _WITH_CUTOFFS.fullmatch(name):
            values = {int(value) for value in match.group(2).split(",")}
            if 0 in values:
                raise ConfigurationError(f"metric {name!r}: cut-offs must be positive")
            cutoffs.setdefault(match.group(1), set()).update(values)
        else:
            raise ConfigurationError(_unsupported(name))

    def keys_for(measure: str) -> Cutoffs:
        if measure not in cutoffs:
            return ()
        return _cutoff_keys(measure, cutoffs[measure], measure in plain, full_length)

    return MeasurePlan(
        precision=keys_for("P"),
        recall=keys_for("recall"),
        success=keys_for("success"),
        ndcg_cut=keys_for("ndcg_cut"),
        map_cut=keys_for("map_cut"),
        map="map" in singles,
        recip_rank="recip_rank" in singles,
        ndcg="ndcg" in singles,
    )


def _cutoff_keys(measure: str, values: set[int], plain: bool, full_length: int | None) -> Cutoffs:
    if full_length is not None:
        whole = ((max(full_length, 1), measure),) if plain else ()
        return tuple((cutoff, f"{measure}_{cutoff}") for cutoff in sorted(values)) + whole
    chosen = sorted(values) if values else DEFAULT_CUTOFFS[measure]
    return tuple((cutoff, f"{measure}_{cutoff}") for cutoff in chosen)


def _unsupported(name: str) -> str:
    hint = ""
    if re.fullmatch(r"ndcg[._]\d+", name):
        hint = f" (nDCG at a cut-off is spelled 'ndcg_cut_{name[5:]}')"
    elif re.fullmatch(r"map[._]\d+", name):
        hint = f" (AP at a cut-off is spelled 'map_cut_{name[4:]}')"
    supported = ", ".join(f"{measure}_k" for measure in DEFAULT_CUTOFFS)
    return f"unsupported retrieval metric {name!r}{hint}; supported: {supported}, {', '.join(SUPPORTED)}"


def evaluate_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: str | Iterable[str],
    *,
    relevance_level: int = 1,
) -> dict[str, dict[str, float]]:
    """Per-query metric values `{qid: {metric: value}}` as pytrec_eval computes them; a judgement of at
    least `relevance_level` is relevant."""
    plan = parse_measures(metrics)
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) or relevance_level < 0:
        raise ConfigurationError(f"relevance_level must be a non-negative integer, got {relevance_level!r}")
    results: dict[str, dict[str, float]] = {}
    for query_id, scores in run.items():
        judgements = qrels.get(query_id)
        if not judgements:
            continue
        try:
            ranked = sorted(zip(array("f", scores.values()), scores, strict=True), reverse=True)
        except TypeError:
            raise ValueError(
                f"run for query {query_id!r}: document ids must be texts and scores numbers"
            ) from None
        get = judgements.get
        rels = [get(doc_id, NOT_JUDGED) for _, doc_id in ranked]
        results[query_id] = score_ranking(plan, rels, judgements.values(), relevance_level)
    return results


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
