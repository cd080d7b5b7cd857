"""Retrieval evaluation: trec_eval-compatible IR metrics, eRAG, and their corpus scorers."""

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
