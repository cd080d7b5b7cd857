"""Retrieval evaluation: trec_eval-compatible IR metrics, eRAG, and their corpus scorers.

Names load on first use (`lazy_names`), so the key declarations every report reads do not import
eRAG's judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names

if TYPE_CHECKING:
    from pytest_graphrag_eval.formats.documents import (
        Document,
        parse_documents,
        parse_relevance,
        parse_retrieved_documents,
        parse_retrieved_ids,
    )
    from pytest_graphrag_eval.metrics.ranking import average_precision, recall_at_k
    from pytest_graphrag_eval.retrieval.erag import aerag_eval, erag_eval
    from pytest_graphrag_eval.retrieval.erag_components import LLMJudgeMetric, ModelGenerator, SingleInput
    from pytest_graphrag_eval.retrieval.erag_scorer import ERagScorer
    from pytest_graphrag_eval.retrieval.erag_scoring import ERagError
    from pytest_graphrag_eval.retrieval.scorer import RetrievalScorer
    from pytest_graphrag_eval.retrieval.trec import evaluate_run

# Each name, and the module that defines it (this package's, or a helper it re-exports).
_HOMES = {
    "Document": "pytest_graphrag_eval.formats.documents",
    "parse_documents": "pytest_graphrag_eval.formats.documents",
    "parse_relevance": "pytest_graphrag_eval.formats.documents",
    "parse_retrieved_documents": "pytest_graphrag_eval.formats.documents",
    "parse_retrieved_ids": "pytest_graphrag_eval.formats.documents",
    "average_precision": "pytest_graphrag_eval.metrics.ranking",
    "recall_at_k": "pytest_graphrag_eval.metrics.ranking",
    "aerag_eval": "pytest_graphrag_eval.retrieval.erag",
    "erag_eval": "pytest_graphrag_eval.retrieval.erag",
    "LLMJudgeMetric": "pytest_graphrag_eval.retrieval.erag_components",
    "ModelGenerator": "pytest_graphrag_eval.retrieval.erag_components",
    "SingleInput": "pytest_graphrag_eval.retrieval.erag_components",
    "ERagScorer": "pytest_graphrag_eval.retrieval.erag_scorer",
    "ERagError": "pytest_graphrag_eval.retrieval.erag_scoring",
    "RetrievalScorer": "pytest_graphrag_eval.retrieval.scorer",
    "evaluate_run": "pytest_graphrag_eval.retrieval.trec",
}
__all__ = [
    "Document",
    "ERagError",
    "ERagScorer",
    "LLMJudgeMetric",
    "ModelGenerator",
    "RetrievalScorer",
    "SingleInput",
    "aerag_eval",
    "average_precision",
    "erag_eval",
    "evaluate_run",
    "parse_documents",
    "parse_relevance",
    "parse_retrieved_documents",
    "parse_retrieved_ids",
    "recall_at_k",
]
__getattr__ = lazy_names(__name__, globals(), _HOMES)
