"""Retrieval evaluation: trec_eval-compatible IR metrics, eRAG, and their corpus scorers."""

from .documents import (
    Document,
    parse_documents,
    parse_relevance,
    parse_retrieved_documents,
    parse_retrieved_ids,
)
from .erag import aerag_eval, erag_eval
from .erag_components import LLMJudgeMetric, ModelGenerator, SingleInput
from .erag_scorer import ERagScorer
from .erag_scoring import ERagError
from .metrics import average_precision, recall_at_k
from .scorer import RetrievalScorer
from .trec import evaluate_run

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
