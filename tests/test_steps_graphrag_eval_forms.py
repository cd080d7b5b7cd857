"""Step and response forms written the way graphrag-eval 4.0 and 6.x write them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus.reference_steps import reference_step_problem
from pytest_graphrag_eval.corpus.response_records import normalise_response
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.report.step_explanations import explain_step_mismatch
from pytest_graphrag_eval.steps.match import step_match_score
from pytest_graphrag_eval.steps.timeseries import times_agree

SPARQL_JSON = "application/sparql-results+json"
ANCHOR = "2025-03-01T12:00:00Z"


def ok(name: str, output: Any = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "output": output, "status": "success", **extra}


def select(variables: list[str], rows: list[tuple[str, ...]]) -> str:
    bindings = [
        {var: {"type": "uri", "value": value} for var, value in zip(variables, row, strict=True)}
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def test_iri_discovery_as_graphrag_eval_writes_it() -> None:
    reference = {
        "name": "iri_discovery",
        "output": "urn:a",
        "output_media_type": "text/uri",
        "required_columns": ["uri"],
    }
    assert reference_step_problem(reference) is None
    assert step_match_score(reference, ok("autocomplete_search", select(["uri"], [("urn:a",)]))) == 1.0
    assert step_match_score(reference, ok("sparql_query", json.loads(select(["s"], [("urn:a",)])))) == 1.0
    assert step_match_score(reference, ok("sparql_query", "<urn:a> <urn:p> 1 .")) == 1.0
    assert step_match_score(reference, ok("sparql_query", "<urn:ab> <urn:p> 1 .")) == 0.0


@pytest.mark.parametrize("required", [[], ["x"], ["anything", "else"]])
def test_ask_reference_ignores_required_columns(required: list[str]) -> None:
    reference = {
        "name": "sparql_query",
        "output": '{"head": {}, "boolean": true}',
        "output_media_type": SPARQL_JSON,
        "required_columns": required,
    }
    assert reference_step_problem(reference) is None
    assert step_match_score(reference, ok("sparql_query", {"head": {}, "boolean": True})) == 1.0
    assert step_match_score(reference, ok("sparql_query", '{"boolean": false}')) == 0.0


def test_select_with_no_required_columns_asks_for_rows_on_both_sides() -> None:
    reference = {
        "name": "sparql_query",
        "output": select(["s"], [("urn:a",)]),
        "output_media_type": SPARQL_JSON,
        "required_columns": [],
    }
    assert reference_step_problem(reference) is None
    assert step_match_score(reference, ok("sparql_query", select(["t"], [("urn:z",), ("urn:y",)]))) == 1.0
    assert step_match_score(reference, ok("sparql_query", select(["t"], []))) == 0.0


@pytest.mark.parametrize(
    ("reference_output", "actual_output", "expected"),
    [(42, 42, 1.0), (42, 42.0, 1.0), (42, "42", 0.0), ({"a": [1]}, {"a": [1]}, 1.0), (True, 1, 0.0)],
)
def test_json_valued_outputs_compare_as_values(
    reference_output: Any, actual_output: Any, expected: float
) -> None:
    reference = {"name": "count", "output": reference_output}
    assert reference_step_problem(reference) is None
    assert step_match_score(reference, ok("count", actual_output)) == expected
    as_json = {**reference, "output_media_type": "application/json"}
    assert step_match_score(as_json, ok("count", json.dumps(actual_output))) == expected


def test_reference_without_output_expects_none() -> None:
    assert step_match_score({"name": "clear_cache"}, ok("clear_cache")) == 1.0
    assert step_match_score({"name": "clear_cache"}, ok("clear_cache", "done")) == 0.0


def test_retrieve_time_series_compares_mrid_and_limit() -> None:
    reference = {"name": "retrieve_time_series", "args": {"mrid": ["m2", "m1"], "limit": 5}}
    assert (
        step_match_score(reference, ok("retrieve_time_series", args={"mrid": ["m1", "m2"], "limit": 5}))
        == 1.0
    )
    assert step_match_score(reference, ok("retrieve_time_series", args={"mrid": ["m1"], "limit": 5})) == 0.0
    assert step_match_score(reference, ok("retrieve_time_series", args={"mrid": ["m1", "m2"]})) == 0.0
    no_limit = {"name": "retrieve_time_series", "args": {"mrid": "m1"}}
    assert step_match_score(no_limit, ok("retrieve_time_series", args={"mrid": ["m1"], "limit": 9})) == 1.0
    no_mrid = {"name": "retrieve_time_series", "args": {"limit": 3}}
    assert step_match_score(no_mrid, ok("retrieve_time_series", args={"limit": 3})) == 1.0
    assert step_match_score(no_mrid, ok("retrieve_time_series", args={"limit": 3, "mrid": "m"})) == 0.0


def data_points(**args: Any) -> dict[str, Any]:
    return ok("retrieve_data_points", args=args, execution_timestamp=ANCHOR)


def test_retrieve_data_points_normalises_ids_granularity_and_aggregates() -> None:
    reference = {
        "name": "retrieve_data_points",
        "args": {"external_id": "ts1", "granularity": "1h", "aggregates": ["max", "average"], "limit": 10},
    }
    same = data_points(external_id=["ts1"], granularity="1Hour", aggregates=["average", "max"], limit=10)
    assert step_match_score(reference, same) == 1.0
    assert step_match_score(reference, data_points(external_id="ts1", granularity="2h", limit=10)) == 0.0
    assert step_match_score(reference, ok("retrieve_data_points", args={"granularity": "1h"})) == 0.0


def test_relative_times_are_anchored_at_the_execution_timestamp() -> None:
    reference = {
        "name": "retrieve_data_points",
        "args": {"external_id": "t", "start": "2h-ago", "end": "now"},
    }
    assert step_match_score(reference, data_points(external_id="t", start="120m-ago", end="now")) == 1.0
    within = data_points(external_id="t", start="2025-03-01T10:00:59Z", end="2025-03-01T14:00:30+02:00")
    assert step_match_score(reference, within) == 1.0
    outside = data_points(external_id="t", start="2025-03-01T09:58:59Z", end="now")
    assert step_match_score(reference, outside) == 0.0
    absolute = {"name": "retrieve_data_points", "args": {"external_id": "t", "start": "2025-03-01T10:00:00Z"}}
    assert step_match_score(absolute, data_points(external_id="t", start="2h-ago")) == 0.0


def test_time_comparison_edge_cases() -> None:
    anchor = datetime(2025, 3, 1, 12, tzinfo=UTC)
    assert times_agree(None, None, anchor) and not times_agree("now", None, anchor)
    assert times_agree("2025-03-01T12:00:00", "2025-03-01T12:00:00+00:00", anchor)
    assert not times_agree("1d-ago", "2025-02-28T12:00:00Z", None)  # no anchor: relative is unverifiable
    assert times_agree("1d-ago", "1d-ago", None)
    assert times_agree(1700000000000, 1700000000000, anchor)


def test_graphrag_eval_4_steps_key_and_error_without_status() -> None:
    location = SourceLocation(question_id="q1")
    read = normalise_response({"question_id": "q1", "steps": [ok("s", "x")]}, location)
    assert read["actual_steps"] == [ok("s", "x")] and "steps" not in read
    failed = normalise_response(
        {"question_id": "q1", "error": "timeout", "actual_answer": "partial"}, location
    )
    assert failed["status"] == "error"
    coded = normalise_response({"question_id": "q1", "error": {"code": 503}}, location)
    assert coded["status"] == "error" and coded["error"] == '{"code": 503}'
    assert normalise_response({"question_id": "q1", "error": None}, location).get("status") is None


def test_failure_report_names_the_wrong_time_series_arguments() -> None:
    reference = {
        "name": "retrieve_data_points",
        "args": {"external_id": "ts1", "granularity": "1h", "start": "1h-ago"},
    }
    call = data_points(external_id=["ts1"], granularity="2h", start="2025-03-01T10:59:30Z")
    assert explain_step_mismatch(reference, [call]) == [
        "latest actual 'retrieve_data_points' step ? differs in its arguments:",
        "granularity: expected '1h', got '2h'",
    ]
    series = {"name": "retrieve_time_series", "args": {"mrid": "m1", "limit": 5}}
    lines = explain_step_mismatch(
        series, [ok("retrieve_time_series", args={"mrid": ["m1"], "limit": 6}, id="c1")]
    )
    assert lines == [
        "latest actual 'retrieve_time_series' step c1 differs in its arguments:",
        "limit: expected 5, got 6",
    ]
    no_id = ok("retrieve_data_points", args={"granularity": "1h"})
    assert step_match_score({"name": "retrieve_data_points", "args": {"external_id": None}}, no_id) == 0.0


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
ARGUMENT_NAMES = st.sampled_from(
    ["k", "mrid", "limit", "external_id", "granularity", "aggregates", "start", "end"]
)
TIME_TEXTS = st.sampled_from(["now", "1h-ago", "99999999999w-ago", "2025-03-01T12:00:00Z", "2025-13-01", ""])
REFERENCES = [
    {"name": "sparql_query", "output": '{"head": {}, "boolean": true}', "output_media_type": SPARQL_JSON},
    {"name": "iri_discovery", "output": "urn:a", "output_media_type": "text/uri"},
    {"name": "retrieval", "output": [{"id": "d1"}, {"id": "d2"}], "args": {"k": 2}},
    {"name": "retrieve_time_series", "args": {"mrid": ["m1"], "limit": 5}},
    {"name": "retrieve_data_points", "args": {"external_id": "t", "start": "1h-ago", "granularity": "1h"}},
    {"name": "tool", "output": {"a": [1, 2]}},
    {"name": "tool", "output": "[1]", "output_media_type": "application/json"},
]


@settings(max_examples=300, deadline=None)
@given(
    reference_index=st.integers(0, len(REFERENCES) - 1),
    output=JSON_VALUES,
    args=st.dictionaries(ARGUMENT_NAMES, JSON_VALUES | TIME_TEXTS, max_size=4) | JSON_VALUES,
    stamp=TIME_TEXTS | JSON_VALUES,
    sources=st.sampled_from(["autocomplete_search", "sparql_query", None]),
)
def test_agent_output_of_any_shape_scores_without_raising(
    reference_index: int, output: Any, args: Any, stamp: Any, sources: str | None
) -> None:
    reference = REFERENCES[reference_index]
    name = sources if reference["name"] == "iri_discovery" and sources else reference["name"]
    step = ok(name, output, args=args, execution_timestamp=stamp)
    assert 0.0 <= step_match_score(reference, step) <= 1.0
    assert all(isinstance(line, str) for line in explain_step_mismatch(reference, [step]))
