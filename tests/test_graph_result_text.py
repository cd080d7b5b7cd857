"""The embedded store's result text: the same bytes corpora store, however it is computed.

`solutions_json` must give exactly pyoxigraph's SPARQL results JSON re-written by `json.dumps`
(Python's separators, `ensure_ascii=False`), the text every stored output and
`--graphrag-check-references` compare; and the endpoint, which parses a query once (in the store),
must still refuse whatever is not a read-only query, as `query_form` does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint
from pytest_graphrag_eval.graph.endpoint import QueryForm, QueryRefused
from pytest_graphrag_eval.graph.rdf_text import solutions_json
from pytest_graphrag_eval.graph.readonly import query_form

TEXTS = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
LANGUAGES = st.sampled_from([None, "en", "fr-CA"])


def _stored_text(store: pyoxigraph.Store, query: str) -> str:
    """The definition: pyoxigraph's JSON read and written again by the standard library."""
    data = store.query(query).serialize(format=pyoxigraph.QueryResultsFormat.JSON)
    return json.dumps(json.loads(data), ensure_ascii=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXTS, LANGUAGES), min_size=0, max_size=6), st.integers(-(10**30), 10**30))
def test_solutions_text_is_the_standard_library_rewrite(
    labels: list[tuple[str, str | None]], number: int
) -> None:
    store = pyoxigraph.Store()
    subject = pyoxigraph.NamedNode("urn:x:s")
    for index, (label, language) in enumerate(labels):
        node = pyoxigraph.NamedNode(f"urn:x:item{index}")
        store.add(pyoxigraph.Quad(subject, pyoxigraph.NamedNode("urn:x:has"), node))
        store.add(
            pyoxigraph.Quad(
                node, pyoxigraph.NamedNode("urn:x:label"), pyoxigraph.Literal(label, language=language)
            )
        )
    store.add(
        pyoxigraph.Quad(
            subject,
            pyoxigraph.NamedNode("urn:x:size"),
            pyoxigraph.Literal(
                str(number), datatype=pyoxigraph.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
            ),
        )
    )
    store.add(pyoxigraph.Quad(subject, pyoxigraph.NamedNode("urn:x:blank"), pyoxigraph.BlankNode()))
    queries = [
        "SELECT ?item ?label ?size WHERE { ?s <urn:x:has> ?item . ?item <urn:x:label> ?label . "
        "OPTIONAL { ?s <urn:x:size> ?size } } ORDER BY ?item",
        "SELECT * WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o",
        "ASK { ?s <urn:x:label> ?label }",
        "SELECT ?nothing WHERE { FILTER(false) }",
    ]
    for query in queries:
        assert solutions_json(store.query(query)) == _stored_text(store, query)


@pytest.mark.parametrize(
    "label",
    [
        "a,b",
        "key: value",
        "},{",
        '[":"]',
        "1,2:3",
        ":",
        ",",
        "",
        "true,false",
        "x\\y",
        "é, 𝄞: ü",
        '\x00\x08\t\n\x0c\r\x1f"\x7f\x85\u2028\ufeff',
    ],
)
def test_separators_inside_labels_are_kept_as_they_are(label: str) -> None:
    """Commas and colons in values are text, not separators: only the JSON's own get a space; escapes
    (control characters, quotes) are written as `json.dumps` writes them."""
    store = pyoxigraph.Store()
    node = pyoxigraph.NamedNode(f"urn:x:{label.encode().hex()}")
    store.add(pyoxigraph.Quad(node, pyoxigraph.NamedNode("urn:x:label"), pyoxigraph.Literal(label)))
    store.add(
        pyoxigraph.Quad(node, pyoxigraph.NamedNode("urn:x:tag"), pyoxigraph.Literal(label, language="en"))
    )
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?p"
    text = solutions_json(store.query(query))
    assert text == _stored_text(store, query)
    assert [row["o"]["value"] for row in json.loads(text)["results"]["bindings"]] == [label, label]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?s WHERE { ?s ?p ?o } LIMIT 2",
        "ASK { ?s ?p ?o }",
        "CONSTRUCT WHERE { ?s ?p ?o }",
        "DESCRIBE <urn:nothing>",
        "PREFIX x: <urn:x#> SELECT (COUNT(*) AS ?n) WHERE { ?s x:p ?o }",
    ],
)
def test_the_form_taken_from_the_result_is_the_parsed_form(query: str, tmp_path: Path) -> None:
    graph = tmp_path / "graph.ttl"
    graph.write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    assert EmbeddedEndpoint.load(graph).execute(query).form is query_form(query)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("INSERT DATA { <urn:x> <urn:y> <urn:z> }", "not a valid read-only SPARQL query"),
        ("SELECT ?s WHERE { ?s ?p }", "not a valid read-only SPARQL query"),
        ("   ", "the query is empty"),
    ],
)
def test_a_text_the_store_refuses_is_refused_as_query_form_says(text: str, why: str, tmp_path: Path) -> None:
    graph = tmp_path / "graph.ttl"
    graph.write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    endpoint = EmbeddedEndpoint.load(graph)
    with pytest.raises(QueryRefused, match=why):
        endpoint.execute(text)
    assert endpoint.execute("SELECT * { ?s ?p ?o }").form is QueryForm.SELECT
    assert len(endpoint.execute("SELECT * { ?s ?p ?o }").text) > 10
