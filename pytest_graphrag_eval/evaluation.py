"""run_evaluation(): score every question of a corpus against its response.

A question's result is a flat dict of the seed's copied keys and every applicable scorer's keys;
several attempts are scored and combined as the plugin's report combines them (docs/library.md).
Responses for questions outside the corpus are not scored but warned about.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from pytest_graphrag_eval.adapters.tool_names import TOOL_NAMES_OPTION, rename_tools, tool_names_setting
from pytest_graphrag_eval.compare.repeats import combine_attempts
from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question, corpus_from_data
from pytest_graphrag_eval.corpus.response_records import (
    NUMERIC_RESPONSE_KEYS,
    ResponseRecord,
    responses_from_memory,
)
from pytest_graphrag_eval.corpus.responses import key_by_corpus
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.formats.json_copy import copy_json_like
from pytest_graphrag_eval.formats.sparql_results import SelectRowCounts
from pytest_graphrag_eval.llm.errors import CallRefused
from pytest_graphrag_eval.llm.event_loop import run_coroutine
from pytest_graphrag_eval.llm.judge import most_telling
from pytest_graphrag_eval.report_model import HUGE_INTEGER, REFUSAL_KEY, huge_integer_key
from pytest_graphrag_eval.scorer_factory import build_scorers, default_scorers
from pytest_graphrag_eval.scoring import ScoredResults, Scorer, ScoringContext
from pytest_graphrag_eval.steps import SCOPES

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.judge import Judge

STEPS_SCOPES = SCOPES
ChatResponses: TypeAlias = Mapping[str, object] | Sequence[object]
"""Responses as the library takes them: a dict keyed by question id (a value one response or the list of
its attempts) or a list of responses; every value is checked (`responses_from_memory`)."""
NO_RESPONSE_ERROR = "no response for this question"


def run_evaluation(
    reference_qas: Corpus | Sequence[Mapping[str, object]],
    chat_responses: ChatResponses,
    config_file_path: str | PathLike[str] | None = None,
    *,
    steps_scope: str = "last_group",
    scorers: Sequence[Scorer] | None = None,
    judge: Judge | None = None,
    options: Mapping[str, object] | None = None,
) -> list[dict[str, Any]]:
    """Score each question of `reference_qas` against `chat_responses[question_id]`.

    Arguments as graphrag-eval's (templates or a `Corpus`, responses checked as a file's, an optional
    config file choosing answer metrics and judge); synchronous, so inside an event loop use
    `await arun_evaluation(...)`.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_evaluation() runs its own event loop and cannot be called inside one; "
            "in async code use `await arun_evaluation(...)` with the same arguments"
        )
    # The steps scorer notes the SELECT outputs' row counts for `compute_aggregates`; only this
    # synchronous form returns them (`ScoredResults`).
    row_counts = SelectRowCounts()
    results = run_coroutine(
        _checked_and_scored(
            reference_qas,
            chat_responses,
            config_file_path,
            steps_scope=steps_scope,
            scorers=scorers,
            judge=judge,
            options=options,
            row_counts=row_counts,
        )
    )
    return ScoredResults(results, row_counts)


async def arun_evaluation(
    reference_qas: Corpus | Sequence[Mapping[str, object]],
    chat_responses: ChatResponses,
    config_file_path: str | PathLike[str] | None = None,
    *,
    steps_scope: str = "last_group",
    scorers: Sequence[Scorer] | None = None,
    judge: Judge | None = None,
    options: Mapping[str, object] | None = None,
) -> list[dict[str, Any]]:
    """Async form of `run_evaluation`: all questions are scored concurrently.

    `scorers` and a config file exclude each other; a judge client built here for the file's metrics
    is closed before returning.
    """
    return await _checked_and_scored(
        reference_qas,
        chat_responses,
        config_file_path,
        steps_scope=steps_scope,
        scorers=scorers,
        judge=judge,
        options=options,
        row_counts=None,
    )


