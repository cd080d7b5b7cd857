"""Step matching rules, reference validation, group matching and the StepsScorer."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval import ScoringContext, corpus_from_data, run_evaluation
from pytest_graphrag_eval.corpus.reference_steps import reference_step_problem
from pytest_graphrag_eval.steps.assignment import max_weight_assignment
from pytest_graphrag_eval.steps.groups import mark_matches, score_steps
from pytest_graphrag_eval.steps.match import step_match_score
from pytest_graphrag_eval.steps.scorer import StepsScorer

SPARQL_JSON = "application/sparql-results+json"


def select(variables: list[str], rows: list[tuple[str, ...]], kinds: dict[str, str] | None = None) -> str:
    """SELECT results JSON; every value is a literal unless `kinds` says `uri` for its variable."""
    kinds = kinds or {}
    bindings = [
        {
            name: {"type": kinds.get(name, "literal"), "value": value}
            for name, value in zip(variables, row, strict=True)
        }
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def sparql_step(rows: list[tuple[str, ...]], **extra: Any) -> dict[str, Any]:
    return {
        "name": "sparql_query",
        "output": select(["a", "b"], rows),
        "output_media_type": SPARQL_JSON,
        **extra,
    }


def actual(name: str, output: Any, step_id: str | None = None, status: str = "success", **extra: Any) -> dict:
    step = {"name": name, "output": output, "status": status, **extra}
    if step_id is not None:
        step["id"] = step_id
    return step


def autocomplete(*iris: str, step_id: str | None = None) -> dict[str, Any]:
    return actual("autocomplete_search", select(["iri"], [(iri,) for iri in iris], {"iri": "uri"}), step_id)


def iri_step(iri: str) -> dict[str, Any]:
    return {"name": "iri_discovery", "output": iri}


# --- reference step validation -----------------------------------------------------------------


def test_valid_reference_steps_have_no_problem() -> None:
    assert reference_step_problem(sparql_step([("x", "y")], required_columns=["a"], ordered=True)) is None
    assert reference_step_problem({"name": "lookup", "output": "42"}) is None
    assert (
        reference_step_problem({"name": "t", "output": '{"k": 1}', "output_media_type": "application/json"})
        is None
    )
    assert (
        reference_step_problem({"name": "t", "output": {"k": 1}, "output_media_type": "application/json"})
        is None
    )
    assert reference_step_problem({"name": "retrieval", "output": [{"id": "d1"}], "args": {"k": 3}}) is None
    assert reference_step_problem(iri_step("urn:x")) is None
    assert reference_step_problem({"name": "iri_discovery", "args": {"iri": "urn:x"}}) is None


@pytest.mark.parametrize(
    ("step", "field", "detail"),
    [
        (
            {"name": "sparql_query", "output": "CONSTRUCT text", "output_media_type": SPARQL_JSON},
            "'output'",
            "JSON",
        ),
        ({"name": "sparql_query", "output_media_type": SPARQL_JSON}, "'output'", "missing"),
        (sparql_step([("x", "y")], required_columns=["a", "c"]), "'required_columns'", "'c'"),
        (sparql_step([("x", "y")], required_columns="a"), "'required_columns'", "list"),
        (sparql_step([("x", "y")], required_columns=[1]), "'required_columns'", "list"),
        (sparql_step([("x", "y")], required_columns=["a", "a"]), "'required_columns'", "more than once"),
        (sparql_step([("x", "y")], ordered="yes"), "'ordered'", "true or false"),
        (sparql_step([("x", "y")], ignore_duplicates=1), "'ignore_duplicates'", "true or false"),
        ({"name": "q", "output": "x", "output_media_type": 3}, "'output_media_type'", "media type"),
        ({"name": "retrieve_time_series"}, "'args'", "mapping"),
        ({"name": "retrieve_data_points", "args": {"start": "now"}}, "'args.external_id'", "missing"),
        ({"name": "q", "output": "{not json", "output_media_type": "application/json"}, "'output'", "JSON"),
        ({"name": "retrieval", "output": "not a list"}, "'output'", "document list"),
        ({"name": "retrieval", "output": []}, "'output'", "no relevant document"),
        ({"name": "retrieval", "output": [{"id": "d", "relevance": 0}]}, "'output'", "no relevant document"),
        ({"name": "retrieval", "output": [{"id": "d"}], "args": {"k": 0}}, "'args.k'", "positive"),
        ({"name": "iri_discovery", "output": " "}, "'output'", "IRI"),
        ({"name": "iri_discovery"}, "'args.iri'", "IRI"),
    ],
)
def test_reference_problems_name_the_field(step: dict[str, Any], field: str, detail: str) -> None:
    problem = reference_step_problem(step)
    assert problem is not None
    assert field in problem and detail in problem


def test_invalid_reference_step_becomes_steps_score_error_for_that_question_only() -> None:
    corpus = [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": "bad",
                    "question_text": "?",
                    "reference_steps": [[sparql_step([("x", "y")], required_columns=["z"])]],
                },
                {
                    "id": "good",
                    "question_text": "?",
                    "reference_steps": [[{"name": "lookup", "output": "42"}]],
                },
            ],
        }
    ]
    responses = {
        "bad": {"actual_answer": "", "actual_steps": []},
        "good": {"actual_answer": "", "actual_steps": [actual("lookup", "42", "c1")]},
    }
    bad, good = run_evaluation(corpus, responses)
    assert "steps_score" not in bad
    assert "reference_steps[0][0]" in bad["steps_score_error"] and "'z'" in bad["steps_score_error"]
    assert good["steps_score"] == 1.0


# --- match rules -------------------------------------------------------------------------------


def test_only_successful_actual_steps_match() -> None:
    reference = {"name": "lookup", "output": "42"}
    assert step_match_score(reference, actual("lookup", "42")) == 1.0
    assert step_match_score(reference, actual("lookup", "42", status="error")) == 0.0
    assert step_match_score(reference, {"name": "lookup", "output": "42"}) == 0.0


def test_names_must_be_equal() -> None:
    assert step_match_score({"name": "lookup", "output": "42"}, actual("search", "42")) == 0.0
    assert (
        step_match_score(sparql_step([("x", "y")]), actual("other_query", select(["a", "b"], [("x", "y")])))
        == 0.0
    )


def test_exact_equality_fallback() -> None:
    reference = {"name": "lookup", "output": "42"}
    assert step_match_score(reference, actual("lookup", "42 ")) == 0.0
    assert step_match_score(reference, actual("lookup", None)) == 0.0


def test_sparql_rule_uses_result_comparison() -> None:
    reference = sparql_step([("x", "y")])
    assert step_match_score(reference, actual("sparql_query", select(["p", "q"], [("x", "y")]))) == 1.0
    assert step_match_score(reference, actual("sparql_query", "<a> <b> <c> .")) == 0.0


@pytest.mark.parametrize(
    ("reference_output", "actual_output", "expected"),
    [
        ('{"a": [1, 2], "b": null}', '{ "b": null, "a": [1, 2.0] }', 1.0),
        ({"a": [1, 2]}, '{"a": [1, 2]}', 1.0),
        ('{"a": true}', '{"a": 1}', 0.0),
        ('{"a": 1}', '{"a": "1"}', 0.0),
        ("[1, 2]", "[2, 1]", 0.0),
        ('{"a": 1}', '{"a": 1, "b": 2}', 0.0),
        ('{"a": 1}', "not json", 0.0),
        ('{"a": 1}', "[" * 100_000, 0.0),
    ],
)
def test_json_rule(reference_output: Any, actual_output: str, expected: float) -> None:
    reference = {"name": "tool", "output": reference_output, "output_media_type": "application/json"}
    assert step_match_score(reference, actual("tool", actual_output)) == expected


def retrieval(ids: list[str], **args: Any) -> dict[str, Any]:
    return {
        "name": "retrieval",
        "output": json.dumps([{"id": doc_id, "text": "..."} for doc_id in ids]),
        "args": args,
    }


def test_retrieval_rule_is_recall_at_k() -> None:
    reference = retrieval(["d1", "d3", "d5", "d6"])
    retrieved = retrieval(["d1", "d4", "d3", "d5", "d7"], k=5)
    assert step_match_score(reference, {**retrieved, "status": "success"}) == 0.75


def test_retrieval_k_comes_from_actual_then_reference_then_all() -> None:
    retrieved = {**retrieval(["d9", "d1", "d2"], k=1), "status": "success"}
    assert step_match_score(retrieval(["d1", "d2"], k=2), retrieved) == 0.0
    retrieved["args"] = {"k": "many"}
    assert step_match_score(retrieval(["d1", "d2"], k=2), retrieved) == 0.5
    assert step_match_score(retrieval(["d1", "d2"]), retrieved) == 1.0


def test_retrieval_step_recall_divides_by_the_smaller_of_k_and_relevant() -> None:
    reference = retrieval(["d1", "d2", "d3", "d4", "d5"])
    full_slots = {**retrieval(["d4", "d2"], k=2), "status": "success"}
    assert step_match_score(reference, full_slots) == 1.0
    half = {**retrieval(["d4", "d9", "d1"], k=2), "status": "success"}
    assert step_match_score(reference, half) == 0.5
    few_relevant = {**retrieval(["d9", "d1"], k=10), "status": "success"}
    assert step_match_score(retrieval(["d1", "d2"]), few_relevant) == 0.5


def test_retrieval_ignores_judged_irrelevant_and_unreadable_output() -> None:
    reference = {"name": "retrieval", "output": [{"id": "d1"}, {"id": "d2", "relevance": 0}]}
    assert step_match_score(reference, actual("retrieval", '[{"id": "d1"}]')) == 1.0
    assert step_match_score(reference, actual("retrieval", "<html>error</html>")) == 0.0


def test_iri_discovery_matches_iri_bindings_of_autocomplete_and_sparql() -> None:
    reference = iri_step("urn:uuid:f176963c")
    assert step_match_score(reference, autocomplete("urn:other", "urn:uuid:f176963c")) == 1.0
    assert step_match_score(reference, autocomplete("urn:other")) == 0.0
    sparql = actual("sparql_query", select(["s", "n"], [("urn:uuid:f176963c", "OSLO")], {"s": "uri"}))
    assert step_match_score(reference, sparql) == 1.0
    as_literal = actual("sparql_query", select(["s"], [("urn:uuid:f176963c",)]))
    assert step_match_score(reference, as_literal) == 0.0


def test_iri_discovery_other_sources() -> None:
    reference = {"name": "iri_discovery", "args": {"iri": "<urn:x>"}}
    assert step_match_score(reference, actual("iri_discovery", " urn:x\n")) == 1.0
    assert (
        step_match_score(reference, actual("fts_search", select(["iri"], [("urn:x",)], {"iri": "uri"})))
        == 0.0
    )
    assert step_match_score(reference, actual("autocomplete_search", "urn:x")) == 0.0
    assert step_match_score(reference, {**autocomplete("urn:x"), "status": "error"}) == 0.0


# --- assignment --------------------------------------------------------------------------------


@given(
    st.integers(1, 4).flatmap(
        lambda rows: st.integers(1, 4).flatmap(
            lambda columns: st.lists(
                st.lists(st.integers(0, 5), min_size=columns, max_size=columns), min_size=rows, max_size=rows
            )
        )
    )
)
def test_assignment_is_optimal(weights: list[list[int]]) -> None:
    rows, columns = len(weights), len(weights[0])
    best = 0
    for size in range(min(rows, columns) + 1):
        for chosen_rows in itertools.combinations(range(rows), size):
            for chosen_columns in itertools.permutations(range(columns), size):
                total = sum(weights[r][c] for r, c in zip(chosen_rows, chosen_columns, strict=True))
                best = max(best, total)
    assignment = max_weight_assignment(weights)
    assert len(set(assignment.values())) == len(assignment)
    assert all(weights[row][column] > 0 for row, column in assignment.items())
    assert sum(weights[row][column] for row, column in assignment.items()) == best


# --- groups ------------------------------------------------------------------------------------


def test_group_assignment_beats_greedy_matching() -> None:
    # Reference A is found by both searches, B only by the later one: a greedy pass that
    # gives A the latest step leaves B unmatched.
    group = [[iri_step("urn:a"), iri_step("urn:b")]]
    steps = [autocomplete("urn:a", step_id="s0"), autocomplete("urn:a", "urn:b", step_id="s1")]
    outcome = score_steps(group, steps)
    assert outcome.score == 1.0
    marked = mark_matches(group, steps, outcome.matches)
    assert [step["matches"] for step in marked[0]] == ["s0", "s1"]


def test_later_actual_steps_are_preferred_and_failed_ones_skipped() -> None:
    group = [[{"name": "lookup", "output": "42"}]]
    steps = [
        actual("lookup", "42", "early"),
        actual("lookup", "42", "late"),
        actual("lookup", "42", "failed", "error"),
    ]
    outcome = score_steps(group, steps)
    assert mark_matches(group, steps, outcome.matches)[0][0]["matches"] == "late"


def test_each_actual_step_matches_at_most_one_reference_step() -> None:
    group = [[{"name": "lookup", "output": "42"}, {"name": "lookup", "output": "42"}]]
    assert score_steps(group, [actual("lookup", "42", "c1")]).score == 0.5
    assert score_steps(group, [actual("lookup", "42", "c1"), actual("lookup", "42", "c2")]).score == 1.0


def test_fractional_retrieval_score_counts_in_the_group() -> None:
    group = [[retrieval(["d1", "d2"]), {"name": "lookup", "output": "42"}]]
    steps = [{**retrieval(["d1", "d9"]), "status": "success", "id": "r"}, actual("lookup", "42", "l")]
    assert score_steps(group, steps).score == pytest.approx(0.75)


def two_groups() -> list[list[dict[str, Any]]]:
    return [
        [{"name": "find", "output": "urn:x"}],
        [{"name": "lookup", "output": "42"}, {"name": "count", "output": "2"}],
    ]


def test_last_group_scope_scores_only_the_last_group_against_all_steps() -> None:
    groups = two_groups()
    steps = [actual("lookup", "42", "l"), actual("count", "2", "c")]
    outcome = score_steps(groups, steps, "last_group")
    assert outcome.score == 1.0
    marked = mark_matches(groups, steps, outcome.matches)
    assert "matches" not in marked[0][0]
    assert [step["matches"] for step in marked[1]] == ["l", "c"]
    assert score_steps(groups, steps[:1], "last_group").score == 0.5


def test_all_groups_scope_requires_earlier_groups_before_later_ones() -> None:
    groups = two_groups()
    in_order = [actual("find", "urn:x", "f"), actual("lookup", "42", "l"), actual("count", "2", "c")]
    assert score_steps(groups, in_order, "all_groups").score == 1.0
    out_of_order = [actual("lookup", "42", "l"), actual("find", "urn:x", "f"), actual("count", "2", "c")]
    outcome = score_steps(groups, out_of_order, "all_groups")
    assert outcome.score == 0.5
    assert {match.group_index for match in outcome.matches} == {1}


def test_all_groups_scope_stops_at_a_partly_matched_group() -> None:
    groups = two_groups()
    steps = [actual("find", "urn:x", "f"), actual("lookup", "42", "l")]
    outcome = score_steps(groups, steps, "all_groups")
    assert outcome.score == pytest.approx((0 + 0.5) / 2)
    marked = mark_matches(groups, steps, outcome.matches)
    assert "matches" not in marked[0][0]


def test_all_groups_with_three_groups_and_repeated_step_names() -> None:
    groups = [[{"name": "q", "output": "1"}], [{"name": "q", "output": "2"}], [{"name": "q", "output": "1"}]]
    steps = [actual("q", "1", "a"), actual("q", "2", "b"), actual("q", "1", "c")]
    outcome = score_steps(groups, steps, "all_groups")
    assert outcome.score == 1.0
    assert [step[0]["matches"] for step in mark_matches(groups, steps, outcome.matches)] == ["a", "b", "c"]


def test_unknown_scope_is_rejected() -> None:
    with pytest.raises(ValueError, match="steps scope"):
        score_steps(two_groups(), [], "first_group")


def test_marking_uses_position_without_id_and_drops_stale_marks() -> None:
    groups = [
        [
            {"name": "lookup", "output": "42", "matches": "old"},
            {"name": "count", "output": "2", "matches": "x"},
        ]
    ]
    steps = [{"name": "lookup", "output": "42", "status": "success"}]
    outcome = score_steps(groups, steps)
    marked = mark_matches(groups, steps, outcome.matches)
    assert marked[0][0]["matches"] == "actual_steps[0]"
    assert "matches" not in marked[0][1]
    assert groups[0][0]["matches"] == "old"


# --- scorer ------------------------------------------------------------------------------------


def question(reference_steps: Any = None, **extra: Any) -> Any:
    raw = {"id": "q1", "question_text": "?", **extra}
    if reference_steps is not None:
        raw["reference_steps"] = reference_steps
    return next(corpus_from_data([{"template_id": "t", "questions": [raw]}]).questions())


def run_scorer(reference_steps: Any, response: dict[str, Any], scope: str = "last_group") -> dict[str, Any]:
    return asyncio.run(
        StepsScorer().score(question(reference_steps, reference_answer="x"), response, ScoringContext(scope))
    )


def test_scorer_without_reference_steps_adds_nothing() -> None:
    assert run_scorer(None, {"actual_steps": [actual("lookup", "42")]}) == {}


def test_scorer_without_actual_steps_scores_zero() -> None:
    result = run_scorer([[{"name": "lookup", "output": "42"}]], {"actual_answer": "42"})
    assert result["steps_score"] == 0.0
    assert result["reference_steps"] == [[{"name": "lookup", "output": "42"}]]


def test_scorer_uses_the_context_scope() -> None:
    response = {"actual_steps": [actual("lookup", "42", "l"), actual("count", "2", "c")]}
    assert run_scorer(two_groups(), response, "last_group")["steps_score"] == 1.0
    assert run_scorer(two_groups(), response, "all_groups")["steps_score"] == 0.5


def test_run_evaluation_passes_steps_scope() -> None:
    corpus = [
        {
            "template_id": "t",
            "questions": [{"id": "q", "question_text": "?", "reference_steps": two_groups()}],
        }
    ]
    responses = {
        "q": {"actual_answer": "", "actual_steps": [actual("lookup", "42", "l"), actual("count", "2", "c")]}
    }
    assert run_evaluation(corpus, responses)[0]["steps_score"] == 1.0
    assert run_evaluation(corpus, responses, steps_scope="all_groups")[0]["steps_score"] == 0.5


def test_library_api_mutates_nothing() -> None:
    corpus = [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": "q",
                    "question_text": "?",
                    "reference_steps": [[sparql_step([("x", "y")]), iri_step("urn:a")]],
                }
            ],
        }
    ]
    responses = {
        "q": {
            "actual_answer": "x",
            "actual_steps": [
                autocomplete("urn:a", step_id="s1"),
                actual("sparql_query", select(["a", "b"], [("x", "y")]), "s2"),
            ],
        }
    }
    corpus_before, responses_before = copy.deepcopy(corpus), copy.deepcopy(responses)
    results = run_evaluation(corpus, responses, steps_scope="all_groups")
    assert results[0]["steps_score"] == 1.0
    assert [step["matches"] for step in results[0]["reference_steps"][0]] == ["s2", "s1"]
    assert corpus == corpus_before and responses == responses_before
    results[0]["reference_steps"][0][0]["output"] = "changed"
    results[0]["actual_steps"][0]["output"] = "changed"
    assert corpus == corpus_before and responses == responses_before
