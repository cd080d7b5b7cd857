"""SPARQL results: term normalisation, parsing, comparison and mismatch explanations."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from pytest_graphrag_eval.formats.sparql_results import (
    MemoizedParser,
    SparqlResultsError,
    parse_sparql_results,
    uri_values,
)
from pytest_graphrag_eval.formats.terms import FALSE_TERM, TRUE_TERM, normalize_cell
from pytest_graphrag_eval.steps.match import sparql_output_score
from pytest_graphrag_eval.steps.sparql_compare import RowMode, find_column_mapping, results_match
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch

XSD = "http://www.w3.org/2001/XMLSchema#"


def cell(value: Any) -> dict[str, str] | None:
    """A binding for a Python value: str -> literal, int -> xsd:integer, float -> xsd:double, bool."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"type": "literal", "value": str(value).lower(), "datatype": XSD + "boolean"}
    if isinstance(value, int):
        return {"type": "literal", "value": str(value), "datatype": XSD + "integer"}
    if isinstance(value, float):
        return {"type": "literal", "value": repr(value), "datatype": XSD + "double"}
    if isinstance(value, str) and value.startswith("urn:"):
        return {"type": "uri", "value": value}
    return {"type": "literal", "value": value}


def select(variables: list[str], rows: list[tuple[Any, ...]]) -> str:
    bindings = [
        {name: cell(value) for name, value in zip(variables, row, strict=True) if value is not None}
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def reference_step(output: str, required: list[str] | None = None, **flags: Any) -> dict[str, Any]:
    step: dict[str, Any] = {
        "name": "sparql_query",
        "output": output,
        "output_media_type": "application/sparql-results+json",
        **flags,
    }
    if required is not None:
        step["required_columns"] = required
    return step


def score(reference_vars, reference_rows, actual_vars, actual_rows, required=None, **flags) -> float:
    step = reference_step(select(reference_vars, reference_rows), required, **flags)
    return sparql_output_score(step, select(actual_vars, actual_rows))


# --- terms -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("datatype", "value", "expected"),
    [
        ("integer", "42", 42),
        ("int", "+7", 7),
        ("long", "-3", -3),
        ("short", "0012", 12),
        ("byte", "1", 1),
        ("nonNegativeInteger", "5", 5),
        ("unsignedLong", "18446744073709551615", 18446744073709551615),
        ("decimal", "1.123459", Decimal("1.12345")),
        ("double", "-1.123459", Decimal("-1.12345")),
        ("float", "1.0E2", 100),
        ("decimal", "2.5", Decimal("2.5")),
        ("boolean", "true", TRUE_TERM),
        ("boolean", "0", FALSE_TERM),
    ],
)
def test_typed_literals_normalise_by_datatype(datatype: str, value: str, expected: Any) -> None:
    assert normalize_cell({"type": "literal", "value": value, "datatype": XSD + datatype}) == expected


def test_decimals_are_truncated_not_rounded() -> None:
    truncated = normalize_cell({"type": "literal", "value": "0.123456789", "datatype": XSD + "double"})
    assert truncated == Decimal("0.12345")
    assert truncated != Decimal("0.12346")


def test_integer_and_decimal_of_same_value_are_equal() -> None:
    integer = normalize_cell({"type": "literal", "value": "3", "datatype": XSD + "integer"})
    decimal = normalize_cell({"type": "literal", "value": "3.000001", "datatype": XSD + "decimal"})
    assert integer == decimal and hash(integer) == hash(decimal)


def test_booleans_never_equal_numbers_or_text() -> None:
    true = normalize_cell({"type": "literal", "value": "true", "datatype": XSD + "boolean"})
    one = normalize_cell({"type": "literal", "value": "1", "datatype": XSD + "integer"})
    assert true != one
    assert true != "true"


