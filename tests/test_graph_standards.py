"""The graph stage speaks RDF as the standards do: blank nodes compared up to renaming (never stale
on unchanged data), relative IRIs resolved against each file, SERVICE never reaching out unless
allowed, any engine or client failure one question's error, and no secret from the endpoint URL in
any output."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from graph_support import SPARQL_JSON
from oxigraph_server import OxigraphServer, RecordingProxy

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint
from pytest_graphrag_eval.graph.endpoint import EndpointError, QueryRefused
from pytest_graphrag_eval.graph.factory import identify_graph
from pytest_graphrag_eval.graph.http import HttpEndpoint
from pytest_graphrag_eval.graph.references import FRESH, check_questions
from pytest_graphrag_eval.graph.service import ServicePolicy

pytest_plugins = ["pytester"]

EX = "http://example.org/g#"
WITH_BLANK_NODES = f"""@prefix ex: <{EX}> .
ex:s1 ex:name "Alpha" ; ex:part [ ex:label "north" ], [ ex:label "south" ] .
ex:s2 ex:name "Beta" ; ex:part [ ex:label "east" ] .
"""
PARTS = f"PREFIX ex: <{EX}>\nSELECT ?s ?part ?label WHERE {{ ?s ex:part ?part . ?part ex:label ?label }}"
NAMES = f"PREFIX ex: <{EX}>\nSELECT ?name WHERE {{ ?s ex:name ?name }}"
SECRET = "sk-SECRET-7f3a9c"


class FaultServer:
    """A loopback HTTP server standing in for a remote host: counts every request, answers `body`."""

    def __init__(
        self, body: bytes = b"<html><body>Service down</body></html>", content_type: str = "text/html"
    ):
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                server.requests.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/sparql"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def corpus(queries: dict[str, str], outputs: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "template_id": "t",
            "questions": [
                {
                    "id": question_id,
                    "question_text": f"{question_id}?",
                    "reference_steps": [
                        [
                            {
                                "name": "sparql_query",
                                "args": {"query": query},
                                "output": outputs[question_id],
                                "output_media_type": SPARQL_JSON,
                            }
                        ]
                    ],
                }
                for question_id, query in queries.items()
            ],
        }
    ]


def responses(queries: dict[str, str], outputs: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "question_id": question_id,
            "actual_answer": "recorded",
            "actual_steps": [
                {
                    "name": "sparql_query",
                    "args": {"query": query},
                    "status": "success",
                    "output": outputs[question_id],
                }
            ],
        }
        for question_id, query in queries.items()
    ]


def write(
    folder: Path, queries: dict[str, str], outputs: dict[str, str], graph: str = WITH_BLANK_NODES
) -> None:
    folder.joinpath("corpus.yaml").write_text(yaml.safe_dump(corpus(queries, outputs)), encoding="utf-8")
    folder.joinpath("responses.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in responses(queries, outputs)), encoding="utf-8"
    )
    folder.joinpath("graph.ttl").write_text(graph, encoding="utf-8")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-report",
        "report.json",
        "--graphrag-threshold",
        "steps_score>=1",
        "-p",
        "no:cacheprovider",
        *args,
    )


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads(pytester.path.joinpath("report.json").read_text(encoding="utf-8"))


# Blank nodes ----------------------------------------------------------------------------------------


def test_a_blank_node_reference_is_fresh_on_every_check_embedded_and_server(tmp_path: Path) -> None:
    graph = tmp_path / "graph.ttl"
    graph.write_text(WITH_BLANK_NODES, encoding="utf-8")
    stored = EmbeddedEndpoint.load(graph).execute(PARTS).text
    assert '"bnode"' in stored
    path = tmp_path / "corpus.yaml"
    path.write_text(yaml.safe_dump(corpus({"parts": PARTS}, {"parts": stored})), encoding="utf-8")
    questions = list(load_corpus(path).questions())
    for _ in range(2):  # each load names the blank nodes afresh
        checked = check_questions(questions, EmbeddedEndpoint.load(graph), concurrency=1)
        assert [step.status for step in next(iter(checked.values())).steps] == [FRESH]  # type: ignore[union-attr]
    with OxigraphServer([graph]) as server:
        endpoint = HttpEndpoint(server.url, environ={})
        served = endpoint.execute(PARTS).text
        assert served != stored  # the server names its blank nodes its own way
        for _ in range(2):
            checked = check_questions(questions, endpoint, concurrency=1)
            assert [step.status for step in next(iter(checked.values())).steps] == [FRESH]  # type: ignore[union-attr]
        endpoint.close()


def test_the_stale_gate_stays_green_and_update_rewrites_nothing(pytester: pytest.Pytester) -> None:
    write(pytester.path, {"parts": PARTS}, {"parts": "{}"})
    graph = pytester.path / "graph.ttl"
    stored = EmbeddedEndpoint.load(graph).execute(PARTS).text
    write(pytester.path, {"parts": PARTS}, {"parts": stored})
    before = pytester.path.joinpath("corpus.yaml").read_text(encoding="utf-8")
    for _ in range(2):
        result = run(
            pytester,
            "--graphrag-sparql-endpoint",
            "graph.ttl",
            "--graphrag-update-references",
            "--graphrag-gate",
            "stale_references<=0",
        )
        result.assert_outcomes(passed=1)
        assert report(pytester)["references"]["stale_references"] == 0
    assert pytester.path.joinpath("corpus.yaml").read_text(encoding="utf-8") == before


def test_execute_both_scores_a_bnode_query_against_itself_one(pytester: pytest.Pytester) -> None:
    query = "SELECT (BNODE() AS ?b) WHERE {}"
    write(
        pytester.path,
        {"fresh-node": query},
        {"fresh-node": '{"head": {"vars": ["b"]}, "results": {"bindings": []}}'},
    )
    result = run(pytester, "--graphrag-sparql-endpoint", "graph.ttl", "--graphrag-execute", "both")
    result.assert_outcomes(passed=1)
    assert report(pytester)["results"][0]["steps_score"] == 1


# Base IRIs -------------------------------------------------------------------------------------------

RELATIVE_TURTLE = '<abc> <http://example.org/p> "from turtle" .\n'
RDF_XML_ABOUT_SELF = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
  <rdf:Description rdf:about=""><ex:p>from rdf/xml</ex:p></rdf:Description>
</rdf:RDF>
"""
SUBJECTS = "SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o } ORDER BY ?o"


