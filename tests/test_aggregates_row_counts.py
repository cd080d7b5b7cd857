"""The aggregates count empty step results from the rows scoring counted, and agree with a fresh parse."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pytest_graphrag_eval import compute_aggregates, run_evaluation
from pytest_graphrag_eval.aggregates import is_empty_output
from pytest_graphrag_eval.evaluation import arun_evaluation
from pytest_graphrag_eval.scoring import ScoredResults

SPARQL_JSON = "application/sparql-results+json"


def select(*values: str) -> str:
    bindings = [{"s": {"type": "uri", "value": value}} for value in values]
    return json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": bindings}})


# An ASK object that also carries an empty `results` member: empty to the aggregates, an ASK to scoring.
ASK_WITH_RESULTS = json.dumps({"head": {}, "boolean": True, "results": {"bindings": []}})
OUTPUTS = {
    "q_empty": select(),
    "q_one": select("http://example.org/a"),
    "q_two": select("http://example.org/a", "http://example.org/b"),
    "q_ask": ASK_WITH_RESULTS,
    "q_html": "<html>502 Bad Gateway</html>",
}


def corpus() -> list[dict[str, Any]]:
    step = {"name": "sparql_query", "args": {"query": "SELECT ..."}, "output_media_type": SPARQL_JSON}
    questions = [
        {
            "id": question_id,
            "question_text": question_id,
            "reference_steps": [[{**step, "output": select("x")}]],
        }
        for question_id in OUTPUTS
    ]
    return [{"template_id": "t", "questions": questions}]


def responses() -> dict[str, Any]:
    return {
        question_id: {
            "actual_answer": "a",
            "actual_steps": [
                {"id": "1", "name": "autocomplete_search", "status": "success", "output": "[]"},
                {"id": "2", "name": "sparql_query", "status": "success", "output": output},
            ],
        }
        for question_id, output in OUTPUTS.items()
    }


def test_scoring_notes_the_rows_of_the_select_outputs_it_parsed() -> None:
    results = run_evaluation(corpus(), responses(), steps_scope="all_groups")
    assert isinstance(results, ScoredResults) and results.row_counts is not None
    counted = {
        result["question_id"]: results.row_counts.rows(result["actual_steps"][1]["output"])
        for result in results
    }
    # Not parsed by scoring (a search step, not compared) or not a SELECT: left to the aggregates' parse.
    assert counted == {"q_empty": 0, "q_one": 1, "q_two": 2, "q_ask": None, "q_html": None}
    assert results.row_counts.rows(results[0]["actual_steps"][0]["output"]) is None
    # An equal text that is another object is not looked up by its value.
    assert results.row_counts.rows(str(select("http://example.org/a")).encode().decode()) is None


def test_aggregates_from_counted_rows_equal_a_fresh_parse() -> None:
    results = run_evaluation(corpus(), responses(), steps_scope="all_groups")
    counted = compute_aggregates(results)
    parsed = compute_aggregates(list(results))  # a plain list: every output parsed
    assert counted == parsed
    assert counted["per_template"]["t"]["steps"]["empty_results"] == {
        "autocomplete_search": 5,
        "sparql_query": sum(is_empty_output(output) for output in OUTPUTS.values()),
    }
    assert counted["per_template"]["t"]["steps"]["empty_results"]["sparql_query"] == 2  # empty SELECT, ASK


def test_an_output_replaced_after_scoring_is_parsed_again() -> None:
    results = run_evaluation(corpus(), responses(), steps_scope="all_groups")
    empty_step = next(result for result in results if result["question_id"] == "q_empty")["actual_steps"][1]
    full_step = next(result for result in results if result["question_id"] == "q_one")["actual_steps"][1]
    empty_step["output"], full_step["output"] = full_step["output"], select()
    steps = compute_aggregates(results)["per_template"]["t"]["steps"]
    assert steps == compute_aggregates(list(results))["per_template"]["t"]["steps"]
    assert steps["empty_results"]["sparql_query"] == 2  # q_one's new empty output and the ASK


def test_the_async_form_returns_plain_results_with_the_same_aggregates() -> None:
    results = asyncio.run(arun_evaluation(corpus(), responses(), steps_scope="all_groups"))
    assert type(results) is list
    assert compute_aggregates(results) == compute_aggregates(
        run_evaluation(corpus(), responses(), steps_scope="all_groups")
    )
