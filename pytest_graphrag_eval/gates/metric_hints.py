"""Why a metric is missing: the explanations shown when a threshold or gate has no value.

A threshold on a metric nobody computed must fail loudly and say what to fix,
so the usual causes are kept here in one small table, matched by key name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

# (exact key, or prefix ending in "_"), hint. First match wins.
MISSING_METRIC_HINTS: tuple[tuple[str, str], ...] = (
    ("steps_score", "the question has no reference_steps"),
    (
        "answer_",
        "answer metrics need a reference_answer and an actual_answer; the LLM-judged ones "
        "(answer_recall, answer_precision, answer_f1, answer_relevance) also need an answer judge "
        "(--graphrag-judge)",
    ),
    (
        "retrieval_answer_",
        "judged retrieval metrics need an LLM judge (an llm section in a graphrag-eval config, or "
        "retrieval_judges: true), a reference_answer and an actual retrieval step with document texts",
    ),
    (
        "retrieval_context_",
        "judged retrieval metrics need an LLM judge (an llm section in a graphrag-eval config, or "
        "retrieval_judges: true) and an actual retrieval step that matched the reference retrieval step",
    ),
    (
        "retrieval_",
        "retrieval metrics need a reference step named retrieval (an agent without one scores 0)",
    ),
    ("erag_", "eRAG metrics need eRAG configured for the corpus and a retrieval step in the actual steps"),
    ("input_tokens", "the agent's response did not report input_tokens"),
    ("output_tokens", "the agent's response did not report output_tokens"),
    ("total_tokens", "the agent's response did not report total_tokens"),
    ("elapsed_sec", "the agent's response did not report elapsed_sec"),
)
_UNKNOWN_HINT = "no scorer produced this key; check the metric name"

# Error keys that stand for a whole family of metrics (seed names).
_SHARED_ERROR_KEYS: dict[str, str] = {
    "answer_recall": "answer_eval_error",
    "answer_precision": "answer_eval_error",
    "answer_f1": "answer_eval_error",
    "answer_reference_claims_count": "answer_eval_error",
    "answer_actual_claims_count": "answer_eval_error",
    "answer_matching_claims_count": "answer_eval_error",
}


def missing_metric_hint(metric: str, available: Iterable[str] = ()) -> str:
    """The usual reason `metric` was not computed, plus a did-you-mean from `available` keys."""
    hint = next(
        (
            text
            for key, text in MISSING_METRIC_HINTS
            if metric == key or (key.endswith("_") and metric.startswith(key))
        ),
        _UNKNOWN_HINT,
    )
    close = difflib.get_close_matches(metric, sorted(set(available) - {metric}), n=1, cutoff=0.75)
    return f"{hint}; did you mean {close[0]!r}?" if close else hint


def metric_error(result: Mapping[str, Any], metric: str) -> tuple[str, str] | None:
    """The error key and text a scorer left for `metric`, if any.

    Looks at `<metric>_error`, then the seed's shared key (`answer_eval_error`
    for the answer-correctness family), then a scorer-wide `<prefix>_error`
    whose prefix starts the metric name (`retrieval_error` for `retrieval_ap`).
    """
    candidates = [f"{metric}_error"]
    if metric in _SHARED_ERROR_KEYS:
        candidates.append(_SHARED_ERROR_KEYS[metric])
    candidates.extend(
        sorted(
            (
                key
                for key in result
                if isinstance(key, str) and key.endswith("_error") and metric.startswith(key[: -len("error")])
            ),
            key=len,
            reverse=True,
        )
    )
    for key in candidates:
        text = result.get(key)
        if text:
            return key, str(text)
    return None
