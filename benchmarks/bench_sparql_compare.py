"""Benchmark: SPARQL result comparison, 20 actual columns with 8 required, growing rows.

Budget (issue 2): 10,000 rows x 20 actual columns with 8 required columns in
under 1 second, growing about linearly with rows. The data is built so column
signatures do not separate everything: several columns share one value domain
(two category columns over the same 20 labels, two count columns over 0..99,
copies of those domains among the extra columns), so the search must confirm
candidate mappings on whole rows.

Timed: parsing both JSON texts and comparing, as the steps scorer does, and the
comparison alone on pre-parsed tables. Prints medians of several runs.

    python benchmarks/bench_sparql_compare.py           # full run, checks the budget
    python benchmarks/bench_sparql_compare.py --quick   # small CI-sized run
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from timing import announce_quick, median_seconds

from pytest_graphrag_eval.formats.sparql_results import parse_sparql_results
from pytest_graphrag_eval.steps.match import sparql_output_score
from pytest_graphrag_eval.steps.sparql_compare import results_match

XSD = "http://www.w3.org/2001/XMLSchema#"
REQUIRED = 8
ACTUAL_COLUMNS = 20
BUDGET_ROWS = 10_000
BUDGET_SECONDS = 1.0
CATEGORIES = [f"category-{index}" for index in range(20)]


def literal(value: str, datatype: str | None = None) -> dict[str, str]:
    cell = {"type": "literal", "value": value}
    if datatype:
        cell["datatype"] = XSD + datatype
    return cell


def make_rows(rows: int, rng: random.Random) -> list[list[dict[str, str]]]:
    """Rows of 20 cells: 8 meaningful columns, then 12 extra ones sharing their value domains."""
    table = []
    for index in range(rows):
        table.append(
            [
                {"type": "uri", "value": f"urn:uuid:entity-{index}"},
                literal(f"Entity {index % (rows // 2 or 1)}"),
                literal(rng.choice(CATEGORIES)),
                literal(rng.choice(CATEGORIES)),
                literal(str(rng.randrange(100)), "integer"),
                literal(str(rng.randrange(100)), "int"),
                literal(f"{rng.random() * 1000:.7f}", "double"),
                literal(rng.choice(["true", "false"]), "boolean"),
                literal(rng.choice(CATEGORIES)),
                literal(rng.choice(CATEGORIES)),
                literal(str(rng.randrange(100)), "integer"),
                literal(str(rng.randrange(100)), "long"),
                literal(rng.choice(["true", "false"]), "boolean"),
                {"type": "uri", "value": f"urn:uuid:entity-{rng.randrange(rows)}"},
                literal(f"Entity {rng.randrange(rows // 2 or 1)}"),
                literal(f"{rng.random() * 1000:.7f}", "double"),
                literal(str(rng.randrange(10)), "integer"),
                literal(rng.choice(CATEGORIES[:5])),
                literal(f"note {rng.randrange(50)}"),
                {"type": "uri", "value": f"urn:uuid:type-{rng.randrange(8)}"},
            ]
        )
    return table


def results_json(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def make_case(rows: int, seed: int) -> tuple[dict[str, Any], str]:
    """A reference step (8 columns) and an actual output (20 renamed, permuted columns, shuffled rows)."""
    rng = random.Random(seed)
    table = make_rows(rows, rng)
    reference_vars = [f"ref{index}" for index in range(REQUIRED)]
    reference_output = results_json(reference_vars, [row[:REQUIRED] for row in table])
    order = list(range(ACTUAL_COLUMNS))
    rng.shuffle(order)
    actual_vars = [f"col_{index}" for index in range(ACTUAL_COLUMNS)]
    actual_rows = [[row[column] for column in order] for row in table]
    rng.shuffle(actual_rows)
    step = {
        "name": "sparql_query",
        "output": reference_output,
        "output_media_type": "application/sparql-results+json",
        "required_columns": reference_vars,
    }
    return step, results_json(actual_vars, actual_rows)


def measure(rows: int, runs: int) -> tuple[float, float]:
    step, actual_output = make_case(rows, seed=rows)

    def full() -> None:
        if sparql_output_score(step, actual_output) != 1.0:
            raise SystemExit(f"benchmark data did not match at {rows} rows")

    reference_table = parse_sparql_results(step["output"])
    actual_table = parse_sparql_results(actual_output)

    def compare_only() -> None:
        if not results_match(reference_table, actual_table, step["required_columns"]):
            raise SystemExit(f"benchmark data did not match at {rows} rows")

    return median_seconds(full, runs), median_seconds(compare_only, runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes and fewer runs (for CI)")
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    sizes = [250, 500, 1_000] if args.quick else [2_500, 5_000, BUDGET_ROWS, 20_000]
    runs = 3 if args.quick else 5
    print(f"SPARQL comparison, {ACTUAL_COLUMNS} actual columns, {REQUIRED} required, median of {runs} runs")
    print(f"{'rows':>8} {'parse+compare s':>16} {'compare only s':>15} {'us/row':>8}")
    figures = {}
    for rows in sizes:
        full, compare = measure(rows, runs)
        figures[rows] = full
        print(f"{rows:>8} {full:>16.3f} {compare:>15.3f} {full / rows * 1e6:>8.1f}")
    smallest, largest = sizes[0], sizes[-1]
    growth = (figures[largest] / figures[smallest]) / (largest / smallest)
    print(
        f"growth {smallest}->{largest} rows: time x{figures[largest] / figures[smallest]:.2f} "
        f"for rows x{largest / smallest:.0f} (1.00 = linear: {growth:.2f})"
    )
    if BUDGET_ROWS in figures:
        within = figures[BUDGET_ROWS] < BUDGET_SECONDS
        print(f"budget {BUDGET_ROWS} rows < {BUDGET_SECONDS:.1f} s: {'OK' if within else 'EXCEEDED'}")
        return 0 if within else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
