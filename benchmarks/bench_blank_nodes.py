"""Benchmark: SELECT results compared with and without blank nodes, 1,000 to 10,000 rows.

Blank-node labels are local to one result document, so two results that differ only in how they
name their blank nodes are the same answer (steps/blank_nodes.py). Deciding that takes a search
for one renaming; results without blank nodes (ground results, nearly all of them) must not pay
for it. Timed, as the steps scorer does it (parse both texts and compare), three results of the
same shape (an entity, a label, a count; actual rows shuffled, variables renamed):

- ground: entities are IRIs;
- blank: entities are blank nodes, relabelled on the actual side;
- linked: as blank, plus a column naming another row's blank node (blank nodes shared across rows).

Budget: a blank-node result compares within BUDGETS[kind] times its ground twin's time, measured
side by side in this run, and every comparison scores 1 (blank nodes linked across rows take more
rounds of colour refinement). Ground results were timed against the
code before blank-node equivalence (same script, same machine, one session): see docs/steps.md.

    python benchmarks/bench_blank_nodes.py           # full run, checks the budget
    python benchmarks/bench_blank_nodes.py --quick   # small CI-sized run
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from timing import announce_quick, median_seconds

from pytest_graphrag_eval.steps.match import sparql_output_score

BUDGETS = {"blank": 10.0, "linked": 40.0}
SIZES = (1_000, 10_000)
QUICK_SIZES = (300,)


def _results(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def _rows(count: int, kind: str, side: str, rng: random.Random) -> list[list[dict[str, str]]]:
    def entity(index: int) -> dict[str, str]:
        if kind == "ground":
            return {"type": "uri", "value": f"http://example.org/entity/{index}"}
        return {"type": "bnode", "value": f"{side}{index * 7919 % 100_003}"}

    rows = []
    for index in range(count):
        row = [
            entity(index),
            {"type": "literal", "value": f"Entity {index % 97}", "xml:lang": "en"},
            {
                "type": "literal",
                "value": str(index % 13),
                "datatype": "http://www.w3.org/2001/XMLSchema#integer",
            },
        ]
        if kind == "linked":
            row.append(entity((index * 31 + 1) % count))
        rows.append(row)
    rng.shuffle(rows)
    return rows


def pair(count: int, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(reference step, actual step) of `count` rows of this kind."""
    rng = random.Random(count)
    names = ["entity", "label", "count"] + (["next"] if kind == "linked" else [])
    reference = {
        "name": "sparql_query",
        "output_media_type": "application/sparql-results+json",
        "output": _results(names, _rows(count, kind, "r", rng)),
    }
    actual = {"name": "sparql_query", "status": "success"}
    actual["output"] = _results([f"v{index}" for index in range(len(names))], _rows(count, kind, "a", rng))
    return reference, actual


def measure(count: int, kind: str, runs: int) -> tuple[float, float]:
    reference, actual = pair(count, kind)
    score = sparql_output_score(reference, actual["output"])
    seconds = median_seconds(lambda: sparql_output_score(reference, actual["output"]), runs)
    return seconds, score


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, no budget check")
    args = parser.parse_args()
    announce_quick(args.quick)
    sizes, runs = (QUICK_SIZES, 3) if args.quick else (SIZES, 7)
    ok = True
    for count in sizes:
        ground, ground_score = measure(count, "ground", runs)
        print(f"{count:>6} rows  ground {ground * 1000:8.1f} ms  score {ground_score:g}")
        for kind in ("blank", "linked"):
            seconds, score = measure(count, kind, runs)
            ratio = seconds / ground
            print(
                f"{count:>6} rows  {kind:<6} {seconds * 1000:8.1f} ms  score {score:g}  {ratio:4.1f}x ground"
            )
            if score != 1.0 or ground_score != 1.0:
                print(f"  FAILED: {kind} results equal up to blank-node renaming scored {score:g}")
                ok = False
            if not args.quick and ratio > BUDGETS[kind]:
                print(f"  OVER BUDGET: {ratio:.1f}x ground (budget {BUDGETS[kind]:g}x)")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
