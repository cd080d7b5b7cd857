"""The retrieval scorers' result keys, declared once in a module free of eRAG's judge imports."""

from __future__ import annotations

from pytest_graphrag_eval.scoring import ResultKey

RETRIEVAL_KEYS = (
    ResultKey(
        "retrieval_",
        "score",
        prefix=True,
        missing="retrieval metrics need a reference step named retrieval (an agent without one scores 0)",
    ),
    *(
        ResultKey(f"retrieval_{measure}@", "score", prefix=True)
        for measure in ("recall", "precision", "ndcg")
    ),
    ResultKey("retrieval_ap", "score"),
    ResultKey("retrieval_mrr", "score"),
    ResultKey("retrieval_error", "error"),
)
ERAG_KEYS = (
    ResultKey(
        "erag_",
        "score",
        prefix=True,
        missing="eRAG metrics need eRAG configured for the corpus and a retrieval step in the actual steps",
    ),
    ResultKey("erag_cost", "cost"),
    ResultKey("erag_error", "error"),
)