@pytest.mark.parametrize(
    ("datatype", "value"),
    [("integer", "1_000"), ("integer", "abc"), ("double", "NaN"), ("double", "INF"), ("boolean", "yes")],
)
def test_invalid_or_special_lexical_forms_stay_text(datatype: str, value: str) -> None:
    assert normalize_cell({"type": "literal", "value": value, "datatype": XSD + datatype}) == value


def test_other_terms_compare_by_value_string() -> None:
    assert normalize_cell({"type": "uri", "value": "urn:x"}) == "urn:x"
    assert normalize_cell({"type": "literal", "value": "Oslo", "xml:lang": "no"}) == "Oslo"
    assert (
        normalize_cell({"type": "literal", "value": "2024-01-01", "datatype": XSD + "date"}) == "2024-01-01"
    )


# --- parsing -----------------------------------------------------------------------------------


def test_parse_select_into_columns_and_rows() -> None:
    table = parse_sparql_results(select(["a", "b"], [("x", 1), ("y", None)]))
    assert table.variables == ("a", "b")
    assert table.rows == (("x", 1), ("y", None))
    assert table.column("b") == (1, None)
    assert not table.is_ask


def test_parse_ask() -> None:
    table = parse_sparql_results('{"head": {}, "boolean": true}')
    assert table.is_ask and table.boolean is True and table.row_count == 0


def test_uri_values_lists_only_iri_bindings() -> None:
    output = select(["s", "name"], [("urn:a", "urn:looks-like-iri-but-literal")])
    data = json.loads(output)
    data["results"]["bindings"][0]["name"]["type"] = "literal"
    assert uri_values(json.dumps(data)) == {"urn:a"}


@pytest.mark.parametrize(
    "text",
    [
        "<urn:a> <urn:b> <urn:c> .",  # CONSTRUCT / DESCRIBE output in Turtle
        "",
        "null",
        "[1, 2]",
        '{"head": {"vars": ["a"]}}',
        '{"head": {"vars": "a"}, "results": {"bindings": []}}',
        '{"head": {"vars": ["a", "a"]}, "results": {"bindings": []}}',
        '{"head": {"vars": ["a"]}, "results": {"bindings": [1]}}',
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": "x"}]}}',
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "uri"}}]}}',
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"value": "1", "datatype": [1]}}]}}',
        '{"head": {}, "boolean": "yes"}',
        "[" * 100_000,
    ],
)
def test_parser_rejects_non_results_with_its_own_error(text: str) -> None:
    with pytest.raises(SparqlResultsError):
        parse_sparql_results(text)


# --- comparison --------------------------------------------------------------------------------


def test_identical_results_match() -> None:
    assert score(["a", "b"], [("x", 1), ("y", 2)], ["a", "b"], [("x", 1), ("y", 2)]) == 1.0


def test_variable_names_do_not_matter_and_extra_columns_are_ignored() -> None:
    actual_rows = [(10, "y", "urn:1"), (20, "x", "urn:2")]
    assert score(["a", "b"], [("x", 20), ("y", 10)], ["n", "label", "iri"], actual_rows) == 1.0


def test_only_required_columns_must_be_present() -> None:
    reference_rows = [("x", "ignored-1"), ("y", "ignored-2")]
    assert score(["a", "extra"], reference_rows, ["z"], [("y",), ("x",)], required=["a"]) == 1.0


def test_required_columns_default_to_all_reference_variables() -> None:
    assert score(["a", "b"], [("x", 1)], ["a"], [("x",)]) == 0.0
    assert score(["a", "b"], [("x", 1)], ["b", "a"], [(1, "x")]) == 1.0


def test_missing_extra_or_changed_row_does_not_match() -> None:
    reference = [("x", 1), ("y", 2)]
    assert score(["a", "b"], reference, ["a", "b"], [("x", 1)]) == 0.0
    assert score(["a", "b"], reference, ["a", "b"], [*reference, ("z", 3)]) == 0.0
    assert score(["a", "b"], reference, ["a", "b"], [("x", 1), ("y", 3)]) == 0.0


