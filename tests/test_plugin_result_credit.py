"""Partial credit and graph steps through the plugin: thresholds, gates, aggregates, baseline deltas."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

from pytest_graphrag_eval.report.html_report.steps import step_table

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
THRESHOLD = ["--graphrag-threshold", "steps_score>=1"]
TWO_THIRDS = 2 / 3  # q1 returns one of its two rows: precision 1, recall 1/2


@pytest.fixture
def half_right(pytester: pytest.Pytester) -> pytest.Pytester:
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[0] = response("q1", rows=[["s1", "Alpha"]])
    write_responses(pytester, responses)
    return pytester


def _report(pytester: pytest.Pytester, name: str = "r.json") -> dict[str, Any]:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def test_threshold_on_steps_result_f1(half_right: pytest.Pytester) -> None:
    lenient = half_right.runpytest(*REPLAY, "--graphrag-threshold", "steps_result_f1>=0.6")
    lenient.assert_outcomes(passed=3)
    strict = half_right.runpytest(*REPLAY, "--graphrag-threshold", "steps_result_f1>=0.7", "-v")
    strict.assert_outcomes(passed=2, failed=1)
    strict.stdout.fnmatch_lines(["*names::q1 FAILED*"], consecutive=False)
    strict.stdout.fnmatch_lines(["*FAIL*steps_result_f1*= 0.666667, required >= 0.7, cli threshold*"])


@pytest.mark.parametrize(("limit", "passed"), [("0.85", True), ("0.9", False)])
def test_gate_on_steps_result_f1_and_its_aggregates(
    half_right: pytest.Pytester, limit: str, passed: bool
) -> None:
    gate = f"steps_result_f1.mean>={limit}"
    result = half_right.runpytest(*REPLAY, "--graphrag-gate", gate, "--graphrag-report", "r.json")
    report = _report(half_right)
    micro = report["aggregates"]["micro"]
    assert math.isclose(micro["steps_result_f1"]["mean"], (TWO_THIRDS + 1 + 1) / 3)
    assert micro["steps_result_recall"]["min"] == 0.5 and micro["steps_result_precision"]["min"] == 1.0
    assert math.isclose(
        report["aggregates"]["per_template"]["names"]["steps_result_f1"]["mean"], (TWO_THIRDS + 1) / 2
    )
    assert "steps_result_f1" in report["aggregates"]["macro"]
    [outcome] = report["gates"]
    assert outcome["passed"] is passed
    assert f"{'PASS' if passed else 'FAIL'}  {outcome['message']}" in result.stdout.str()
    assert result.ret == (0 if passed else 1)


def test_gate_on_a_question_without_result_steps_says_why(pytester: pytest.Pytester) -> None:
    data = corpus()
    for template in data:
        for question in template["questions"]:
            question["reference_steps"] = [[{"name": "lookup", "output": "1"}]]
    write_corpus(pytester, data)
    write_responses(pytester, good_responses())
    result = pytester.runpytest(*REPLAY, "--graphrag-gate", "steps_result_f1.mean>=0.5")
    result.stdout.fnmatch_lines(
        ["*steps_result_f1.mean was not computed*no SPARQL results or RDF graph step*"]
    )
    assert result.ret == 1


def test_baseline_delta_and_gate_on_change(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.runpytest(*REPLAY, "--graphrag-report", "baseline.json").assert_outcomes(passed=3)
    responses = good_responses()
    responses[0] = response("q1", rows=[["s1", "Alpha"]])
    write_responses(pytester, responses)
    result = pytester.runpytest(
        *REPLAY,
        "--graphrag-baseline",
        "baseline.json",
        "--graphrag-gate",
        "delta:steps_result_f1.mean>=0",
        "--graphrag-report",
        "r.json",
    )
    comparison = _report(pytester)["comparison"]
    by_id = {change["question_id"]: change for change in comparison["questions"]}
    delta = by_id["q1"]["deltas"]["steps_result_f1"]
    assert delta["baseline"] == 1.0 and math.isclose(delta["current"], TWO_THIRDS)
    assert math.isclose(delta["delta"], TWO_THIRDS - 1)
    assert comparison["metrics"]["steps_result_f1"]["n_pairs"] == 3
    [gate] = _report(pytester)["gates"]
    assert gate["passed"] is False and "steps_result_f1" in gate["message"]
    result.stdout.fnmatch_lines(["*FAIL*delta:*steps_result_f1.mean*"])
    assert result.ret == 1


GRAPH = "text/turtle"
EX = "http://example.org/grid#"
REFERENCE_GRAPH = f'<{EX}S1> <{EX}name> "OSLO" ; <{EX}zone> <{EX}NO1> ; <{EX}geo> [ <{EX}lat> 59.9 ] .'


def _graph_case(pytester: pytest.Pytester, output: str) -> None:
    step = {"name": "sparql_query", "args": {"query": "DESCRIBE ex:S1"}, "output": REFERENCE_GRAPH}
    step["output_media_type"] = GRAPH
    data = [
        {
            "template_id": "describe",
            "questions": [{"id": "d1", "question_text": "Describe S1", "reference_steps": [[step]]}],
        }
    ]
    write_corpus(pytester, data)
    actual = {"name": "sparql_query", "id": "call_d1", "status": "success", "output": output}
    write_responses(pytester, [{"question_id": "d1", "actual_answer": "S1", "actual_steps": [actual]}])


def test_graph_step_matches_another_serialization_and_fails_with_the_triple_diff(
    pytester: pytest.Pytester,
) -> None:
    same = (
        f"_:anything <{EX}lat> 59.9 .\n<{EX}S1> <{EX}geo> _:anything .\n"
        f'<{EX}S1> <{EX}zone> <{EX}NO1> .\n<{EX}S1> <{EX}name> "OSLO" .\n'
    )
    _graph_case(pytester, same)
    pytester.runpytest(*REPLAY, "--graphrag-threshold", "steps_score>=1").assert_outcomes(passed=1)
    _graph_case(pytester, same.replace("NO1", "NO2"))
    result = pytester.runpytest(
        *REPLAY, "--graphrag-threshold", "steps_score>=1", "--graphrag-report", "r.json"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*[[]0[]][[]0[]] sparql_query: not matched",
            "*closest actual step: call_d1 — 1 missing triple(s) and 1 extra triple(s)",
            "*triples: reference 4, actual 4",
            "*missing triples (1):",
            f"*- <{EX}S1> <{EX}zone> <{EX}NO1> .",
            "*extra triples (1):",
            f"*- <{EX}S1> <{EX}zone> <{EX}NO2> .",
        ]
    )
    (row,) = _report(pytester)["results"]
    assert row["steps_result_precision"] == row["steps_result_recall"] == row["steps_result_f1"] == 0.75


def test_bad_rdf_from_the_agent_is_named_in_the_failure(pytester: pytest.Pytester) -> None:
    _graph_case(pytester, f"<{EX}S1> <{EX}name> ")
    result = pytester.runpytest(*REPLAY, "--graphrag-threshold", "steps_result_f1>=0.5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*steps_output_error: question 'd1' (template 'describe'): actual step 'call_d1' "
            "(actual_steps[[]0[]], sparql_query): its output is not valid Turtle*line 1*",
        ]
    )


def test_html_report_step_table_carries_the_triple_diff(pytester: pytest.Pytester) -> None:
    """The page's step table (its question details are compressed in the page) is built from these lines."""
    moved = f'<{EX}S1> <{EX}zone> <{EX}NO2> ; <{EX}name> "OSLO" ; <{EX}geo> [ <{EX}lat> 59.9 ] .'
    _graph_case(pytester, moved)
    run = pytester.runpytest(
        *REPLAY, *THRESHOLD, "--graphrag-html", "report.html", "--graphrag-report", "r.json"
    )
    run.assert_outcomes(failed=1)
    assert (pytester.path / "report.html").stat().st_size > 0
    (result,) = _report(pytester)["results"]
    table = step_table(result, "last_group")
    assert table is not None
    (reference,) = table["reference"]
    lines = reference["mismatch"]["lines"]
    assert lines[0] == "closest actual step: call_d1 — 1 missing triple(s) and 1 extra triple(s)"
    assert f"  - <{EX}S1> <{EX}zone> <{EX}NO1> ." in lines and f"  - <{EX}S1> <{EX}zone> <{EX}NO2> ." in lines
