"""Benchmark: reference queries checked against the embedded store and a real Oxigraph server.

N reference questions (default 10,000) over the example project's grid: each one SELECT query of one
of six templates (transformers, lines and neighbours of a substation; an ASK; a CONSTRUCT), with its
output stored from the same graph. Checked with 32 queries in flight:

- embedded, engine alone: pyoxigraph's `Store.query` and its result serializer, nothing else;
- embedded, plugin: `check_questions` (read-only parse, run, normalised result text, comparison by
  the step's rule);
- server, engine alone: a bare HTTP POST per query on kept-alive connections, body read, nothing else;
- server, plugin: `check_questions` through `HttpEndpoint` (its retries, breaker, parsing of results).

The plugin's own cost per query is (plugin wall - engine wall) x in-flight / N: what the plugin adds
on top of the engine. Also measured, for how xdist workers share the graph: loading the RDF into an
in-memory store (what each worker does) against opening a store dumped once to disk read-only.

    python benchmarks/bench_reference_check.py            # N = 10,000
    python benchmarks/bench_reference_check.py --quick    # N = 300, only checks that it works
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyoxigraph  # noqa: E402
from timing import announce_quick  # noqa: E402

from pytest_graphrag_eval.corpus.reference_corpus import Question, corpus_from_data  # noqa: E402
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint  # noqa: E402
from pytest_graphrag_eval.graph.endpoint import EndpointUnavailable, SparqlEndpoint  # noqa: E402
from pytest_graphrag_eval.graph.http import HttpEndpoint  # noqa: E402
from pytest_graphrag_eval.graph.references import FRESH, check_questions  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test harnesses
from oxigraph_server import OxigraphServer  # noqa: E402

GRID = ROOT / "example_project" / "grid" / "grid.ttl"
IN_FLIGHT = 32
PREFIX = "PREFIX cim: <https://cim.ucaiug.io/ns#>\n"
TEMPLATES = [
    "SELECT ?t ?name WHERE {{ ?t a cim:PowerTransformer ; cim:Equipment.EquipmentContainer <{s}> ; "
    "cim:IdentifiedObject.name ?name }} ORDER BY ?name",
    "SELECT ?line ?name WHERE {{ ?line cim:IdentifiedObject.name ?name . ?t cim:Terminal.ConductingEquipment "
    "?line ; cim:Terminal.ConnectivityNode/cim:ConnectivityNode.ConnectivityNodeContainer/"
    "cim:VoltageLevel.Substation <{s}> }}",
    "SELECT ?name ?zone WHERE {{ <{s}> cim:IdentifiedObject.name ?name ; cim:Substation.Region ?zone }}",
    'ASK {{ <{s}> cim:IdentifiedObject.name ?n FILTER(STRSTARTS(?n, "A")) }}',
    "CONSTRUCT {{ <{s}> ?p ?o }} WHERE {{ <{s}> ?p ?o }}",
    "SELECT (COUNT(?t) AS ?n) WHERE {{ ?t cim:Equipment.EquipmentContainer <{s}> }}",
]


def substations(store: EmbeddedEndpoint) -> list[str]:
    text = store.execute(PREFIX + "SELECT ?s WHERE { ?s a cim:Substation } ORDER BY ?s").text
    import json

    return [row["s"]["value"] for row in json.loads(text)["results"]["bindings"]]


def make_questions(count: int, store: EmbeddedEndpoint) -> list[Question]:
    """`count` questions cycling over templates and substations, outputs stored from `store`."""
    names = substations(store)
    queries = [PREFIX + TEMPLATES[i % len(TEMPLATES)].format(s=names[i % len(names)]) for i in range(count)]
    outputs = {}
    for query in dict.fromkeys(queries):
        result = store.execute(query)
        outputs[query] = (result.text, result.media_type)
    questions = [
        {
            "id": f"q{i}",
            "question_text": f"Question {i}?",
            "reference_steps": [
                [
                    {
                        "name": "sparql_query",
                        "args": {"query": query},
                        "output": outputs[query][0],
                        "output_media_type": outputs[query][1],
                    }
                ]
            ],
        }
        for i, query in enumerate(queries)
    ]
    return list(corpus_from_data([{"template_id": "bench", "questions": questions}]).questions())


def queries_of(questions: list[Question]) -> list[str]:
    return [
        str(question.reference_steps[0][0]["args"]["query"])
        for question in questions
        if question.reference_steps
    ]


def engine_embedded(store: pyoxigraph.Store, queries: list[str]) -> float:
    """pyoxigraph alone: query and serialize each result, 32 at a time."""

    def run(query: str) -> bytes:
        result = store.query(query)
        if isinstance(result, pyoxigraph.QueryTriples):
            text = result.serialize(format=pyoxigraph.RdfFormat.N_TRIPLES)
        else:
            text = result.serialize(format=pyoxigraph.QueryResultsFormat.JSON)
        assert text is not None  # no output file given: the bytes are returned
        return text

    return _wall(run, queries)


def engine_server(url: str, queries: list[str]) -> float:
    """Bare HTTP: one kept-alive connection per thread, POST, read the body; nothing else."""
    parts = urllib.parse.urlsplit(url)
    import threading

    local = threading.local()

    def run(query: str) -> bytes:
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPConnection(
                str(parts.hostname), parts.port, timeout=60
            )
        accept = "application/n-triples" if "CONSTRUCT" in query else "application/sparql-results+json"
        body = urllib.parse.urlencode({"query": query})
        headers = {"Accept": accept, "Content-Type": "application/x-www-form-urlencoded"}
        connection.request("POST", parts.path, body=body, headers=headers)
        body_read: bytes = connection.getresponse().read()
        return body_read

    return _wall(run, queries)


def _wall(function: Callable[[str], bytes], items: Iterable[str]) -> float:
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(IN_FLIGHT) as pool:
        for _ in pool.map(function, items):
            pass
    return time.perf_counter() - started


def plugin(endpoint: SparqlEndpoint, questions: list[Question]) -> tuple[float, int]:
    started = time.perf_counter()
    checks = check_questions(questions, endpoint, concurrency=IN_FLIGHT)
    wall = time.perf_counter() - started
    fresh = sum(
        1
        for check in checks.values()
        if not isinstance(check, EndpointUnavailable) and all(step.status == FRESH for step in check.steps)
    )
    return wall, fresh


def store_sharing(folder: Path, copies: int) -> tuple[int, float, float]:
    """Triples, seconds to load the grid `copies` times over into memory, and to open a dumped store."""
    big = folder / "big.nt"
    base = pyoxigraph.Store()
    base.bulk_load(path=str(GRID))
    dumped = base.dump(format=pyoxigraph.RdfFormat.N_TRIPLES, from_graph=pyoxigraph.DefaultGraph())
    assert dumped is not None  # no output file given: the bytes are returned
    lines = dumped.decode().splitlines()
    with big.open("w", encoding="utf-8") as out:
        for copy in range(copies):
            for line in lines:
                out.write(line.replace("urn:uuid:", f"urn:copy{copy}:") + "\n")
    started = time.perf_counter()
    loaded = EmbeddedEndpoint.load(big)
    load_seconds = time.perf_counter() - started
    disk = folder / "store"
    pyoxigraph.Store(str(disk)).bulk_load(path=str(big))
    started = time.perf_counter()
    opened = pyoxigraph.Store.read_only(str(disk))
    len(opened)
    open_seconds = time.perf_counter() - started
    return loaded.triples, load_seconds, open_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 queries: only checks that it works")
    parser.add_argument("--queries", type=int, default=10_000)
    args = parser.parse_args()
    announce_quick(args.quick)
    count = 300 if args.quick else args.queries
    embedded = EmbeddedEndpoint.load(GRID)
    questions = make_questions(count, embedded)
    queries = queries_of(questions)
    store = embedded._store  # the engine alone, without the plugin around it
    engine_embedded(store, queries[:500])  # warm-up: caches, thread pool, lazily built parser tables
    engine_local = engine_embedded(store, queries)
    plugin_local, fresh_local = plugin(embedded, questions)
    with tempfile.TemporaryDirectory() as folder:  # as xdist workers see it: loaded once, opened read-only
        EmbeddedEndpoint.load(GRID, directory=Path(folder) / "store").close()
        shared = EmbeddedEndpoint.open_shared(Path(folder) / "store", GRID)
        plugin_shared, fresh_shared = plugin(shared, questions)
        shared.close()
    with OxigraphServer([GRID]) as server:
        engine_server(server.url, queries[:500])  # warm-up
        engine_remote = engine_server(server.url, queries)
        remote = HttpEndpoint(server.url, environ={}, concurrency=IN_FLIGHT)
        plugin_remote, fresh_remote = plugin(remote, questions)
        remote.close()
    assert fresh_local == fresh_shared == fresh_remote == count, (fresh_local, fresh_shared, fresh_remote)
    print(
        f"{count:,} reference queries, {IN_FLIGHT} in flight, on {GRID.name} ({embedded.triples:,} triples)"
    )
    print(f"{'':28}{'wall s':>9}{'queries/s':>11}{'us/query':>10}{'plugin/engine':>15}")
    for label, wall, engine in (
        ("embedded, engine alone", engine_local, None),
        ("embedded, plugin", plugin_local, engine_local),
        ("embedded read-only, plugin", plugin_shared, engine_local),
        ("server, engine alone", engine_remote, None),
        ("server, plugin", plugin_remote, engine_remote),
    ):
        ratio = f"{wall / engine:.2f}x" if engine else ""
        print(f"{label:28}{wall:9.2f}{count / wall:11.0f}{wall / count * 1e6:10.0f}{ratio:>15}")
    for label, wall, engine in (
        ("embedded", plugin_local, engine_local),
        ("server", plugin_remote, engine_remote),
    ):
        print(f"plugin's own cost per query ({label}): {(wall - engine) / count * 1e6:.0f} us of wall time")
    copies = 2 if args.quick else 100
    with tempfile.TemporaryDirectory() as folder:
        triples, load_seconds, open_seconds = store_sharing(Path(folder), copies)
    print(
        f"graph of {triples:,} triples: loaded in {load_seconds:.2f} s (plain run; xdist controller), "
        f"opened read-only in {open_seconds:.3f} s (each xdist worker)"
    )


if __name__ == "__main__":
    main()
