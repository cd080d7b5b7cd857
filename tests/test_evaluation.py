"""run_evaluation: copied keys, error shapes, scorer isolation, and immutability of inputs."""

from __future__ import annotations

import asyncio
import copy

import pytest
from plugin_support import corpus, good_responses, response

from pytest_graphrag_eval import compute_aggregates, run_evaluation
from pytest_graphrag_eval.corpus.reference_corpus import corpus_from_data
from pytest_graphrag_eval.evaluation import UnknownResponsesWarning, check_responses_match
from pytest_graphrag_eval.scoring import ScoringContext


def responses_by_id() -> dict:
    return {r["question_id"]: r for r in good_responses()}


def test_results_follow_corpus_order_and_copy_seed_keys() -> None:
    results = run_evaluation(corpus(), responses_by_id())
    assert [r["question_id"] for r in results] == ["q1", "q2", "q3"]
    first = results[0]
    for key in (
        "template_id",
        "question_text",
        "reference_answer",
        "reference_steps",
        "status",
        "actual_answer",
        "actual_steps",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "elapsed_sec",
    ):
        assert key in first
    assert first["steps_score"] == 1 and first["reference_steps"][0][0]["matches"] == "call_q1"


def test_inputs_are_never_mutated() -> None:
    reference, answers = corpus(), responses_by_id()
    before = copy.deepcopy((reference, answers))
    run_evaluation(reference, answers)
    assert (reference, answers) == before


@pytest.mark.parametrize("scorers", [None, []], ids=["steps scorer", "no scorer"])
def test_editing_a_result_never_edits_the_corpus_or_another_result(scorers: list | None) -> None:
    loaded = corpus_from_data(corpus())
    answers = responses_by_id()
    answers["q2"] = {"question_id": "q2", "status": "error", "error": "quota"}
    first = run_evaluation(loaded, answers, scorers=scorers)
    before = copy.deepcopy([question.reference_steps for question in loaded.questions()])
    for result in first:
        result["reference_steps"][0][0]["name"] = "edited"
        result["reference_steps"][0].append({"name": "added"})
    assert [question.reference_steps for question in loaded.questions()] == before
    second = run_evaluation(loaded, answers, scorers=scorers)
    assert [result["reference_steps"][0][0]["name"] for result in second] == ["sparql_query"] * 3


def test_error_and_missing_responses() -> None:
    answers = responses_by_id()
    answers["q1"] = {"question_id": "q1", "status": "error", "error": "quota"}
    del answers["q2"]
    results = run_evaluation(corpus(), answers)
    assert (
        results[0]["status"] == "error" and results[0]["error"] == "quota" and "steps_score" not in results[0]
    )
    assert results[1]["status"] == "error" and results[1]["error"] == "no response for this question"
    assert results[2]["status"] == "success"


def test_unknown_response_is_a_warning_and_not_scored() -> None:
    answers = responses_by_id() | {"zz": response("q1") | {"question_id": "zz"}}
    with pytest.warns(UnknownResponsesWarning, match="'zz'"):
        results = run_evaluation(corpus(), answers)
    assert [result["question_id"] for result in results] == ["q1", "q2", "q3"]
    check = check_responses_match(["q1", "q2", "q3"], answers)
    assert check.unknown_question_ids == ("zz",)
    assert check.warnings == ["1 response(s) for questions the corpus does not have, not scored: 'zz'"]
    assert check_responses_match(["q1", "q2", "q3", "zz"], answers).warnings == []


def test_all_groups_scope_and_unknown_scope() -> None:
    assert run_evaluation(corpus(), responses_by_id(), steps_scope="all_groups")[0]["steps_score"] == 1
    with pytest.raises(ValueError, match="steps_scope"):
        run_evaluation(corpus(), responses_by_id(), steps_scope="first")


class Exploding:
    name = "exploding"

    async def score(self, question, response, context: ScoringContext) -> dict:
        raise RuntimeError("bug in a custom scorer")


class Constant:
    name = "constant"

    async def score(self, question, response, context: ScoringContext) -> dict:
        return {"constant_score": 0.25}


def test_a_failing_scorer_becomes_an_error_key_and_others_still_run() -> None:
    results = run_evaluation(corpus(), responses_by_id(), scorers=[Exploding(), Constant()])
    assert results[0]["exploding_error"] == "exploding scorer failed: RuntimeError: bug in a custom scorer"
    assert results[0]["constant_score"] == 0.25


class Boundless:
    name = "boundless"

    async def score(self, question, response, context: ScoringContext) -> dict:
        return {"boundless_score": 10**400}


def test_a_scorer_value_no_float_holds_becomes_an_error_key_and_aggregates_still_run() -> None:
    results = run_evaluation(corpus(), responses_by_id(), scorers=[Boundless(), Constant()])
    assert results[0]["boundless_error"] == (
        "boundless scorer returned an integer beyond a float's range (about 1.8e308) as 'boundless_score'"
    )
    assert "boundless_score" not in results[0] and results[0]["constant_score"] == 0.25
    assert compute_aggregates(results)["micro"]["constant_score"]["mean"] == 0.25


class Rendezvous:
    """A custom scorer whose first question waits until a later question is scored: it needs concurrency."""

    name = "rendezvous"

    def __init__(self) -> None:
        self.later_scored: asyncio.Event | None = None

    async def score(self, question, response, context: ScoringContext) -> dict:
        if self.later_scored is None:
            self.later_scored = asyncio.Event()
            await asyncio.wait_for(self.later_scored.wait(), timeout=10)
        else:
            self.later_scored.set()
        return {"rendezvous_score": 1.0}


def test_questions_are_scored_concurrently() -> None:
    results = run_evaluation(corpus(), good_responses(), scorers=[Rendezvous()])
    assert [result.get("rendezvous_score") for result in results] == [1.0, 1.0, 1.0]