def test_rows_are_compared_as_tuples_not_concatenated_text() -> None:
    assert score(["a", "b"], [("ab", "c")], ["a", "b"], [("a", "bc")]) == 0.0


def test_columns_must_agree_jointly_not_only_one_by_one() -> None:
    # Each column holds the same values, but the pairs differ.
    assert score(["a", "b"], [("x", 1), ("y", 2)], ["a", "b"], [("x", 2), ("y", 1)]) == 0.0


def test_mapping_is_one_to_one() -> None:
    # Both required columns hold the same values as the single actual column.
    assert score(["a", "b"], [("x", "x")], ["c"], [("x",)]) == 0.0
    assert score(["a", "b"], [("x", "x")], ["c", "d"], [("x", "x")]) == 1.0


def test_numbers_compare_by_value_with_five_decimals() -> None:
    assert score(["v"], [(1.0000049,)], ["w"], [(1.00000,)]) == 1.0
    assert score(["v"], [(3,)], ["w"], [(3.0,)]) == 1.0
    assert score(["v"], [(1.00001,)], ["w"], [(1.00002,)]) == 0.0
    assert score(["v"], [(1,)], ["w"], [("1",)], literal_match="strict") == 0.0
    assert score(["v"], [(1,)], ["w"], [("01",)]) == 0.0  # the default reads only canonical numerals


def test_unbound_matches_only_unbound() -> None:
    assert score(["a", "b"], [("x", None)], ["a", "b"], [("x", None)]) == 1.0
    assert score(["a", "b"], [("x", None)], ["a", "b"], [("x", "")]) == 0.0


def test_unordered_default_ignores_order_and_duplicates() -> None:
    reference = [("x",), ("y",)]
    assert score(["a"], reference, ["a"], [("y",), ("x",), ("x",)]) == 1.0


def test_ignore_duplicates_false_compares_multisets() -> None:
    reference = [("x",), ("y",)]
    assert score(["a"], reference, ["a"], [("y",), ("x",)], ignore_duplicates=False) == 1.0
    assert score(["a"], reference, ["a"], [("y",), ("x",), ("x",)], ignore_duplicates=False) == 0.0


def test_ordered_compares_sequences() -> None:
    reference = [("x", 1), ("y", 2)]
    assert score(["a", "b"], reference, ["b", "a"], [(1, "x"), (2, "y")], ordered=True) == 1.0
    assert score(["a", "b"], reference, ["a", "b"], [("y", 2), ("x", 1)], ordered=True) == 0.0


def test_both_empty_match_when_actual_has_enough_variables() -> None:
    assert score(["a", "b"], [], ["c", "d"], []) == 1.0
    assert score(["a", "b"], [], ["c", "d", "e"], []) == 1.0
    assert score(["a", "b"], [], ["c"], []) == 0.0


def test_exactly_one_empty_does_not_match() -> None:
    assert score(["a"], [], ["a"], [("x",)]) == 0.0
    assert score(["a"], [("x",)], ["a"], []) == 0.0


def test_ask_results_compare_booleans() -> None:
    step = reference_step('{"head": {}, "boolean": true}')
    assert sparql_output_score(step, '{"head": {}, "boolean": true}') == 1.0
    assert sparql_output_score(step, '{"boolean": false}') == 0.0
    assert sparql_output_score(step, select(["a"], [("x",)])) == 0.0
    select_step = reference_step(select(["a"], [("x",)]))
    assert sparql_output_score(select_step, '{"boolean": true}') == 0.0


@pytest.mark.parametrize(
    "output",
    [
        "@prefix ex: <http://example.org/> . ex:a ex:b ex:c .",
        "Error: the endpoint timed out",
        '{"head": {"vars": ["a"]}',
        None,
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"type": "uri"}}]}}',
    ],
)
def test_unreadable_actual_output_scores_zero_without_raising(output: Any) -> None:
    assert sparql_output_score(reference_step(select(["a"], [("x",)])), output) == 0.0


