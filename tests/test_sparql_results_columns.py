"""The column-wise fast path of the SPARQL results parser gives the cell-by-cell terms."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.formats.sparql_results import SparqlResultsError, parse_sparql_results
from pytest_graphrag_eval.formats.terms import LITERAL_MATCHES, LiteralMatch, normalize_cell

XSD = "http://www.w3.org/2001/XMLSchema#"
CELLS: list[Any] = [
    None,  # unbound
    {"type": "uri", "value": "http://dbpedia.org/resource/S%C3%A3o_Paulo"},
    {"type": "literal", "value": "München", "xml:lang": "de"},
    {"type": "literal", "value": "8"},
    {"type": "literal", "value": "08"},
    {"type": "literal", "value": "-2.5"},
    {"type": "uri", "value": "8"},
    {"type": "literal", "value": "8", "datatype": XSD + "integer"},
    {"type": "literal", "value": "1.50", "datatype": XSD + "decimal"},
    {"type": "literal", "value": "true", "datatype": XSD + "boolean"},
]
BAD_CELLS: list[Any] = [{"type": "literal", "value": 8}, {"type": "literal"}, "text", 3]


def by_cell(
    bindings: list[dict[str, Any]], variables: list[str], literal_match: LiteralMatch
) -> tuple[tuple[Any, ...], ...]:
    return tuple(
        tuple(
            None if binding.get(v) is None else normalize_cell(binding[v], literal_match)
            for binding in bindings
        )
        for v in variables
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(CELLS), st.sampled_from(CELLS)), max_size=8),
    st.sampled_from(LITERAL_MATCHES),
)
def test_columns_are_the_terms_of_each_cell(rows: list[tuple[Any, Any]], literal_match: LiteralMatch) -> None:
    variables = ["a", "b"]
    bindings = [{v: cell for v, cell in zip(variables, row, strict=True) if cell is not None} for row in rows]
    output = json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})
    table = parse_sparql_results(output, literal_match)
    assert table.columns == by_cell(bindings, variables, literal_match)
    assert [list(map(type, column)) for column in table.columns] == [
        list(map(type, column)) for column in by_cell(bindings, variables, literal_match)
    ]


@pytest.mark.parametrize("bad", BAD_CELLS)
def test_a_bad_cell_among_plain_ones_is_named(bad: Any) -> None:
    plain = {"type": "literal", "value": "x"}
    bindings = [{"a": plain}, {"a": plain}, {"a": bad}]
    output = json.dumps({"head": {"vars": ["a"]}, "results": {"bindings": bindings}})
    with pytest.raises(SparqlResultsError, match="binding #3"):
        parse_sparql_results(output)


def test_a_binding_that_is_not_an_object_is_named() -> None:
    output = json.dumps({"head": {"vars": ["a"]}, "results": {"bindings": [{}, {}, [1]]}})
    with pytest.raises(SparqlResultsError, match="binding #3 must be an object"):
        parse_sparql_results(output)
