"""Retrieval evaluation: trec_eval-compatible IR metrics and eRAG."""

from .documents import Document, parse_documents, parse_relevance, parse_retrieved_documents, parse_retrieved_ids
from .metrics import recall_at_k
from .scorer import RetrievalScorer

__all__ = [
    "Document",
    "RetrievalScorer",
    "parse_documents",
    "parse_relevance",
    "parse_retrieved_documents",
    "parse_retrieved_ids",
    "recall_at_k",
]