def test_relative_iris_resolve_against_each_files_own_uri(tmp_path: Path) -> None:
    (tmp_path / "relative.ttl").write_text(RELATIVE_TURTLE, encoding="utf-8")
    (tmp_path / "about.rdf").write_text(RDF_XML_ABOUT_SELF, encoding="utf-8")
    rows = json.loads(EmbeddedEndpoint.load(tmp_path).execute(SUBJECTS).text)["results"]["bindings"]
    assert [(row["s"]["value"], row["o"]["value"]) for row in rows] == [
        ((tmp_path / "about.rdf").resolve().as_uri(), "from rdf/xml"),
        ((tmp_path / "relative.ttl").resolve().as_uri().rsplit("/", 1)[0] + "/abc", "from turtle"),
    ]


def test_a_base_iri_option_resolves_them_all_and_leaves_the_graph_identity(pytester: pytest.Pytester) -> None:
    query = "SELECT ?s WHERE { ?s <http://example.org/p> ?o }"
    expected = '{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://data.example.org/abc"}}]}}'
    write(pytester.path, {"relative": query}, {"relative": expected}, graph=RELATIVE_TURTLE)
    result = run(
        pytester,
        "--graphrag-sparql-endpoint",
        "graph.ttl",
        "--graphrag-sparql-base-iri",
        "http://data.example.org/",
        "--graphrag-check-references",
    )
    result.assert_outcomes(passed=1)
    graph = report(pytester)["metadata"]["graph"]
    without = identify_graph(str(pytester.path / "graph.ttl"), pytester.path)
    assert graph["content_hash"] == without["content_hash"] and graph["files"] == without["files"]
    assert "base" not in json.dumps(graph)


# A folder holding two releases ------------------------------------------------------------------------


def test_a_folder_with_two_releases_of_one_file_is_refused_naming_both() -> None:
    example = Path(__file__).resolve().parents[1] / "example_project" / "grid"
    with pytest.raises(
        EndpointError, match=r"grid\.ttl and release-2/grid\.ttl, two RDF files of the same name"
    ):
        EmbeddedEndpoint.load(example)
    with pytest.raises(EndpointError, match="two releases"):
        identify_graph(str(example))


