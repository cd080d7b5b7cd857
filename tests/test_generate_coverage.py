"""Coverage of the graph by a corpus's reference queries: the example corpus over the example grid,
and how a query's text is read (prefixed names, `a`, IRIs; strings, comments and PREFIX lines not)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from generate_support import EXAMPLE, RELEASE_1, corpus_command
from oxigraph_server import RecordedRequest, RecordingProxy

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.generate.coverage import (
    RDF_TYPE,
    Coverage,
    GraphTerms,
    corpus_coverage,
    coverage_lines,
    graph_terms,
    named_iris,
)
from pytest_graphrag_eval.graph.factory import open_endpoint

CIM = "https://cim.ucaiug.io/ns#"


def test_named_iris_reads_prefixed_names_iris_and_a() -> None:
    query = """PREFIX cim: <https://cim.ucaiug.io/ns#>
PREFIX : <http://example.org/default#>
# cim:InAComment is not named
select ?x where {
  ?x a cim:Substation ; cim:IdentifiedObject.name "cim:InAString" ; :local ?y .
  ?y <http://example.org/full> 'it''s' ; ?p cim:Thing.
  filter(?x != <urn:uuid:1>)
}"""
    named, prefixes = named_iris(query)
    assert prefixes == {"cim": CIM, "": "http://example.org/default#"}
    assert named == {
        RDF_TYPE,
        CIM + "Substation",
        CIM + "IdentifiedObject.name",
        "http://example.org/default#local",
        "http://example.org/full",
        CIM + "Thing",
        "urn:uuid:1",
    }


def test_the_example_corpus_leaves_four_classes_and_seven_properties_untested() -> None:
    endpoint = open_endpoint(str(RELEASE_1))
    try:
        coverage = corpus_coverage([load_corpus(EXAMPLE / "corpus.yaml")], graph_terms(endpoint))
    finally:
        endpoint.close()
    assert (len(coverage.graph.classes), len(coverage.graph.properties)) == (11, 18)
    assert [coverage.short(term) for term in coverage.untested_classes()] == [
        "cim:PowerTransformerEnd",
        "cim:VoltageLevel",
        "cim:BaseVoltage",
        "cim:GeographicalRegion",
    ]
    assert len(coverage.untested_properties()) == 7
    assert coverage.short(RDF_TYPE) == f"<{RDF_TYPE}>"
    # One template names a class the whole corpus also names; none names every class.
    only_transformers = coverage.untested_classes("transformers_in_substation_SUBSTATION")
    assert CIM + "PowerTransformer" not in only_transformers and CIM + "Substation" in only_transformers


def test_the_command_prints_the_coverage_and_its_json(capsys: pytest.CaptureFixture[str]) -> None:
    corpus = EXAMPLE / "corpus.yaml"
    assert corpus_command("coverage", corpus, "--sparql-endpoint", RELEASE_1, "--shown", "2") == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "graph coverage: reference queries name 7 of 11 classes and 11 of 18 properties"
    assert printed[1] == (
        "  untested classes (4, by uses): cim:PowerTransformerEnd (110), cim:VoltageLevel (81), and 2 more"
    )
    assert "  transformers_in_substation_SUBSTATION: 1 classes, 3 properties" in printed
    assert corpus_command("coverage", corpus, "--sparql-endpoint", RELEASE_1, "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["untested_classes"][0] == "cim:PowerTransformerEnd" and document["tested_classes"] == 7
    assert set(document["templates"]) == {template.template_id for template in load_corpus(corpus).templates}


def test_the_html_page_lists_the_untested_terms_escaped(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.yaml"
    text = (EXAMPLE / "corpus.yaml").read_text("utf-8")
    corpus.write_text(
        text.replace("transformers_in_substation_SUBSTATION", "<script>x</script>"), encoding="utf-8"
    )
    page = tmp_path / "coverage.html"
    assert corpus_command("coverage", corpus, "--sparql-endpoint", RELEASE_1, "--html", page) == 0
    html = page.read_text("utf-8")
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "Reference queries name 7 of 11 classes and 11 of 18 properties" in html
    assert '<tr><td><code>cim:PowerTransformerEnd</code></td><td class="num">110</td></tr>' in html
    assert html.count("<tr><td><code>cim:") == 11  # the four classes and seven properties, all under cim:


def test_terminal_lines_show_control_characters_from_the_graph_and_the_corpus_escaped() -> None:
    forged = "http://example.org/\u202eevil"
    graph = GraphTerms({forged: 2}, {CIM + "name": 3})
    template = "zone\x1b[2J\nPASS  all gates"
    coverage = Coverage(graph, frozenset(), {template: frozenset()}, {"cim": CIM})
    lines = coverage_lines(coverage)
    text = "\n".join(lines)
    assert "\x1b" not in text and "\u202e" not in text and len(lines) == 4
    assert lines[1] == "  untested classes (1, by uses): <http://example.org/\\u202eevil> (2)"
    assert lines[3] == "  zone\\x1b[2J\\nPASS  all gates: 0 classes, 0 properties"


@pytest.mark.parametrize("uses", ["lots", "9" * 5000, "²", None])
def test_an_endpoint_counting_garbage_is_an_error_naming_it(
    capsys: pytest.CaptureFixture[str], uses: str | None
) -> None:
    """An endpoint's answer is data: a count that is not a whole number is the endpoint's error."""
    cell = {} if uses is None else {"uses": {"type": "literal", "value": uses}}
    row = {"term": {"type": "uri", "value": "http://example.org/C"}, **cell}
    body = json.dumps({"head": {"vars": ["term", "uses"]}, "results": {"bindings": [row]}}).encode()

    def answer(request: RecordedRequest) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "application/sparql-results+json"}, body

    with RecordingProxy("http://127.0.0.1:1/", answer) as endpoint:
        assert corpus_command("coverage", EXAMPLE / "corpus.yaml", "--sparql-endpoint", endpoint.url) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and "not a whole number" in error and len(error) < 500
