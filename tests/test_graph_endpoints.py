"""The embedded store and a real Oxigraph server give identical results; the HTTP client sends
credentials and never shows them, sends no Update, and turns a dead server into one clear error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from graph_support import GRID, QUERIES
from oxigraph_server import OxigraphServer, RecordingProxy

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint
from pytest_graphrag_eval.graph.endpoint import (
    EndpointError,
    EndpointUnavailable,
    QueryForm,
    QueryRefused,
)
from pytest_graphrag_eval.graph.factory import open_endpoint
from pytest_graphrag_eval.graph.http import HttpEndpoint
from pytest_graphrag_eval.graph.readonly import query_form
from pytest_graphrag_eval.graph.references import check_questions

SECRET_TOKEN = "tok-SECRET-93b1c7e2"
SECRET_PASSWORD = "pw-SECRET-5d2a"
UPDATES = [
    "INSERT DATA { <urn:x> <urn:y> <urn:z> }",
    "DELETE WHERE { ?s ?p ?o }",
    "CLEAR ALL",
    "DROP DEFAULT",
    "LOAD <http://127.0.0.1:1/data.ttl>",
    "PREFIX cim: <https://cim.ucaiug.io/ns#>\nDELETE { ?s ?p ?o } INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }",
]


@pytest.fixture(scope="module")
def server() -> Iterator[OxigraphServer]:
    with OxigraphServer([GRID]) as running:
        yield running


@pytest.fixture(scope="module")
def embedded() -> EmbeddedEndpoint:
    return EmbeddedEndpoint.load(GRID)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_embedded_and_server_give_identical_results(
    name: str, embedded: EmbeddedEndpoint, server: OxigraphServer
) -> None:
    remote = HttpEndpoint(server.url, environ={})
    local, fresh = embedded.execute(QUERIES[name]), remote.execute(QUERIES[name])
    assert fresh.form is local.form
    assert fresh.text == local.text
    assert fresh.text.strip()  # results, not an empty answer


def test_query_forms_are_parsed_not_guessed() -> None:
    # The keywords inside IRIs and literals do not fool the parser.
    assert query_form('SELECT ?s WHERE { ?s <urn:DESCRIBE> "ASK INSERT" }') is QueryForm.SELECT
    assert query_form("# DELETE WHERE {?s ?p ?o}\nASK { ?s ?p ?o }") is QueryForm.ASK
    assert query_form("PREFIX x: <urn:x#> CONSTRUCT WHERE { ?s x:p ?o }") is QueryForm.CONSTRUCT
    assert query_form("DESCRIBE <urn:a>") is QueryForm.CONSTRUCT


@pytest.mark.parametrize("update", UPDATES)
def test_an_update_is_refused_and_never_sent(
    update: str, embedded: EmbeddedEndpoint, server: OxigraphServer
) -> None:
    before = server.triple_count()
    with RecordingProxy(server.url) as proxy:
        remote = HttpEndpoint(proxy.url, environ={})
        with pytest.raises(QueryRefused, match="not a valid read-only SPARQL query"):
            remote.execute(update)
        assert proxy.requests == []
    with pytest.raises(QueryRefused):
        embedded.execute(update)
    assert server.triple_count() == before
    assert len(embedded.execute("SELECT * { ?s ?p ?o }").text) > 1000


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"GRAPHRAG_SPARQL_TOKEN": SECRET_TOKEN}, f"Bearer {SECRET_TOKEN}"),
        (
            {"GRAPHRAG_SPARQL_USER": "reader", "GRAPHRAG_SPARQL_PASSWORD": SECRET_PASSWORD},
            "Basic cmVhZGVyOnB3LVNFQ1JFVC01ZDJh",
        ),
    ],
)
def test_credentials_are_sent_and_never_echoed(
    environ: dict[str, str], expected: str, server: OxigraphServer
) -> None:
    def echo_headers_on_ask(request):  # a server whose error page quotes the request headers
        if b"ASK" in request.body:
            return 500, {"Content-Type": "text/plain"}, f"failed for {request.headers}".encode()
        return None

    with RecordingProxy(server.url, behaviour=echo_headers_on_ask) as proxy:
        remote = HttpEndpoint(proxy.url, environ=environ, retries=0)
        assert remote.execute(QUERIES["select"]).text
        assert proxy.requests[0].headers["Authorization"] == expected
        with pytest.raises(EndpointError) as raised:
            remote.execute(QUERIES["ask_true"])
    message = str(raised.value)
    assert "HTTP 500" in message and "***" in message
    for secret in (SECRET_TOKEN, SECRET_PASSWORD, expected.split()[1]):
        assert secret not in message
        assert secret not in str(remote.describe())


def test_a_url_with_credentials_in_it_is_refused_without_showing_them() -> None:
    with pytest.raises(EndpointError) as raised:
        open_endpoint(f"http://reader:{SECRET_PASSWORD}@127.0.0.1:1/query")
    assert SECRET_PASSWORD not in str(raised.value)
    assert "GRAPHRAG_SPARQL_TOKEN" in str(raised.value)


def test_a_server_stopped_mid_run_is_one_clear_error() -> None:
    corpus = load_corpus(GRID.parents[1] / "corpus.yaml")
    questions = list(corpus.questions())
    with OxigraphServer([GRID]) as doomed:
        remote = HttpEndpoint(doomed.url, environ={}, retries=1)
        first = check_questions(questions[:5], remote, concurrency=4)
        assert all(not isinstance(check, Exception) for check in first.values())
        doomed.stop()
        rest = check_questions(questions[5:], remote, concurrency=8)
    errors = {str(check) for check in rest.values() if isinstance(check, EndpointUnavailable)}
    assert len(rest) == len(questions) - 5
    assert all(isinstance(check, EndpointUnavailable) for check in rest.values())
    assert len(errors) == 1  # every question reports the same single error
    (error,) = errors
    assert doomed.url in error and "is unavailable" in error and "connection refused" in error
    # The breaker is open: a later query fails at once, with the same error, sending nothing.
    with pytest.raises(EndpointUnavailable, match="is unavailable"):
        remote.execute(QUERIES["select"])