async def _checked_and_scored(
    reference_qas: Corpus | Sequence[Mapping[str, object]],
    chat_responses: ChatResponses,
    config_file_path: str | PathLike[str] | None,
    *,
    steps_scope: str,
    scorers: Sequence[Scorer] | None,
    judge: Judge | None,
    options: Mapping[str, object] | None,
    row_counts: SelectRowCounts | None,
) -> list[dict[str, Any]]:
    corpus = corpus_from_data(reference_qas)
    # keyed by the corpus held here, as the plugin keys them, so a text-keyed trace is scored
    responses = key_by_corpus(responses_from_memory(chat_responses), [corpus])
    for message in check_responses_match(corpus.question_ids(), responses).warnings:
        warnings.warn(message, UnknownResponsesWarning, stacklevel=2)
    if config_file_path is None:
        context = make_context(steps_scope, judge, options, row_counts=row_counts)
        active = list(scorers) if scorers is not None else default_scorers()
        # Rule-based scorers only: nothing waits, so one task scores the questions in turn.
        waits = scorers is not None or judge is not None or context.erag is not None
        return await _evaluate_all(corpus, responses, active, context, concurrently=waits)
    if scorers is not None:
        raise ConfigurationError("run_evaluation: give either scorers or a config file, not both")
    from pytest_graphrag_eval.answers.judge_settings import resolve_judge_settings

    make_context(steps_scope)  # a bad scope is said before a judge client is built
    resolved = resolve_judge_settings((), Path(config_file_path))  # the plugin's rule, no option layers
    owned = None
    if judge is None and resolved.answers.needs_llm:
        from pytest_graphrag_eval.llm import JudgeClient

        judge = owned = JudgeClient(resolved.llm)
    try:
        active = build_scorers(resolved.answers, judge)
        context = make_context(steps_scope, judge, options, row_counts=row_counts)
        waits = judge is not None or context.erag is not None  # the answer metrics wait only on a judge
        return await _evaluate_all(corpus, responses, active, context, concurrently=waits)
    finally:
        if owned is not None:
            await owned.aclose()


async def _evaluate_all(
    corpus: Corpus,
    responses: Mapping[str, Sequence[ResponseRecord]],
    scorers: Sequence[Scorer],
    context: ScoringContext,
    *,
    concurrently: bool = True,
) -> list[dict[str, Any]]:
    """Every question's result, in corpus order; `concurrently`: a task each, for scorers that wait."""
    pending = (
        evaluate_attempts(
            question, responses.get(question.question_id, ()), scorers, context, concurrently=concurrently
        )
        for question in corpus.questions()
    )
    return list(await asyncio.gather(*pending)) if concurrently else [await one for one in pending]


async def evaluate_attempts(
    question: Question,
    attempts: Sequence[ResponseRecord],
    scorers: Sequence[Scorer],
    context: ScoringContext,
    *,
    concurrently: bool = False,
) -> dict[str, Any]:
    """One question's result from all its attempts: the attempt's own for one (or none), else the
    attempts combined as the plugin's JSON report combines them (see the module docstring)."""
    if len(attempts) <= 1:
        return await evaluate_question(question, attempts[0] if attempts else None, scorers, context)
    pending = (evaluate_question(question, one, scorers, context) for one in attempts)
    results = list(await asyncio.gather(*pending)) if concurrently else [await one for one in pending]
    return combine_attempts(results, [result["status"] == "success" for result in results])[0]


def make_context(
    steps_scope: str,
    judge: Judge | None = None,
    options: Mapping[str, object] | None = None,
    *,
    source: str = "options",
    row_counts: SelectRowCounts | None = None,
) -> ScoringContext:
    """A scoring context with every option checked now and eRAG built once; a bad `tool_names`,
    `retrieval_k` or `erag` is a `ConfigurationError` naming `source`."""
    if steps_scope not in STEPS_SCOPES:
        raise ValueError(f"steps_scope must be one of {', '.join(STEPS_SCOPES)}, got {steps_scope!r}")
    from pytest_graphrag_eval.retrieval.scorer import retrieval_k_setting

    options = options or {}
    erag = None
    if options.get("erag") is not None:
        from pytest_graphrag_eval.retrieval.erag_config import build_erag

        try:
            erag = build_erag(options["erag"], judge)
        except ConfigurationError as error:
            raise ConfigurationError(f"{source}: {error}") from None
    return ScoringContext(
        steps_scope=steps_scope,
        judge=judge,
        tool_names=tool_names_setting(options.get(TOOL_NAMES_OPTION), source),
        retrieval_k=retrieval_k_setting(options.get("retrieval_k"), source),
        erag=erag,
        row_counts=row_counts,
    )


