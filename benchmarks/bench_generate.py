"""Benchmark: a corpus of 10,000 questions generated from a graph of a million triples (embedded
store), side by side with the same instantiated queries run directly on a pyoxigraph store.

The graph: 10,000 groups of 25 items, each item with a type, a name, a size and its group (about
1,020,000 triples), written as N-Triples and loaded once. One template asks for the items of a group
(10,000 candidates, all sampled in a shuffled order): its reference query lists a group's 25 items
with their names and sizes. Timed, as this process's processor time (the machine may be shared: time
spent waiting for a core counts on neither side; wall times are printed too):

- generator: `generate` (candidates query, every binding instantiated and executed through the
  embedded endpoint, answers read, keep-rules and duplicates checked) + the corpus YAML written;
- store floor, the floor the issue sets the budget against: the candidates query and the 10,000
  instantiated reference queries (taken from the generated corpus) run with `Store.query` on a
  second store of the same file, each result drawn out as pyoxigraph's SPARQL results JSON (a SELECT
  result is lazy: a query whose result is never read is not run) and nothing else;
- endpoint: the same queries through the plugin's embedded endpoint, which gives each result as the
  text a corpus stores (`graph/rdf_text.py`: Python's separators, the bytes corpora hold). Not a
  floor (that text is the plugin's own work), it shows how much of the distance is that text.

Each is run in turns, and the fastest run of each is compared. The budget: the generator within 1.5x
of the store floor (the run fails over it); the ratio to the endpoint is printed too. Peak memory is
the process's peak resident size after the generator's first run (graph loaded once), and before.

    python benchmarks/bench_generate.py            # 10,000 questions, ~1M triples
    python benchmarks/bench_generate.py --quick    # 200 questions: only checks that it works
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyoxigraph  # noqa: E402
from timing import announce_quick  # noqa: E402

from pytest_graphrag_eval.generate.generator import Generation, generate  # noqa: E402
from pytest_graphrag_eval.generate.templates import load_templates  # noqa: E402
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint  # noqa: E402

EX = "http://example.org/bench#"
ITEMS_PER_GROUP = 25
BUDGET = 1.5
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
TEMPLATES = """\
prefixes:
  ex: http://example.org/bench#
templates:
  - template_id: items_of_group
    parameters: [group]
    candidates: |
      select ?group ?groupIri where { ?groupIri a ex:Group ; ex:name ?group }
    phrasings:
      - Which items belong to {{group}}?
      - List the items of {{group}} with their sizes
    question_id: items-{{group}}
    reference_steps:
      - - name: iri_discovery
          args: {entity: "{{group}}"}
          output: "{{groupIri}}"
      - - name: sparql_query
          args:
            query: |
              select ?item ?name ?size where {
                ?item ex:member {{groupIri}} ;
                      ex:name ?name ;
                      ex:size ?size .
              }
              order by ?name
          required_columns: [item, name]
    answer: {labels: name}
    sample: {count: COUNT, seed: 7}
"""


def write_graph(path: Path, groups: int) -> int:
    """The N-Triples file of `groups` groups; its number of triples."""
    lines = []
    for group in range(groups):
        iri = f"<{EX}group{group}>"
        lines.append(f"{iri} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}Group> .")
        lines.append(f'{iri} <{EX}name> "group {group}" .')
        for item in range(ITEMS_PER_GROUP):
            node = f"<{EX}item{group}-{item}>"
            lines.append(f"{node} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}Item> .")
            lines.append(f'{node} <{EX}name> "item {group}-{item:02d}" .')
            size = (group * 31 + item * 17) % 997
            lines.append(f'{node} <{EX}size> "{size}"^^<{XSD_INTEGER}> .')
            lines.append(f"{node} <{EX}member> {iri} .")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """(processor seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    action()
    return time.process_time() - cpu, time.perf_counter() - wall


def write_corpus(templates: Path, endpoint: EmbeddedEndpoint, out: Path) -> Generation:
    generation = generate(load_templates(templates), endpoint)
    generation.write(out, templates.name)
    return generation


def run_endpoint(endpoint: EmbeddedEndpoint, queries: list[str]) -> None:
    for query in queries:
        endpoint.execute(query)


def run_floor(store: pyoxigraph.Store, queries: list[str]) -> None:
    for query in queries:
        solutions = store.query(query)
        assert isinstance(solutions, pyoxigraph.QuerySolutions)  # every reference query is a SELECT
        solutions.serialize(format=pyoxigraph.QueryResultsFormat.JSON)


def shown(runs: list[tuple[float, float]]) -> str:
    """The best run's processor and wall seconds, then every run's processor seconds."""
    cpu, wall = min(runs)
    return f"{cpu:.2f} s, wall {wall:.2f} s (runs: {', '.join(f'{run[0]:.2f}' for run in runs)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 questions: only check that it works")
    args = parser.parse_args()
    announce_quick(args.quick)
    groups = 200 if args.quick else 10_000
    with tempfile.TemporaryDirectory() as folder:
        graph, templates, out = (
            Path(folder) / "graph.nt",
            Path(folder) / "templates.yaml",
            Path(folder) / "corpus.yaml",
        )
        triples = write_graph(graph, groups)
        templates.write_text(TEMPLATES.replace("COUNT", str(groups)), encoding="utf-8")
        started = time.perf_counter()
        endpoint = EmbeddedEndpoint.load(graph)
        loading = time.perf_counter() - started
        print(f"graph: {triples:,} triples loaded in {loading:.1f} s; peak {peak_mib():.0f} MiB")
        generation = write_corpus(templates, endpoint, out)
        print(f"peak resident memory after the generator's first run: {peak_mib():.0f} MiB")
        questions = generation.questions()
        assert len(questions) == groups, f"{len(questions)} questions, expected {groups}"
        assert all(len(question.reference_answer.split(", ")) == ITEMS_PER_GROUP for question in questions)
        loaded = load_templates(templates)
        queries = [loaded.prefix_header + (loaded.templates[0].candidates or "")] + [
            question.reference_steps[1][0]["args"]["query"] for question in questions
        ]
        store = pyoxigraph.Store()
        store.bulk_load(path=str(graph), format=pyoxigraph.RdfFormat.N_TRIPLES)
        floor: list[tuple[float, float]] = []
        through_endpoint: list[tuple[float, float]] = []
        generator: list[tuple[float, float]] = []
        for _ in range(2 if args.quick else 3):
            floor.append(timed(lambda: run_floor(store, queries)))
            through_endpoint.append(timed(lambda: run_endpoint(endpoint, queries)))
            generator.append(timed(lambda: write_corpus(templates, endpoint, out)))
        endpoint.close()
        size = out.stat().st_size
    best_generator, best_floor, best_endpoint = (
        min(runs)[0] for runs in (generator, floor, through_endpoint)
    )
    ratio = best_generator / best_floor
    print(
        f"{len(questions):,} questions, corpus {size / 2**20:.1f} MiB; processor time, best of {len(floor)}:"
    )
    print(f"generator: {shown(generator)}")
    print(f"store floor (Store.query, results drawn out as JSON): {shown(floor)}")
    print(f"endpoint (the stored result texts): {shown(through_endpoint)}")
    print(f"ratio generator / endpoint: {best_generator / best_endpoint:.2f}")
    print(f"ratio generator / store floor: {ratio:.2f} (budget {BUDGET})")
    if not args.quick and ratio > BUDGET:
        raise SystemExit(f"the generator took {ratio:.2f}x the store floor, over the budget of {BUDGET}x")


if __name__ == "__main__":
    main()