def test_find_column_mapping_reports_the_mapping() -> None:
    reference = parse_sparql_results(select(["name", "count"], [("x", 1), ("y", 2)]))
    actual = parse_sparql_results(select(["n", "label", "other"], [(2, "y", "q"), (1, "x", "q")]))
    mapping = find_column_mapping(reference, actual, ["name", "count"], RowMode.SET)
    assert mapping == {"name": "label", "count": "n"}


def test_identical_actual_columns_are_interchangeable() -> None:
    reference = parse_sparql_results(select(["a", "b"], [("x", "x"), ("y", "y")]))
    actual = parse_sparql_results(select(["p", "q", "r"], [("x", "x", "x"), ("y", "y", "y")]))
    mapping = find_column_mapping(reference, actual, ["a", "b"], RowMode.MULTISET)
    assert mapping is not None and len(set(mapping.values())) == 2


def test_search_among_columns_signatures_cannot_separate() -> None:
    # Column i holds row * (i + 1) mod 11; with 33 rows every column has each value 0..10 three
    # times, so every column has the same signature and only whole rows decide.
    actual_vars = [f"c{index}" for index in range(10)]
    actual_rows = [tuple((row * (index + 1)) % 11 for index in range(10)) for row in range(33)]
    actual = parse_sparql_results(select(actual_vars, actual_rows))
    reference = parse_sparql_results(
        select(["x", "y", "z"], [(row[7], row[2], row[5]) for row in actual_rows])
    )
    mapping = find_column_mapping(reference, actual, ["x", "y", "z"], RowMode.MULTISET)
    assert mapping is not None and len(set(mapping.values())) == 3
    projected = sorted(zip(*(actual.column(mapping[name]) for name in "xyz"), strict=True))
    assert projected == sorted(reference.rows)
    # x and z would need the same column: no one-to-one mapping exists.
    impossible = parse_sparql_results(
        select(["x", "y", "z"], [(row[0], row[1], row[0]) for row in actual_rows])
    )
    assert find_column_mapping(impossible, actual, ["x", "y", "z"], RowMode.MULTISET) is None


def test_results_match_requires_enough_actual_variables() -> None:
    reference = parse_sparql_results(select(["a", "b"], [("x", "y")]))
    actual = parse_sparql_results(select(["a"], [("x",)]))
    assert not results_match(reference, actual, ["a", "b"])


# --- explanations ------------------------------------------------------------------------------


def test_explain_reports_match_and_mapping() -> None:
    step = reference_step(select(["a", "b"], [("x", 1)]))
    explanation = explain_sparql_mismatch(step, select(["n", "m"], [(1, "x")]))
    assert explanation["matched"] is True
    assert explanation["column_mapping"] == {"a": "m", "b": "n"}
    assert explanation["missing_rows"] == [] and explanation["extra_rows"] == []


def test_explain_lists_missing_and_extra_rows_under_best_mapping() -> None:
    step = reference_step(select(["name", "n"], [("x", 1), ("y", 2), ("z", 3)]))
    actual = select(["label", "count", "noise"], [("x", 1, "q"), ("y", 2, "q"), ("w", 4, "q")])
    explanation = explain_sparql_mismatch(step, actual)
    assert explanation["matched"] is False
    assert explanation["column_mapping"] == {"name": "label", "n": "count"}
    assert explanation["missing_rows"] == [{"name": "z", "n": 3}]
    assert explanation["missing_rows_total"] == 1
    assert explanation["extra_rows"] == [{"label": "w", "count": 4}]
    assert explanation["reference_row_count"] == 3 and explanation["actual_row_count"] == 3
    json.dumps(explanation)


def test_explain_caps_row_lists() -> None:
    step = reference_step(select(["a"], [(f"r{index}",) for index in range(30)]))
    explanation = explain_sparql_mismatch(step, select(["a"], [("other",)]), limit=5)
    assert len(explanation["missing_rows"]) == 5
    assert explanation["missing_rows_total"] == 30
    assert explanation["unmapped_columns"] == ["a"]