class UnknownResponsesWarning(UserWarning):
    """Responses were given for questions the corpus does not have; they are not scored."""


@dataclass(frozen=True)
class ResponsesCheck:
    """How a set of responses lines up with a corpus: answers outside it are ignored, as graphrag-eval
    does, but reported so a stale responses file does not go unnoticed."""

    unknown_question_ids: tuple[str, ...] = ()
    extra_warnings: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[str]:
        """Human-readable warnings, empty when every response belongs to the corpus."""
        if not self.unknown_question_ids:
            return list(self.extra_warnings)
        shown = ", ".join(repr(question_id) for question_id in self.unknown_question_ids[:5])
        extra = len(self.unknown_question_ids) - 5
        more = f" and {extra} more" if extra > 0 else ""
        count = len(self.unknown_question_ids)
        unknown = f"{count} response(s) for questions the corpus does not have, not scored: {shown}{more}"
        return [unknown, *self.extra_warnings]


def check_responses_match(
    question_ids: Iterable[str], chat_responses: Mapping[str, object]
) -> ResponsesCheck:
    """List the responses whose question the corpus does not have (sorted ids)."""
    return ResponsesCheck(tuple(sorted(set(chat_responses) - set(question_ids))))


async def evaluate_question(
    question: Question, response: ResponseRecord | None, scorers: Sequence[Scorer], context: ScoringContext
) -> dict[str, Any]:
    """Score one question; scorer failures become `<scorer>_error` keys, never exceptions."""
    if response is not None:  # the agent's tool names mapped to the corpus' (`tool_names` option)
        renamed = rename_tools(response, context.tool_names)
        if renamed is not response:
            response = ResponseRecord(renamed, response.source, response.attempt)
    result = base_result(question, response, copy_reference_steps=False)
    if result["status"] == "success":
        assert response is not None
        context = context.for_response(response.source)
        refused: list[str] = []  # each scorer's refused judge call (`judge_refusal`), written last
        for scorer in scorers:
            try:
                keys = await scorer.score(question, dict(response), context)
            except Exception as error:
                result[f"{scorer.name}_error"] = (
                    f"{scorer.name} scorer failed: {type(error).__name__}: {error}"
                )
                if isinstance(error, CallRefused):
                    refused.append(error.reason)
            else:
                if REFUSAL_KEY in keys:
                    refused.append(keys.pop(REFUSAL_KEY))
                huge = huge_integer_key(keys)
                if huge is not None:  # `float()` of it would end the aggregates in an OverflowError
                    result[f"{scorer.name}_error"] = (
                        f"{scorer.name} scorer returned {HUGE_INTEGER} as {huge!r}"
                    )
                else:
                    result.update(keys)
        if refused:  # the most telling reason: a budget stop makes the question not evaluated
            result[REFUSAL_KEY] = str(most_telling(refused) or refused[0])  # else a user scorer's own
    # The steps scorer returns its own marked copy; the question's steps are copied only when none did.
    if question.reference_steps is not None and result["reference_steps"] is question.reference_steps:
        result["reference_steps"] = copy_json_like(question.reference_steps)
    return result


def base_result(
    question: Question, response: ResponseRecord | None, *, copy_reference_steps: bool = True
) -> dict[str, Any]:
    """The seed's copied keys for one question; without `copy_reference_steps` the caller must copy
    `reference_steps` before the result leaves it."""
    result: dict[str, Any] = {
        "template_id": question.template_id,
        "question_id": question.question_id,
        "question_text": question.question_text,
    }
    if question.reference_answer is not None:
        result["reference_answer"] = copy_json_like(question.reference_answer)
    if question.reference_steps is not None:
        steps = question.reference_steps
        result["reference_steps"] = copy_json_like(steps) if copy_reference_steps else steps
    if response is None:
        result.update(status="error", error=NO_RESPONSE_ERROR)
        return result
    if response.is_error:
        result.update(status="error", error=str(response.get("error") or "the agent reported an error"))
        return result
    result["status"] = "success"
    if response.get("actual_answer") is not None:
        result["actual_answer"] = response["actual_answer"]
    if response.get("actual_steps") is not None:
        result["actual_steps"] = copy_json_like(response["actual_steps"])
    for key in NUMERIC_RESPONSE_KEYS:
        if response.get(key) is not None:
            result[key] = response[key]
    return result
