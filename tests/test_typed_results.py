"""Typed decoding of SELECT results (msgspec) gives the generic parse's table, or declines.

The typed path must never change a score: on any text it either makes exactly the table the
generic path makes of the same JSON (under both literal matches) or returns None, and the common
shape (texts, typed numbers, unbound cells) must really be taken by it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.aggregates import is_empty_output
from pytest_graphrag_eval.formats.sparql_results import (
    SparqlResultsError,
    parse_sparql_results,
    results_table,
)
from pytest_graphrag_eval.formats.terms import LITERAL_MATCHES
from pytest_graphrag_eval.formats.typed_results import typed_row_count, typed_table

pytest.importorskip("msgspec")

XSD = "http://www.w3.org/2001/XMLSchema#"
TEXTS = st.sampled_from(
    [
        "8",
        "-0",
        "0",
        "1.50",
        "1.5",
        "007",
        "12345678901234567890123",
        "abc",
        "",
        " 8",
        "Zürich",
        "東京",
        "\u00e9",
    ]
)
DATATYPES = st.sampled_from(
    [XSD + "integer", XSD + "decimal", XSD + "double", XSD + "boolean", XSD + "string", XSD + "date"]
)
ODD_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    [None, 8, 12345678901234567890123, 1.5, True, [], {"s": "x"}]
)


@st.composite
def cells(draw: st.DrawFn) -> Any:
    """A binding cell: mostly well formed, sometimes with a value or datatype of the wrong kind."""
    if draw(st.integers(0, 9)) == 0:
        return draw(ODD_VALUES)  # null (unbound), a number, a list ... instead of an object
    cell: dict[str, Any] = {"type": draw(st.sampled_from(["uri", "literal", "bnode", "triple"]))}
    cell["value"] = draw(TEXTS) if draw(st.integers(0, 9)) else draw(ODD_VALUES)
    kind = draw(st.integers(0, 5))
    if kind == 1:
        cell["datatype"] = draw(DATATYPES)
    elif kind == 2:
        cell["datatype"] = draw(ODD_VALUES)
    elif kind == 3:
        cell["xml:lang"] = draw(st.sampled_from(["en", "de", 7]))
    if draw(st.booleans()):
        del cell["type"]
    return cell


@st.composite
def documents(draw: st.DrawFn) -> str:
    """SELECT results text, with the odd shapes an agent or a broken endpoint may return."""
    variables = draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3))
    rows = draw(
        st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "z"]), cells(), max_size=4), max_size=6)
    )
    document: dict[str, Any] = {"head": {"vars": variables}, "results": {"bindings": rows}}
    change = draw(st.integers(0, 11))
    if change == 1:
        document["boolean"] = draw(st.sampled_from([True, False, None, 1]))
    elif change == 2:
        document["head"] = {"vars": [*variables, 5]}
    elif change == 3:
        del document["head"]
    elif change == 4:
        document["results"] = {"bindings": {"not": "a list"}}
    elif change == 5:
        document["link"] = [12345678901234567890123, 1.5]  # numbers where nothing is read
    elif change == 6:
        document["results"]["bindings"] = [*rows, "not an object"]
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    if change == 7:  # a repeated key: the last one counts, as for `json`
        text = text.replace('{"head": ', '{"head": {"vars": ["z"]}, "head": ', 1)
    elif change == 8:
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]  # cut short
    elif change == 9:
        text = text.replace('"value": "', '"value": "\\ud800', 1)  # a lone surrogate, escaped
    return text


def generic(text: str, literal_match: str) -> Any:
    """The generic path's answer: the table's parts, or the error message."""
    try:
        table = results_table(json.loads(text), literal_match)  # type: ignore[arg-type]
    except (SparqlResultsError, ValueError, AttributeError, TypeError) as error:
        return ("error", str(error))
    return table.variables, table.columns, table.row_count


def typed_select(text: str, literal_match: Any) -> tuple[Any, ...] | None:
    """The typed path's variables, columns and row count, or None where it declines."""
    typed = typed_table(text, literal_match)
    return typed[:3] if typed is not None else None


@settings(max_examples=600, deadline=None)
@given(documents(), st.sampled_from(LITERAL_MATCHES))
def test_the_typed_path_makes_the_generic_table_or_declines(text: str, literal_match: str) -> None:
    typed = typed_select(text, literal_match)  # type: ignore[arg-type]
    if typed is not None:
        assert typed == generic(text, literal_match)
    # Either way the public parser answers as the generic path does.
    try:
        table = parse_sparql_results(text, literal_match)  # type: ignore[arg-type]
    except SparqlResultsError as error:
        answer: Any = ("error", str(error))
    else:
        answer = (table.variables, table.columns, table.row_count)
    expected = generic(text, literal_match) if _is_json(text) else answer
    if answer[0] != "error":
        assert answer == expected


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_the_common_shape_is_taken_by_the_typed_path() -> None:
    text = json.dumps(
        {
            "head": {"vars": ["city", "population", "label"], "link": []},
            "results": {
                "bindings": [
                    {
                        "city": {"type": "uri", "value": "http://dbpedia.org/resource/Z%C3%BCrich"},
                        "population": {"type": "literal", "datatype": XSD + "integer", "value": "421878"},
                        "label": {"type": "literal", "xml:lang": "de", "value": "Zürich"},
                    },
                    {"city": {"type": "uri", "value": "http://dbpedia.org/resource/Bern"}},
                ]
            },
        }
    )
    typed = typed_select(text, "value")
    assert typed == (
        ("city", "population", "label"),
        (
            ("http://dbpedia.org/resource/Z%C3%BCrich", "http://dbpedia.org/resource/Bern"),
            (421878, None),
            ("Zürich", None),
        ),
        2,
    )
    assert typed == generic(text, "value")