def test_explain_names_columns_without_partner() -> None:
    step = reference_step(select(["a", "b"], [("x", "p")]))
    explanation = explain_sparql_mismatch(step, select(["a", "b"], [("x", "q")]))
    assert "b" in explanation["reason"]
    assert explanation["column_mapping"] == {"a": "a"}
    assert explanation["unmapped_columns"] == ["b"]


def test_explain_ordered_same_rows_in_other_order() -> None:
    step = reference_step(select(["a"], [("x",), ("y",)]), ordered=True)
    explanation = explain_sparql_mismatch(step, select(["a"], [("y",), ("x",)]))
    assert explanation["matched"] is False
    assert explanation["first_differing_row"] == 0
    assert explanation["mode"] == "ordered"


def test_explain_decimals_and_booleans_are_json_friendly() -> None:
    step = reference_step(select(["v", "f"], [(1.5, True)]))
    explanation = explain_sparql_mismatch(step, select(["v", "f"], [(2.5, False)]))
    assert explanation["missing_rows"] == [{"v": 1.5, "f": True}]
    json.dumps(explanation)


def test_explain_unreadable_output_and_ask() -> None:
    step = reference_step(select(["a"], [("x",)]))
    assert explain_sparql_mismatch(step, "not json")["reason"].startswith("the actual output is not SPARQL")
    ask = explain_sparql_mismatch(reference_step('{"boolean": true}'), '{"boolean": false}')
    assert ask == {
        "matched": False,
        "reason": "expected ASK result true, got false",
        "reference_boolean": True,
        "actual_boolean": False,
    }


def test_explain_invalid_reference_step() -> None:
    explanation = explain_sparql_mismatch(reference_step("garbage"), select(["a"], [("x",)]))
    assert explanation["matched"] is False and "'output'" in explanation["reason"]


def test_readme_worked_example() -> None:
    step = reference_step(
        select(["transformer", "transformerName"], [("urn:t2", "OSLO T2"), ("urn:t1", "OSLO T1")]),
        ["transformer", "transformerName"],
    )
    agent_rows = [("OSLO T1", "PowerTransformer", "urn:t1"), ("OSLO T2", "PowerTransformer", "urn:t2")]
    assert sparql_output_score(step, select(["name", "kind", "t"], agent_rows)) == 1.0
    assert sparql_output_score({**step, "ordered": True}, select(["name", "kind", "t"], agent_rows)) == 0.0
    assert sparql_output_score(step, select(["name", "kind", "t"], agent_rows[:1])) == 0.0
    explanation = explain_sparql_mismatch(step, select(["name", "kind", "t"], agent_rows[:1]))
    assert explanation["column_mapping"] == {"transformer": "t", "transformerName": "name"}
    assert explanation["missing_rows"] == [{"transformer": "urn:t2", "transformerName": "OSLO T2"}]


def test_memoized_parser_parses_each_text_once() -> None:
    parse = MemoizedParser()
    text = select(["a"], [("x",)])
    assert parse(text) is parse(text)
    for _ in range(2):
        with pytest.raises(SparqlResultsError, match="not valid JSON"):
            parse("CONSTRUCT output")


def test_a_reading_held_under_a_step_id_is_used_only_for_that_very_step() -> None:
    from pytest_graphrag_eval.corpus.reference_steps import sparql_expectation

    output = select(["a", "b"], [("x", "y")])
    step = {"name": "sparql_query", "output": output, "required_columns": ["a"]}
    other = {**step, "required_columns": ["b"]}
    # A reading handed over from a copy holds the id of a step that is gone; that id may now be another's.
    parse = MemoizedParser(readings={id(step): (other, sparql_expectation(other))})
    assert sparql_expectation(step, parse).required_columns == ("a",)
    assert sparql_expectation(step, parse) is sparql_expectation(step, parse)


