"""Benchmark: what the read-only and SERVICE check costs per query, by which parser decides it.

Every query is checked before it runs (graph/readonly.py). Text that can hold a SERVICE clause is parsed
by rdflib into its algebra (its SERVICE endpoints are found without running anything); other text by
pyoxigraph's parser on an empty store. Timed per distinct query, cache bypassed, on the example
project's reference queries: each as written (pyoxigraph decides), and each wrapped in a SERVICE clause
(rdflib decides). Medians of the per-query times.

Budget: the check of text without SERVICE stays under BUDGET_MS per query (median): most corpora
never pay rdflib's cost.

    python benchmarks/bench_service_check.py           # full run, checks the budget
    python benchmarks/bench_service_check.py --quick   # a few queries, only checks that it works
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from timing import announce_quick

from pytest_graphrag_eval.graph import readonly
from pytest_graphrag_eval.graph.service import parsed_services

CORPUS = Path(__file__).resolve().parents[1] / "example_project" / "corpus.yaml"
BUDGET_MS = 1.0


def reference_queries() -> list[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            args = node.get("args")
            if isinstance(args, dict) and isinstance(args.get("query"), str):
                found.add(args["query"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load(CORPUS.read_text(encoding="utf-8")))
    # SPARQL queries only (an autocomplete_search step's query is a search text)
    return sorted(query for query in found if not isinstance(readonly._parsed_form(query), str))


def with_service(query: str) -> str:
    """The query's WHERE pattern sent to a remote endpoint (never run here: only parsed)."""
    start, end = query.index("{"), query.rindex("}")
    pattern = query[start + 1 : end]
    return f"{query[:start]}{{ SERVICE <http://127.0.0.1:9/sparql> {{{pattern}}} }}{query[end + 1 :]}"


def per_query_ms(check: Any, queries: list[str]) -> float:
    timings = []
    for query in queries:
        started = time.perf_counter()
        check(query)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few queries, no budget check")
    args = parser.parse_args()
    announce_quick(args.quick)
    queries = reference_queries()[: 3 if args.quick else None]
    parsed_services.__wrapped__("SELECT * WHERE { ?s ?p ?o }")  # rdflib's grammar is built on first use
    plain = per_query_ms(readonly._parsed_form.__wrapped__, queries)
    federated = [with_service(query) for query in queries]
    refused = [parsed_services.__wrapped__(query) for query in federated]
    if any(isinstance(outcome, str) or not outcome[1] for outcome in refused):
        print("FAILED: a SERVICE clause was not found in the parsed algebra")
        return 1
    service = per_query_ms(parsed_services.__wrapped__, federated)
    print(f"{len(queries)} distinct reference queries of the example project")
    print(f"  without SERVICE (pyoxigraph's parser): {plain:8.3f} ms per query (median)")
    print(f"  with SERVICE (rdflib's algebra):       {service:8.3f} ms per query (median)")
    if not args.quick and plain > BUDGET_MS:
        print(f"OVER BUDGET: {plain:.3f} ms per query without SERVICE (budget {BUDGET_MS:g} ms)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
