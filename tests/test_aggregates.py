"""compute_aggregates: the seed's per_template / micro / macro shape, for any numeric key."""

from __future__ import annotations

import json

import pytest

from pytest_graphrag_eval import compute_aggregates
from pytest_graphrag_eval.aggregates import is_empty_output, steps_summary

EMPTY_SPARQL = json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": []}})
ONE_ROW = json.dumps(
    {"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "u"}}]}}
)


def result(template: str, qid: str, steps_score: float, tokens: int, **extra) -> dict:
    return {
        "template_id": template,
        "question_id": qid,
        "question_text": f"question {qid}",
        "status": "success",
        "steps_score": steps_score,
        "input_tokens": tokens,
        "elapsed_sec": 2.0,
        **extra,
    }


RESULTS = [
    result(
        "a",
        "a1",
        1,
        100,
        answer_f1=0.5,
        actual_steps=[
            {"name": "autocomplete_search", "status": "success", "output": EMPTY_SPARQL},
            {"name": "sparql_query", "status": "error", "error": "bad prefix"},
            {"name": "sparql_query", "status": "success", "output": ONE_ROW},
        ],
    ),
    result(
        "a",
        "a2",
        0,
        300,
        answer_f1=1.0,
        actual_steps=[{"name": "sparql_query", "status": "success", "output": ONE_ROW}],
    ),
    result("b", "b1", 1, 200, custom_metric_score=7),
    {"template_id": "b", "question_id": "b2", "question_text": "?", "status": "error", "error": "boom"},
]


def test_per_template_micro_macro() -> None:
    aggregates = compute_aggregates(RESULTS)
    a, b = aggregates["per_template"]["a"], aggregates["per_template"]["b"]
    assert (a["number_of_success_samples"], a["number_of_error_samples"]) == (2, 0)
    assert (b["number_of_success_samples"], b["number_of_error_samples"]) == (1, 1)
    assert a["steps_score"] == {"sum": 1, "mean": 0.5, "median": 0.5, "min": 0, "max": 1}
    assert a["input_tokens"] == {"sum": 400, "mean": 200, "median": 200, "min": 100, "max": 300}
    assert b["custom_metric_score"]["mean"] == 7, "a metric a scorer adds is aggregated without changes"
    micro = aggregates["micro"]
    assert (micro["number_of_success_samples"], micro["number_of_error_samples"]) == (3, 1)
    assert micro["steps_score"]["mean"] == pytest.approx(2 / 3)
    assert micro["answer_f1"]["median"] == 0.75
    assert aggregates["macro"]["steps_score"] == {"mean": 0.75}
    assert aggregates["macro"]["answer_f1"] == {"mean": 0.75}, "templates without the metric are left out"
    assert "steps" not in micro and "number_of_error_samples" not in aggregates["macro"]


def test_steps_summary_counts() -> None:
    summary = compute_aggregates(RESULTS)["per_template"]["a"]["steps"]
    assert summary["total"] == {"autocomplete_search": 1, "sparql_query": 3}
    assert summary["once_per_sample"] == {"autocomplete_search": 1, "sparql_query": 2}
    assert summary["empty_results"] == {"autocomplete_search": 1}
    assert summary["errors"] == {"sparql_query": 1}
    assert "steps" not in compute_aggregates(RESULTS)["per_template"]["b"]
    assert steps_summary([]) == {}


def test_flags_ids_and_texts_are_not_metrics() -> None:
    aggregates = compute_aggregates([result("a", "1", 1, 1, cached=True, answer_judge="lexical")])
    assert "cached" not in aggregates["micro"] and "answer_judge" not in aggregates["micro"]


@pytest.mark.parametrize(
    ("output", "empty"),
    [
        (None, True),
        ("", True),
        ("  ", True),
        ("[]", True),
        (EMPTY_SPARQL, True),
        (ONE_ROW, False),
        ("DESCRIBE text", False),
        ('[{"id": "d1"}]', False),
        (0, False),
        (False, False),
        ({}, True),
        ({"head": {"vars": ["s"]}, "results": {"bindings": []}}, True),
        ([{"id": "d1"}], False),
    ],
)
def test_empty_output(output, empty: bool) -> None:
    assert is_empty_output(output) is empty


@pytest.mark.parametrize("templates", [["t1", "t1", "t2", "t2"], ["t1", "t2", "t1", "t2"]])
def test_micro_values_keep_the_results_order_whether_templates_come_together_or_not(
    templates: list[str],
) -> None:
    """The micro sum is `sum` of the values in the results' order (float sums depend on it: on Python
    3.11, which adds left to right, these values give 1.0 in that order and 2.0 grouped by template;
    3.12 compensates and gives 2.0 either way), and its metrics come in first-seen order, whether it is
    put together from the templates' values (each template's results one after another) or read anew
    (templates interleaved, as two corpus files give)."""
    values = [1e16, 1.0, -1e16, 1.0]
    results = [
        {"template_id": template, "question_id": f"q{index}", "status": "success", "b": value}
        | ({"a": 2} if index == 2 else {})
        for index, (template, value) in enumerate(zip(templates, values, strict=True))
    ]
    micro = compute_aggregates(results)["micro"]
    assert micro["b"]["sum"] == sum(values)
    assert [key for key in micro if key in ("a", "b")] == ["b", "a"]