def test_a_folder_of_distinct_files_in_subfolders_still_loads(tmp_path: Path) -> None:
    (tmp_path / "part").mkdir()
    (tmp_path / "a.ttl").write_text('<http://x/a> <http://x/p> "1" .\n', encoding="utf-8")
    (tmp_path / "part" / "b.ttl").write_text('<http://x/b> <http://x/p> "2" .\n', encoding="utf-8")
    assert EmbeddedEndpoint.load(tmp_path).triples == 2


# SERVICE ---------------------------------------------------------------------------------------------


def service_query(url: str) -> str:
    return f"SELECT ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}"


def test_service_is_refused_by_the_embedded_store_and_the_http_check(
    fault: FaultServer, tmp_path: Path
) -> None:
    graph = tmp_path / "g.ttl"
    graph.write_text(WITH_BLANK_NODES, encoding="utf-8")
    queries = [
        service_query(fault.url),
        f"ASK {{ SERVICE <{fault.url}> {{ ?s ?p ?o }} }}",
        f"PREFIX r: <{fault.url.rsplit('/', 1)[0]}/>\n"
        "CONSTRUCT { ?s ?p ?o } WHERE { SERVICE r:sparql { ?s ?p ?o } }",
        f"SELECT * WHERE {{ ?s ?p ?o FILTER EXISTS {{ SERVICE <{fault.url}> {{ ?s ?p ?o }} }} }}",
        "select * where { service silent ?endpoint { ?s ?p ?o } }",
    ]
    embedded = EmbeddedEndpoint.load(graph)
    with OxigraphServer([graph]) as server:
        remote = HttpEndpoint(server.url, environ={})
        for query in queries:
            for endpoint in (embedded, remote):
                with pytest.raises(
                    QueryRefused, match=r"SERVICE .* clause, which would call another endpoint"
                ):
                    endpoint.execute(query)
        remote.close()
    assert fault.requests == []


@pytest.mark.parametrize("mode", ["reference", "agent", "both"])
def test_service_sends_nothing_in_any_execute_mode_and_only_its_question_fails(
    pytester: pytest.Pytester, fault: FaultServer, mode: str
) -> None:
    pytester.path.joinpath("graph.ttl").write_text(WITH_BLANK_NODES, encoding="utf-8")
    good = EmbeddedEndpoint.load(pytester.path / "graph.ttl").execute(NAMES).text
    queries = {"names": NAMES, "federated": service_query(fault.url)}
    write(pytester.path, queries, {"names": good, "federated": good})
    result = run(pytester, "--graphrag-sparql-endpoint", "graph.ttl", "--graphrag-execute", mode)
    result.assert_outcomes(passed=1, failed=1)
    results = {r["question_id"]: r for r in report(pytester)["results"]}
    assert {key: r["outcome"] for key, r in results.items()} == {"names": "passed", "federated": "failed"}
    clause = f"SERVICE <{fault.url}> clause"
    if mode == "agent":  # the agent's step is the one that could not run
        assert clause in results["federated"]["actual_steps"][0]["error"]
    else:
        assert clause in result.stdout.str()
    assert fault.requests == []


def test_the_allow_list_sends_to_the_allowed_host_only_and_an_html_answer_is_one_error(
    pytester: pytest.Pytester, fault: FaultServer
) -> None:
    with FaultServer() as other:
        pytester.path.joinpath("graph.ttl").write_text(WITH_BLANK_NODES, encoding="utf-8")
        good = EmbeddedEndpoint.load(pytester.path / "graph.ttl").execute(NAMES).text
        queries = {"names": NAMES, "allowed": service_query(fault.url), "other": service_query(other.url)}
        write(pytester.path, queries, {key: good for key in queries})
        result = run(
            pytester,
            "--graphrag-sparql-endpoint",
            "graph.ttl",
            "--graphrag-sparql-service",
            fault.url,
            "--graphrag-execute",
            "reference",
        )
        assert result.ret == 1  # failed questions, not an internal error
        outcomes = {r["question_id"]: r["outcome"] for r in report(pytester)["results"]}
        assert outcomes == {"names": "passed", "allowed": "failed", "other": "failed"}
        assert len(fault.requests) >= 1  # the embedded store did call the allowed host: it answered HTML
        assert other.requests == []
        assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
        assert "the query failed in the embedded store" in result.stdout.str()


def test_service_policy_reads_all_or_iris() -> None:
    assert ServicePolicy.parse(None).refusal(["http://a/"]) is not None
    assert ServicePolicy.parse("all").refusal(["http://a/", "?x"]) is None
    assert ServicePolicy.parse("<http://a/>, http://b/").refusal(["http://a/", "http://b/"]) is None
    assert "all" in (ServicePolicy.parse("http://a/").refusal(["?x"]) or "")


