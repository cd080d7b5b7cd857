"""Retrieval evaluation: trec_eval-compatible IR metrics, eRAG, and their corpus scorers.

Names load on first use (`lazy_names`), so the key declarations every report reads do not import
eRAG's judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names

if TYPE_CHECKING:
    from pytest_graphrag_eval.formats.documents import Document as Document
    from pytest_graphrag_eval.formats.documents import parse_documents as parse_documents
    from pytest_graphrag_eval.formats.documents import parse_relevance as parse_relevance
    from pytest_graphrag_eval.formats.documents import parse_retrieved_documents as parse_retrieved_documents
    from pytest_graphrag_eval.formats.documents import parse_retrieved_ids as parse_retrieved_ids
    from pytest_graphrag_eval.metrics.ranking import average_precision as average_precision
    from pytest_graphrag_eval.metrics.ranking import evaluate_run as evaluate_run
    from pytest_graphrag_eval.metrics.ranking import recall_at_k as recall_at_k
    from pytest_graphrag_eval.retrieval.erag import ERagError as ERagError
    from pytest_graphrag_eval.retrieval.erag import aerag_eval as aerag_eval
    from pytest_graphrag_eval.retrieval.erag import erag_eval as erag_eval
    from pytest_graphrag_eval.retrieval.erag_config import LLMJudgeMetric as LLMJudgeMetric
    from pytest_graphrag_eval.retrieval.erag_config import ModelGenerator as ModelGenerator
    from pytest_graphrag_eval.retrieval.erag_config import SingleInput as SingleInput
    from pytest_graphrag_eval.retrieval.scorer import ERagScorer as ERagScorer
    from pytest_graphrag_eval.retrieval.scorer import RetrievalScorer as RetrievalScorer

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
    "LLMJudgeMetric": "pytest_graphrag_eval.retrieval.erag_config",
    "ModelGenerator": "pytest_graphrag_eval.retrieval.erag_config",
    "SingleInput": "pytest_graphrag_eval.retrieval.erag_config",
    "ERagScorer": "pytest_graphrag_eval.retrieval.scorer",
    "ERagError": "pytest_graphrag_eval.retrieval.erag",
    "RetrievalScorer": "pytest_graphrag_eval.retrieval.scorer",
    "evaluate_run": "pytest_graphrag_eval.metrics.ranking",
}
__all__ = sorted(_HOMES)
__getattr__ = lazy_names(__name__, globals(), _HOMES)
