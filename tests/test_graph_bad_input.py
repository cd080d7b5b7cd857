"""Bad graph input: each a clear error naming the question or the file, nothing silently passed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from graph_support import GRID, QUERIES, RELEASE_1, outputs_on, small_corpus, small_responses, write_project
from oxigraph_server import OxigraphServer, RecordingProxy, free_port

from pytest_graphrag_eval.graph.endpoint import EndpointError, EndpointUnavailable
from pytest_graphrag_eval.graph.http import HttpEndpoint

pytest_plugins = ["pytester"]
OLD = outputs_on(RELEASE_1)


@pytest.fixture(scope="module")
def server() -> Iterator[OxigraphServer]:
    with OxigraphServer([GRID]) as running:
        yield running


def answer_with(status: int, content_type: str, body: bytes, delay: float = 0.0):
    def behaviour(request):
        time.sleep(delay)
        return status, {"Content-Type": content_type}, body

    return behaviour


def test_a_port_with_no_server_is_one_unavailable_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    endpoint = HttpEndpoint(url, environ={}, retries=1)
    with pytest.raises(EndpointUnavailable, match=r"is unavailable \(cannot reach .*connection refused"):
        endpoint.execute(QUERIES["select"])


def test_a_mistyped_host_says_it_does_not_resolve() -> None:
    endpoint = HttpEndpoint("http://sparql.no-such-host.invalid/query", environ={})
    with pytest.raises(EndpointUnavailable, match="does not resolve"):
        endpoint.execute(QUERIES["select"])


def test_a_mistyped_path_is_a_404_that_says_so(server: OxigraphServer) -> None:
    endpoint = HttpEndpoint(server.url.replace("/query", "/qeury"), environ={})
    with pytest.raises(EndpointError, match="HTTP 404 \\(not found\\): is this the endpoint's query URL"):
        endpoint.execute(QUERIES["select"])


def test_an_html_error_page_instead_of_results(server: OxigraphServer) -> None:
    page = b"<html>\n<body><h1>Maintenance</h1> back soon</body></html>"
    proxy = RecordingProxy(server.url, behaviour=answer_with(200, "text/html", page))
    with proxy, pytest.raises(EndpointError) as raised:
        HttpEndpoint(proxy.url, environ={}).execute(QUERIES["select"])
    assert "answered text/html, not application/sparql-results+json (an error page?)" in str(raised.value)
    assert "<body><h1>Maintenance</h1>" in str(raised.value)


def test_json_that_is_not_results_is_refused(server: OxigraphServer) -> None:
    proxy = RecordingProxy(server.url, behaviour=answer_with(200, "application/json", b'{"error": 1}'))
    with proxy, pytest.raises(EndpointError, match="does not parse"):
        HttpEndpoint(proxy.url, environ={}).execute(QUERIES["select"])


def test_a_401_says_credentials_are_needed_or_refused(server: OxigraphServer) -> None:
    with RecordingProxy(server.url, behaviour=answer_with(401, "text/plain", b"no")) as proxy:
        with pytest.raises(EndpointError, match=r"HTTP 401 .*set GRAPHRAG_SPARQL_TOKEN"):
            HttpEndpoint(proxy.url, environ={}).execute(QUERIES["select"])
        with pytest.raises(EndpointError, match=r"HTTP 401 .*credentials from the environment were refused"):
            HttpEndpoint(proxy.url, environ={"GRAPHRAG_SPARQL_TOKEN": "t"}).execute(QUERIES["select"])
        assert len(proxy.requests) == 2  # a 401 is not retried


def test_a_result_over_the_size_cap(server: OxigraphServer) -> None:
    endpoint = HttpEndpoint(server.url, environ={}, max_bytes=1000)
    with pytest.raises(EndpointError, match="larger than the 1,000-byte cap"):
        endpoint.execute(QUERIES["construct"])
    assert endpoint.execute(QUERIES["ask_true"]).text  # small results still pass


def test_429_and_5xx_are_retried_with_backoff(server: OxigraphServer) -> None:
    answers = iter([(429, {"Retry-After": "0"}, b""), (503, {}, b"busy"), None])
    with RecordingProxy(server.url, behaviour=lambda request: next(answers)) as proxy:
        result = HttpEndpoint(proxy.url, environ={}, retries=2).execute(QUERIES["ask_true"])
    assert json.loads(result.text)["boolean"] is True
    assert len(proxy.requests) == 3


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester, small_corpus(OLD), small_responses(OLD), {"release1.ttl": RELEASE_1})
    return pytester


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-threshold", "steps_score>=1", "-p", "no:cacheprovider", *args,
    )  # fmt: skip


def test_a_reference_query_that_times_out_is_its_questions_error(
    project: pytest.Pytester, server: OxigraphServer
) -> None:
    def slow_for_gamma(request):
        if b"s3" in request.body:
            time.sleep(3)
        return None

    with RecordingProxy(server.url, behaviour=slow_for_gamma) as proxy:
        result = run(
            project, "--graphrag-sparql-endpoint", proxy.url, "--graphrag-check-references",
            "--graphrag-sparql-timeout", "0.5",
        )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    assert (
        f"gamma-name: reference_steps[0][0]: the reference query failed: {proxy.url} did not answer within "
        "the 0.5 s timeout"
    ) in output


@pytest.mark.parametrize("workers", [None, "2"], ids=["serial", "xdist"])
def test_an_rdf_file_that_does_not_parse_names_file_and_line(
    project: pytest.Pytester, workers: str | None
) -> None:
    project.path.joinpath("broken.ttl").write_text(
        "@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\nex:d ex:e \n", encoding="utf-8"
    )
    args = ["--graphrag-sparql-endpoint", "broken.ttl", "--graphrag-check-references"]
    if workers:  # the xdist controller loads the graph once for its workers: the same usage error
        result = project.runpytest_subprocess(
            "--graphrag-corpus",
            "corpus.yaml",
            "--graphrag-responses",
            "responses.jsonl",
            "-n",
            workers,
            *args,
        )
    else:
        result = run(project, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*broken.ttl:4: the RDF file does not parse: *"])


def test_an_endpoint_option_naming_nothing(project: pytest.Pytester) -> None:
    result = run(project, "--graphrag-sparql-endpoint", "missing.ttl", "--graphrag-check-references")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*missing.ttl: no such RDF file or folder (and not an http(s):// URL)*"])


def test_checking_references_without_an_endpoint_is_a_usage_error(project: pytest.Pytester) -> None:
    result = run(project, "--graphrag-check-references")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--graphrag-check-references needs a graph: pass --graphrag-sparql-endpoint*"]
    )


def test_a_reference_step_without_a_query_under_execute_reference(project: pytest.Pytester) -> None:
    corpus = small_corpus(OLD)
    del corpus[0]["questions"][1]["reference_steps"][0][0]["args"]
    write_project(project, corpus, small_responses(OLD), {})
    result = run(project, "--graphrag-sparql-endpoint", "release1.ttl", "--graphrag-execute", "reference")
    result.assert_outcomes(passed=2, failed=1)
    assert (
        "beta-in-zone-1: reference_steps[0][0]: has no 'args.query' to compute the reference output from"
    ) in result.stdout.str()


def test_an_update_in_the_corpus_is_that_questions_error(project: pytest.Pytester) -> None:
    corpus = small_corpus(OLD)
    corpus[0]["questions"][0]["reference_steps"][0][0]["args"]["query"] = "DELETE WHERE { ?s ?p ?o }"
    write_project(project, corpus, small_responses(OLD), {})
    result = run(project, "--graphrag-sparql-endpoint", "release1.ttl", "--graphrag-check-references")
    result.assert_outcomes(passed=2, failed=1)
    assert "in-zone-1: reference_steps[0][0]: the reference query failed: not a valid read-only" in (
        result.stdout.str()
    )


def test_a_dead_endpoint_fails_every_question_with_one_message(project: pytest.Pytester) -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    result = run(project, "--graphrag-sparql-endpoint", url, "--graphrag-check-references")
    result.assert_outcomes(failed=1)  # the run stops at the first question: one error, not one per question
    output = result.stdout.str()
    assert f"Interrupted: graphrag-eval: the SPARQL endpoint {url} is unavailable" in output
    assert (
        f"graphrag-eval: the SPARQL endpoint {url} is unavailable (cannot reach {url}: connection refused"
        in (output)
    )


def test_credentials_never_reach_the_output_of_a_run(
    project: pytest.Pytester, server: OxigraphServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "tok-SECRET-run-4f1e"
    monkeypatch.setenv("GRAPHRAG_SPARQL_TOKEN", secret)

    def echo_headers_for_gamma(request):  # a server whose error page quotes the request's headers
        if b"s3" in request.body:
            return 502, {"Content-Type": "text/html"}, f"<pre>{request.headers}</pre>".encode()
        return None

    with RecordingProxy(server.url, behaviour=echo_headers_for_gamma) as proxy:
        url_with_query = proxy.url + "?api_key=not-shown"
        result = run(
            project, "--graphrag-sparql-endpoint", url_with_query, "--graphrag-check-references",
            "--graphrag-report", "report.json", "--graphrag-html", "report.html",
            "--graphrag-markdown", "r.md", "--junitxml", "junit.xml",
        )  # fmt: skip
        assert all(r.headers["Authorization"] == f"Bearer {secret}" for r in proxy.requests)
    result.assert_outcomes(passed=2, failed=1)
    assert "HTTP 502" in result.stdout.str() and "***" in result.stdout.str()
    outputs = [result.stdout.str(), result.stderr.str()]
    outputs += [
        project.path.joinpath(name).read_text(encoding="utf-8")
        for name in ("report.json", "report.html", "r.md", "junit.xml")
    ]
    for text in outputs:
        assert secret not in text
        assert "not-shown" not in text


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "must not carry credentials"),
        ({"GRAPHRAG_SPARQL_USER": "reader"}, "set both GRAPHRAG_SPARQL_USER and GRAPHRAG_SPARQL_PASSWORD"),
    ],
)
def test_credentials_set_wrong_are_a_usage_error(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], expected: str
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    url = "http://reader:pw-SECRET-x@127.0.0.1:9/query" if not environ else "http://127.0.0.1:9/query"
    result = run(project, "--graphrag-sparql-endpoint", url, "--graphrag-check-references")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert expected in result.stderr.str()
    assert "pw-SECRET-x" not in result.stderr.str() + result.stdout.str()