# Secrets in the endpoint URL -------------------------------------------------------------------------


class EchoServer(FaultServer):
    """An endpoint that echoes the request line into an HTML error page, as some servers do."""

    def __init__(self) -> None:
        super().__init__()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                server.requests.append(self.path)
                body = f"<html><body>Bad request: {self.requestline}</body></html>".encode()
                self.send_response(400)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server.RequestHandlerClass = Handler


def test_a_secret_in_the_url_query_string_appears_in_no_output(pytester: pytest.Pytester) -> None:
    with EchoServer() as echo:
        write(pytester.path, {"names": NAMES}, {"names": "{}"})
        result = run(
            pytester,
            "--graphrag-sparql-endpoint",
            f"{echo.url}?api_key={SECRET}&format=json",
            "--graphrag-check-references",
            "--junitxml",
            "junit.xml",
        )
        assert echo.requests and SECRET in echo.requests[0]  # the server did see it, and echoed it
    output = result.stdout.str() + result.stderr.str()
    assert "Bad request" in output  # the echoed page is quoted...
    assert SECRET not in output  # ...without the secret
    assert "format=json" in output  # a short value under an ordinary name is no secret, and stays readable
    for name in ("report.json", "junit.xml"):
        text = pytester.path.joinpath(name).read_text(encoding="utf-8")
        assert "Bad request" in text and SECRET not in text, name


def test_through_a_real_server_service_sends_nothing_and_blank_nodes_stay_fresh(
    pytester: pytest.Pytester, fault: FaultServer
) -> None:
    """The HTTP endpoint mode: the check before sending decides from the parsed query, so neither the
    remote host of the SERVICE clause nor the endpoint itself gets the query; a blank-node reference
    stored from the embedded store is fresh on the server's own labels, check after check."""
    graph = pytester.path / "graph.ttl"
    graph.write_text(WITH_BLANK_NODES, encoding="utf-8")
    stored = EmbeddedEndpoint.load(graph).execute(PARTS).text
    queries = {"parts": PARTS, "federated": service_query(fault.url)}
    with OxigraphServer([graph]) as server, RecordingProxy(server.url) as proxy:
        write(pytester.path, queries, {"parts": stored, "federated": stored})
        for _ in range(2):
            result = run(pytester, "--graphrag-sparql-endpoint", proxy.url, "--graphrag-check-references")
            result.assert_outcomes(passed=1, failed=1)
            section = report(pytester)["references"]
            assert section["stale_references"] == 0 and section["failed_queries"] == 1
        assert f"SERVICE <{fault.url}> clause" in result.stdout.str()
        assert all(b"SERVICE" not in request.body for request in proxy.requests)
        assert len(proxy.requests) == 2  # the blank-node query, once per run
    assert fault.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--graphrag-sparql-service", "all"], "--graphrag-sparql-service needs a graph"),
        (["--graphrag-sparql-base-iri", "http://b/"], "--graphrag-sparql-base-iri needs a graph"),
        (
            [
                "--graphrag-sparql-endpoint",
                "http://127.0.0.1:9/sparql",
                "--graphrag-sparql-base-iri",
                "http://b/",
            ],
            "applies to RDF files only",
        ),
        (
            ["--graphrag-sparql-endpoint", "graph.ttl", "--graphrag-sparql-base-iri", "data/"],
            "an absolute IRI",
        ),
    ],
)
def test_graph_options_that_cannot_take_effect_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    write(pytester.path, {"names": NAMES}, {"names": "{}"})
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str() + result.stdout.str()


def test_pointing_the_run_at_a_folder_of_two_releases_stops_it_with_both_names(
    pytester: pytest.Pytester,
) -> None:
    write(pytester.path, {"names": NAMES}, {"names": "{}"})
    releases = pytester.path / "grid"
    (releases / "release-2").mkdir(parents=True)
    (releases / "grid.ttl").write_text(WITH_BLANK_NODES, encoding="utf-8")
    (releases / "release-2" / "grid.ttl").write_text(WITH_BLANK_NODES, encoding="utf-8")
    result = run(pytester, "--graphrag-sparql-endpoint", "grid", "--graphrag-check-references")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "holds grid.ttl and release-2/grid.ttl, two RDF files of the same name" in result.stderr.str()
