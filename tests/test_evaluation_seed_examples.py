"""The graphrag-eval README examples, run through the public library API.

tests/data/seed_corpus.yaml is the README's reference corpus (OSLO, STAVANGER,
NO2 SGR, NO1 SGR); tests/data/seed_examples.json holds its example target
response (STAVANGER lines) and its example evaluation result for OSLO, whose
actual steps are the OSLO response.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval import compute_aggregates, load_corpus, load_responses, run_evaluation

DATA = Path(__file__).parent / "data"
OSLO = "c10bbc8dce98a4b8832d125134a16153"
STAVANGER = "8bbea9a10876a04ad77a82fd2aedee40"
NO2 = "d566b1e9da418ac83e520a66cc7af4d7"
NO1 = "03d4283773b4387114342518176b128b"
TRANSFORMERS = "list_all_transformers_within_Substation_SUBSTATION"
SUBSTATIONS = "list_all_substations_within_bidding_zone_REGION"
# Partial credit on the SPARQL step, next to graphrag-eval's keys (new keys, old values unchanged).
PARTIAL_CREDIT = {"steps_result_precision", "steps_result_recall", "steps_result_f1"}
SUCCESS_KEYS = {
    "template_id",
    "question_id",
    "question_text",
    "reference_answer",
    "reference_steps",
    "status",
    "actual_answer",
    "actual_steps",
    "steps_score",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "elapsed_sec",
} | PARTIAL_CREDIT


@pytest.fixture(scope="module")
def examples() -> dict[str, Any]:
    return json.loads((DATA / "seed_examples.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(DATA / "seed_corpus.yaml")


def reference_output(corpus, question_id: str) -> dict[str, Any]:
    question = next(question for question in corpus.questions() if question.question_id == question_id)
    return json.loads(question.reference_steps[-1][0]["output"])


def sparql_response(output: dict[str, Any], step_id: str) -> dict[str, Any]:
    return {
        "actual_answer": "see the steps",
        "actual_steps": [
            {
                "name": "sparql_query",
                "args": {"query": "SELECT ..."},
                "id": step_id,
                "status": "success",
                "output": json.dumps(output),
            }
        ],
        "input_tokens": 1000,
        "output_tokens": 10,
        "total_tokens": 1010,
        "elapsed_sec": 2.0,
    }


def reshaped(output: dict[str, Any], drop_last_row: bool) -> dict[str, Any]:
    """The same result with renamed variables, an extra column, shuffled rows (and maybe a row less)."""
    bindings = output["results"]["bindings"][: -1 if drop_last_row else None]
    rows = [
        {
            "name": row["substationName"],
            "region": {"type": "uri", "value": "urn:region"},
            "iri": row["substation"],
        }
        for row in bindings
    ]
    random.Random(7).shuffle(rows)
    return {"head": {"vars": ["name", "region", "iri"]}, "results": {"bindings": rows}}


@pytest.fixture(scope="module")
def responses(corpus, examples) -> dict[str, Any]:
    return {
        OSLO: examples["oslo_response"],
        STAVANGER: {"error": "Error message", "status": "error"},
        NO2: sparql_response(reshaped(reference_output(corpus, NO2), drop_last_row=False), "call_no2"),
        NO1: sparql_response(reshaped(reference_output(corpus, NO1), drop_last_row=True), "call_no1"),
    }


@pytest.fixture(scope="module")
def results(corpus, responses) -> dict[str, dict[str, Any]]:
    return {result["question_id"]: result for result in run_evaluation(corpus, responses)}


def test_seed_corpus_loads_without_problems(corpus) -> None:
    assert [template.template_id for template in corpus.templates] == [TRANSFORMERS, SUBSTATIONS]
    assert corpus.question_ids() == [OSLO, STAVANGER, NO2, NO1]
    assert all(not question.reference_problems for question in corpus.questions())


def test_oslo_result_equals_the_seed_example_result(results, examples) -> None:
    expected = examples["oslo_expected_result"]
    result = results[OSLO]
    assert set(result) == SUCCESS_KEYS
    assert {key: result[key] for key in expected} == expected
    assert result["steps_score"] == 1
    assert {key: result[key] for key in PARTIAL_CREDIT} == dict.fromkeys(PARTIAL_CREDIT, 1.0)
    assert result["reference_steps"][0][0]["matches"] == "call_3b3zHJnBXwYYSg04BiFGAAgO"


def test_error_response_keeps_only_copied_keys(results) -> None:
    result = results[STAVANGER]
    assert result["status"] == "error" and result["error"] == "Error message"
    assert "steps_score" not in result
    assert "matches" not in result["reference_steps"][0][0]


def test_bidding_zone_results_match_despite_renamed_shuffled_and_extra_columns(results) -> None:
    assert results[NO2]["steps_score"] == 1.0
    assert results[NO2]["reference_steps"][0][0]["matches"] == "call_no2"
    assert results[NO1]["steps_score"] == 0.0
    assert "matches" not in results[NO1]["reference_steps"][0][0]


def test_one_zone_does_not_match_the_other(corpus) -> None:
    swapped = {
        NO2: sparql_response(reference_output(corpus, NO1), "call_no1_rows"),
        NO1: sparql_response(reference_output(corpus, NO2), "call_no2_rows"),
    }
    by_id = {result["question_id"]: result for result in run_evaluation(corpus, swapped)}
    assert by_id[NO2]["steps_score"] == 0.0 and by_id[NO1]["steps_score"] == 0.0
    assert by_id[OSLO]["status"] == "error" and by_id[STAVANGER]["status"] == "error"


def test_aggregates_of_the_seed_run(results) -> None:
    aggregates = compute_aggregates(list(results.values()))
    assert set(aggregates) == {"per_template", "micro", "macro"}
    transformers = aggregates["per_template"][TRANSFORMERS]
    substations = aggregates["per_template"][SUBSTATIONS]
    assert transformers["number_of_error_samples"] == 1 and transformers["number_of_success_samples"] == 1
    assert transformers["steps_score"] == {"sum": 1, "mean": 1, "median": 1, "min": 1, "max": 1}
    assert transformers["steps"]["total"] == {"autocomplete_search": 1, "sparql_query": 1}
    assert transformers["steps"]["once_per_sample"] == {"autocomplete_search": 1, "sparql_query": 1}
    assert substations["steps_score"] == {"sum": 1, "mean": 0.5, "median": 0.5, "min": 0, "max": 1}
    for stats in (transformers, substations, aggregates["micro"]):
        for metric in ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec", "steps_score"):
            assert set(stats[metric]) == {"sum", "mean", "median", "min", "max"}
    micro = aggregates["micro"]
    assert micro["number_of_error_samples"] == 1 and micro["number_of_success_samples"] == 3
    assert micro["steps_score"]["sum"] == 2 and micro["steps_score"]["mean"] == pytest.approx(2 / 3)
    assert aggregates["macro"]["steps_score"] == {"mean": pytest.approx(0.75)}
    assert (
        set(aggregates["macro"])
        == {
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "elapsed_sec",
            "steps_score",
        }
        | PARTIAL_CREDIT
    )


def stavanger_lines_corpus(examples: dict[str, Any], required: list[str]) -> list[dict[str, Any]]:
    """A reference for the seed's target response: its successful output, rows reversed."""
    response = examples["stavanger_lines_response"]
    success = next(step for step in response["actual_steps"] if step["id"] == "call_Qm1mzX7g5q9SVPrR2QzEMTp3")
    output = json.loads(success["output"])
    output["results"]["bindings"].reverse()
    step = {
        "name": "sparql_query",
        "args": {"query": "SELECT ..."},
        "output": json.dumps(output),
        "output_media_type": "application/sparql-results+json",
        "required_columns": required,
    }
    question = {"id": response["question_id"], "question_text": "lines", "reference_steps": [[step]]}
    return [{"template_id": "lines", "questions": [question]}]


@pytest.mark.parametrize("required", [["substation2", "substation2Name", "line", "lineName"], ["lineName"]])
def test_seed_target_response_matches_its_successful_query_not_the_failed_one(
    examples, tmp_path, required: list[str]
) -> None:
    response = examples["stavanger_lines_response"]
    path = tmp_path / "responses.json"
    path.write_text(json.dumps([response]), encoding="utf-8")
    responses = load_responses(path)
    before = copy.deepcopy(responses)
    [result] = run_evaluation(stavanger_lines_corpus(examples, required), responses)
    assert result["steps_score"] == 1.0
    assert result["reference_steps"][0][0]["matches"] == "call_Qm1mzX7g5q9SVPrR2QzEMTp3"
    assert responses == before
    aggregates = compute_aggregates([result])
    assert aggregates["per_template"]["lines"]["steps"]["errors"] == {"sparql_query": 1}
    assert aggregates["per_template"]["lines"]["steps"]["total"] == {
        "autocomplete_search": 1,
        "sparql_query": 2,
    }
