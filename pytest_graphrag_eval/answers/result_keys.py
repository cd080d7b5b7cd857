"""The answer scorers' result keys, declared once in a module free of LLM imports for every reader."""

from __future__ import annotations

from pytest_graphrag_eval.scoring import ResultKey

ANSWER_FAMILY = ResultKey(
    "answer_",
    "score",
    prefix=True,
    missing="answer metrics need a reference_answer and an actual_answer; the LLM-judged ones "
    "(answer_recall, answer_precision, answer_f1, answer_relevance) also need an answer judge "
    "(--graphrag-judge)",
)
MATCH_KEYS = (
    ANSWER_FAMILY,
    ResultKey("answer_exact_match", "score", in_summary=False),
    ResultKey("answer_token_f1", "score", column=3),
)
# The judge reports one error for the whole claims-based family (graphrag-eval's answer_eval_error).
_CORRECTNESS_ERROR = "answer_eval_error"
CORRECTNESS_KEYS = (
    ANSWER_FAMILY,
    ResultKey("answer_judge", "text"),
    ResultKey("answer_correctness_reason", "text"),
    *(
        ResultKey(f"answer_{side}_claims_count", "count", error_key=_CORRECTNESS_ERROR)
        for side in ("reference", "actual", "matching")
    ),
    ResultKey("answer_recall", "score", error_key=_CORRECTNESS_ERROR, in_summary=False),
    ResultKey("answer_precision", "score", error_key=_CORRECTNESS_ERROR, in_summary=False),
    ResultKey("answer_f1", "score", error_key=_CORRECTNESS_ERROR, column=1),
    ResultKey(_CORRECTNESS_ERROR, "error"),
)
RELEVANCE_KEYS = (
    ANSWER_FAMILY,
    ResultKey("answer_relevance", "score", column=2),
    ResultKey("answer_relevance_judge", "text"),
    ResultKey("answer_relevance_cost", "cost"),
    ResultKey("answer_relevance_error", "error"),
)
JUDGE_USAGE_KEYS = (
    ResultKey("answer_eval_input_tokens", "tokens"),
    ResultKey("answer_eval_output_tokens", "tokens"),
    ResultKey("answer_eval_cost", "cost"),
)
JUDGE_KEYS = (*CORRECTNESS_KEYS, *RELEVANCE_KEYS, *JUDGE_USAGE_KEYS)
"""What the answer judge's scorer writes: correctness, relevance and the judge's usage."""
_JUDGED_CONTEXT = (
    "judged retrieval metrics need an LLM judge (an llm section in a graphrag-eval config, or "
    "retrieval_judges: true)"
)
RETRIEVAL_JUDGE_KEYS = (
    ResultKey(
        "retrieval_answer_",
        "score",
        prefix=True,
        missing=f"{_JUDGED_CONTEXT}, a reference_answer and an actual retrieval step with document texts",
    ),
    ResultKey(
        "retrieval_context_",
        "score",
        prefix=True,
        missing=f"{_JUDGED_CONTEXT} and an actual retrieval step that matched the reference retrieval step",
    ),
    *(
        ResultKey(f"retrieval_{side}_{measure}", "score")
        for side in ("answer", "context")
        for measure in ("recall", "precision", "f1")
    ),
    *(
        ResultKey(f"retrieval_{side}_{measure}_error", "error")
        for side in ("answer", "context")
        for measure in ("recall", "precision")
    ),
    ResultKey("retrieval_judge", "text"),
    ResultKey("retrieval_judge_input_tokens", "tokens"),
    ResultKey("retrieval_judge_output_tokens", "tokens"),
    ResultKey("retrieval_judge_cost", "cost"),
    ResultKey("actual_steps", "data"),
)
ANSWER_KEYS = (*MATCH_KEYS, *JUDGE_KEYS, *RETRIEVAL_JUDGE_KEYS)
"""Every key the answer scorers declare (families repeat; the catalogue merges equal declarations)."""