def test_reference_outputs_are_parsed_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_graphrag_eval import corpus_from_data, run_evaluation
    from pytest_graphrag_eval.formats import sparql_results

    reference = select(["a"], [("x",), ("y",)])
    actual = select(["b"], [("y",), ("x",)])
    step = {
        "name": "sparql_query",
        "output": reference,
        "output_media_type": "application/sparql-results+json",
    }
    corpus = corpus_from_data(
        [{"template_id": "t", "questions": [{"id": "q", "question_text": "?", "reference_steps": [[step]]}]}]
    )
    question = next(iter(corpus.questions()))
    assert set(question.reference_reading.tables) == {reference}, "the loader keeps the table it validated"
    parsed: list[str] = []
    original = sparql_results.parse_sparql_results
    monkeypatch.setattr(
        sparql_results,
        "parse_sparql_results",
        lambda output, *mode: parsed.append(output) or original(output, *mode),
    )
    response = {
        "actual_answer": "x, y",
        "actual_steps": [{"name": "sparql_query", "status": "success", "output": actual}],
    }
    results = run_evaluation(corpus, {"q": response})
    assert results[0]["steps_score"] == 1.0
    assert parsed == [actual], "scoring parses only the actual output"


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(
            {"head": {"vars": ["a", "b"]}, "results": {"bindings": [{"a": cell(1), "b": cell("x")}] * 2}}
        ),
        json.dumps({"head": {"vars": ["a"]}, "results": {"bindings": []}}),
        json.dumps({"head": {}, "boolean": False}),
    ],
    ids=["select", "empty", "ask"],
)
def test_a_table_compared_with_itself_matches_in_every_mode(text: str) -> None:
    """One output text parsed once is one table; comparing it with itself is the general answer."""
    table = MemoizedParser()(text)
    for ordered in (False, True):
        for ignore_duplicates in (False, True):
            for required in (list(table.variables), list(table.variables)[:1], []):
                same = results_match(
                    table, table, required, ordered=ordered, ignore_duplicates=ignore_duplicates
                )
                copy = parse_sparql_results(text)
                assert same is results_match(
                    table, copy, required, ordered=ordered, ignore_duplicates=ignore_duplicates
                )
                assert same is True


def test_a_table_compared_with_itself_on_an_unknown_column_is_not_waved_through() -> None:
    table = parse_sparql_results(
        json.dumps({"head": {"vars": ["a"]}, "results": {"bindings": [{"a": cell(1)}]}})
    )
    with pytest.raises(ValueError):
        results_match(table, table, ["b"])


@pytest.mark.parametrize("mode", [{}, {"ignore_duplicates": False}, {"ordered": True}])
def test_same_names_are_tried_first_and_any_other_mapping_still_counts(mode: dict[str, bool]) -> None:
    reference = parse_sparql_results(select(["a", "b"], [("x", "1"), ("y", "2")]))
    same_names = parse_sparql_results(select(["b", "a", "c"], [("1", "x", "q"), ("2", "y", "q")]))
    swapped = parse_sparql_results(select(["a", "b"], [("1", "x"), ("2", "y")]))  # names crossed over
    differs = parse_sparql_results(select(["a", "b"], [("x", "1"), ("y", "3")]))
    ordered, ignore_duplicates = mode.get("ordered", False), mode.get("ignore_duplicates", True)
    for actual, expected in ((same_names, True), (swapped, True), (differs, False)):
        assert results_match(
            reference, actual, ["a", "b"], ordered=ordered, ignore_duplicates=ignore_duplicates
        ) is (expected)
    # The names alone never make a mapping that is not one-to-one: a column listed twice needs two columns.
    doubled = parse_sparql_results(select(["a", "b"], [("x", "x"), ("y", "y")]))
    one_column_of_it = parse_sparql_results(select(["a", "z"], [("x", "q"), ("y", "q")]))
    assert results_match(doubled, one_column_of_it, ["a", "a"]) is False