@pytest.mark.parametrize(
    "cell",
    [
        '{"type": "literal", "d\\u0061tatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "08"}',
        '{"type": "bn\\u006fde", "value": "b0"}',
        '{"type": "literal", "datatype": "http://www.w3.org/2001/XMLSchema#integer", "value": "08"}',
        '{"type": "bnode", "value": "b0"}',
    ],
)
def test_a_datatype_or_blank_node_however_spelled_is_read_as_the_generic_path_reads_it(cell: str) -> None:
    # Beside a column of plain texts, which the typed path reads without looking at each cell.
    text = (
        '{"head": {"vars": ["a", "b"]}, "results": {"bindings": ['
        f'{{"a": {cell}, "b": {{"type": "uri", "value": "http://x/1"}}}}, {{"a": {cell}}}]}}}}'
    )
    typed = typed_table(text, "value")
    assert typed is not None
    assert typed[:3] == generic(text, "value")
    assert typed[3] == ("b0" in cell)


@pytest.mark.parametrize(
    "text",
    [
        '{"head": {}, "boolean": true}',  # ASK
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"value": 8}}]}}',  # a number as value
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": null}]}}',  # unbound written as null
        '{"head": {"vars": ["a", "a"]}, "results": {"bindings": []}}',  # a variable twice
        '{"head": {"vars": ["a"]}, "results": {"bindings": [{"a": {"value": "\\ud800"}}]}}',  # lone surrogate
        '{"head": {"vars": ["a"]}, "results": {"bindings": []}, "x": NaN}',  # not strict JSON
    ],
)
def test_odd_shapes_are_left_to_the_generic_path(text: str) -> None:
    assert typed_select(text, "value") is None


@st.composite
def outputs_for_emptiness(draw: st.DrawFn) -> str:
    """Step outputs the aggregates ask "is it empty?" of: results shaped or not, bindings of any kind."""
    rows = draw(st.sampled_from([[], [{}], [{"a": {"value": "x"}}, 1], {}, None, 0, "", "rows"]))
    document = draw(
        st.sampled_from(
            [
                {"head": {"vars": ["a"]}, "results": {"bindings": rows}},
                {"results": {"bindings": rows}, "results_count": 12345678901234567890123},
                {"results": rows},
                {"results": {}},
                {"head": {}, "boolean": False, "results": {"bindings": rows}},
                rows,
                {"answer": rows},
            ]
        )
    )
    text = json.dumps(document)
    change = draw(st.integers(0, 5))
    if change == 1:
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    elif change == 2:
        text = f"  {text}\n"
    elif change == 3 and text.startswith("{"):
        text = '{"results": {"bindings": [1]}, ' + text[1:]  # a repeated key: the last one counts
    return text


def emptiness_by_definition(text: str) -> bool:
    """Blank, `[]`/`{}`/null/"", or results whose `bindings` is empty (the aggregates' rule)."""
    if not text.strip():
        return True
    try:
        data = json.loads(text)
    except ValueError:
        return False
    if isinstance(data, dict) and isinstance(data.get("results"), dict):
        return not data["results"].get("bindings")
    return data in ([], {}, None, "")


@settings(max_examples=300, deadline=None)
@given(outputs_for_emptiness())
def test_counting_rows_without_building_them_agrees_with_the_rule(text: str) -> None:
    assert is_empty_output(text) is emptiness_by_definition(text)
    rows = typed_row_count(text.strip())
    if rows is not None:  # only a list of bindings is counted; the rest is left to the generic parse
        assert rows == len(json.loads(text)["results"]["bindings"])


def test_rows_are_counted_without_the_generic_parse() -> None:
    listed = (
        '{"head": {"vars": ["iri"]}, "results": {"bindings": [{"iri": {"type": "uri", "value": "urn:x"}}]}}'
    )
    assert typed_row_count(listed) == 1
    assert typed_row_count('{"head": {"vars": []}, "results": {"bindings": []}}') == 0
    assert typed_row_count('{"results": {"bindings": null}}') is None  # not a list: the generic rule decides


@pytest.mark.parametrize(
    "text",
    [
        '{"head":{"vars":["a","b"]},"results":{"bindings":[{"a":{"type":"uri","value":"urn:x"}}]}}',
        '{ "head" : { "vars" : [ "a", "b" ] } , "results": {"bindings": [{"b": {"value": "8"}}]}}',
        '{"results": {"bindings": [{"a": {"value": "x"}}]}, "head": {"vars": ["a"]}}',  # the head last
        '{"head": {"vars": ["a\\u005d"]}, "results": {"bindings": [{"a]": {"value": "x"}}]}}',  # "]" escaped
        # a later head overrides the opening's
        '{"head": {"vars": ["z"]}, "results": {"bindings": [{"a": {"value": "x"}}]}, '
        '"head": {"vars": ["a"]}}',
    ],
)
def test_the_head_is_read_wherever_it_stands_and_the_last_one_counts(text: str) -> None:
    typed = typed_select(text, "value")
    assert typed is not None and typed == generic(text, "value")
