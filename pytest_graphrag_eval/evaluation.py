"""run_evaluation(): score every question of a corpus against its response.

The result of one question is a flat dict: the seed's copied keys (ids, text,
reference and actual answer and steps, tokens, elapsed) merged with the keys
every applicable scorer returns. Only success responses are scored; an error
response or a missing one yields `status: error` with the reason in `error`.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question, corpus_from_data
from pytest_graphrag_eval.corpus.responses import NUMERIC_RESPONSE_KEYS, validate_response
from pytest_graphrag_eval.errors import ResponseError, SourceLocation
from pytest_graphrag_eval.scoring import Scorer, ScoringContext
from pytest_graphrag_eval.steps.groups import SCOPES

STEPS_SCOPES = SCOPES
NO_RESPONSE_ERROR = "no response for this question"


def default_scorers() -> list[Scorer]:
    """Scorers that need no LLM client to exist: steps, retrieval, and eRAG (a no-op unless configured)."""
    from pytest_graphrag_eval.retrieval.erag_scorer import ERagScorer
    from pytest_graphrag_eval.retrieval.scorer import RetrievalScorer
    from pytest_graphrag_eval.steps.scorer import StepsScorer

    return [StepsScorer(), RetrievalScorer(), ERagScorer()]


def run_evaluation(
    reference_qas: Corpus | Sequence[Mapping[str, Any]],
    chat_responses: Mapping[str, Mapping[str, Any]],
    *,
    steps_scope: str = "last_group",
    scorers: Sequence[Scorer] | None = None,
    judge: Any = None,
    options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Score each question of `reference_qas` against `chat_responses[question_id]`.

    Synchronous wrapper over `arun_evaluation`; use that one inside a running event loop.
    """
    return asyncio.run(
        arun_evaluation(
            reference_qas,
            chat_responses,
            steps_scope=steps_scope,
            scorers=scorers,
            judge=judge,
            options=options,
        )
    )


async def arun_evaluation(
    reference_qas: Corpus | Sequence[Mapping[str, Any]],
    chat_responses: Mapping[str, Mapping[str, Any]],
    *,
    steps_scope: str = "last_group",
    scorers: Sequence[Scorer] | None = None,
    judge: Any = None,
    options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Async form of `run_evaluation`: all questions are scored concurrently."""
    corpus = corpus_from_data(reference_qas)
    check_responses_match(corpus.question_ids(), chat_responses)
    context = make_context(steps_scope, judge, options)
    active = list(scorers) if scorers is not None else default_scorers()
    return list(
        await asyncio.gather(
            *(
                evaluate_question(question, chat_responses.get(question.question_id), active, context)
                for question in corpus.questions()
            )
        )
    )


def make_context(
    steps_scope: str, judge: Any = None, options: Mapping[str, Any] | None = None
) -> ScoringContext:
    """Build a scoring context, rejecting an unknown steps scope early."""
    if steps_scope not in STEPS_SCOPES:
        raise ValueError(f"steps_scope must be one of {', '.join(STEPS_SCOPES)}, got {steps_scope!r}")
    return ScoringContext(steps_scope=steps_scope, judge=judge, options=dict(options or {}))


def check_responses_match(question_ids: Iterable[str], chat_responses: Mapping[str, Any]) -> None:
    """A response for a question the corpus does not have is a stale or wrong file: say so."""
    unknown = sorted(set(chat_responses) - set(question_ids))
    if unknown:
        shown = ", ".join(repr(question_id) for question_id in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ResponseError(
            f"responses for questions the corpus does not have: {shown}{more}",
            SourceLocation(),
            "question_id",
        )


async def evaluate_question(
    question: Question,
    response: Mapping[str, Any] | None,
    scorers: Sequence[Scorer],
    context: ScoringContext,
) -> dict[str, Any]:
    """Score one question; scorer failures become `<scorer>_error` keys, never exceptions."""
    result = base_result(question, response)
    if result["status"] != "success":
        return result
    assert response is not None
    for scorer in scorers:
        try:
            result.update(await scorer.score(question, dict(response), context))
        except Exception as error:
            result[f"{scorer.name}_error"] = f"{scorer.name} scorer failed: {type(error).__name__}: {error}"
    return result


def base_result(question: Question, response: Mapping[str, Any] | None) -> dict[str, Any]:
    """The seed's copied keys for one question, before any scorer runs."""
    result: dict[str, Any] = {
        "template_id": question.template_id,
        "question_id": question.question_id,
        "question_text": question.question_text,
    }
    if question.reference_answer is not None:
        result["reference_answer"] = copy.deepcopy(question.reference_answer)
    if question.reference_steps is not None:
        result["reference_steps"] = copy.deepcopy(question.reference_steps)
    if response is None:
        result.update(status="error", error=NO_RESPONSE_ERROR)
        return result
    response = validate_response(response, SourceLocation(question_id=question.question_id))
    if response.get("status") == "error":
        result.update(status="error", error=str(response.get("error") or "the agent reported an error"))
        return result
    result["status"] = "success"
    if response.get("actual_answer") is not None:
        result["actual_answer"] = response["actual_answer"]
    if response.get("actual_steps") is not None:
        result["actual_steps"] = copy.deepcopy(response["actual_steps"])
    for key in NUMERIC_RESPONSE_KEYS:
        if response.get(key) is not None:
            result[key] = response[key]
    return result
