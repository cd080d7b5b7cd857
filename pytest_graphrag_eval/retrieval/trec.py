"""evaluate_run(): pytrec_eval's RelevanceEvaluator(qrels, metrics).evaluate(run), in pure Python.

Same inputs, output shape and values: ties as trec_eval breaks them (scores as 32-bit floats,
then document id descending); only queries in both the run and non-empty judgements are evaluated.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.metrics.measures import parse_measures
from pytest_graphrag_eval.metrics.ranking import NOT_JUDGED, score_ranking


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
