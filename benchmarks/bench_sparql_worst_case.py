"""Benchmark: graphrag-eval 6.6.1's worst case for SPARQL comparison, theirs against ours.

The case: 200 rows x 10 columns, 5 required columns, and the last actual row
differs, so graphrag-eval tries every column mapping (combinations times
permutations of joined row strings) before it answers "no match". Timed per
comparison, both sides parsing the two JSON outputs as the step scorers do:

- graphrag-eval's `compare_steps`, in its own interpreter (it needs Python 3.12):
  pass `--graphrag-eval-python PATH` or set GRAPHRAG_EVAL_PYTHON; skipped without;
- ours, `sparql_output_score` (no memoized parse);
- the floor: parsing the two outputs with the JSON library we use (orjson when installed).

Budgets (issue 8), checked only in full mode: graphrag-eval at least 1,000x slower
than ours, and ours within 3x of the floor.

    python benchmarks/bench_sparql_worst_case.py --graphrag-eval-python PATH
    python benchmarks/bench_sparql_worst_case.py --quick     # only checks that it runs
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from timing import announce_quick, median_seconds

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.steps.match import sparql_output_score

SPARQL_JSON = "application/sparql-results+json"
THEIR_SPEEDUP_BUDGET = 1_000
FLOOR_RATIO_BUDGET = 3.0

# Run by graphrag-eval's interpreter: reads {"reference": step, "actual": step, "runs": n} on stdin,
# prints the median seconds of `compare_steps` and its score.
THEIR_TIMER = """
import json, statistics, sys, time
from graphrag_eval.steps.evaluation import compare_steps
case = json.load(sys.stdin)
timings, score = [], None
for _ in range(case["runs"]):
    start = time.perf_counter()
    score = compare_steps(case["reference"], case["actual"])
    timings.append(time.perf_counter() - start)
print(json.dumps({"seconds": statistics.median(timings), "score": float(score)}))
"""


def sparql_select(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def worst_case() -> tuple[dict[str, Any], dict[str, Any]]:
    """The reference step and the actual step (the same table, last row changed)."""
    rng = random.Random(7)
    variables = [f"c{index}" for index in range(10)]
    rows = [
        [{"type": "literal", "value": f"r{row}-{rng.randrange(3)}"} for _ in variables] for row in range(200)
    ]
    actual_rows = [list(row) for row in rows]
    actual_rows[-1] = [{"type": "literal", "value": "changed"} for _ in variables]
    reference = {
        "name": "sparql_query",
        "output": sparql_select(variables, rows),
        "output_media_type": SPARQL_JSON,
        "required_columns": variables[:5],
    }
    actual = {"name": "sparql_query", "status": "success", "output": sparql_select(variables, actual_rows)}
    return reference, actual


def raw_parser() -> Callable[[str], Any]:
    """The JSON library's own parse, without our fallback checks."""
    if json_text.JSON_LIBRARY == "orjson":
        import orjson

        return orjson.loads
    return json.loads


def their_seconds(python: str, reference: dict[str, Any], actual: dict[str, Any], runs: int) -> float:
    case = json.dumps({"reference": reference, "actual": actual, "runs": runs})
    completed = subprocess.run(
        [python, "-c", THEIR_TIMER], input=case, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise SystemExit(f"graphrag-eval's interpreter failed:\n{completed.stderr[-2000:]}")
    measured = json.loads(completed.stdout.strip().splitlines()[-1])
    if measured["score"] != 0.0:
        raise SystemExit(f"graphrag-eval matched the worst case (score {measured['score']}); expected 0")
    return float(measured["seconds"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer runs, no budgets (for CI)")
    parser.add_argument(
        "--graphrag-eval-python",
        default=os.environ.get("GRAPHRAG_EVAL_PYTHON"),
        help="a Python with graphrag-eval 6.6.1 installed (default: $GRAPHRAG_EVAL_PYTHON)",
    )
    args = parser.parse_args(argv)
    announce_quick(args.quick)
    runs = 20 if args.quick else 200
    reference, actual = worst_case()
    if sparql_output_score(reference, actual["output"]) != 0.0:
        raise SystemExit("our comparison matched the worst case; expected no match")
    ours = median_seconds(lambda: sparql_output_score(reference, actual["output"]), runs)
    loads = raw_parser()
    floor = median_seconds(lambda: (loads(reference["output"]), loads(actual["output"])), runs)
    print("SPARQL worst case of graphrag-eval: 200 rows x 10 columns, 5 required, no match")
    print(f"{'ours (parse both + compare)':>34} {ours * 1e3:>9.3f} ms")
    print(f"{'floor (' + json_text.JSON_LIBRARY + ' parse of both)':>34} {floor * 1e3:>9.3f} ms")
    print(f"ours / floor: {ours / floor:.2f}")
    if not args.graphrag_eval_python:
        print("graphrag-eval: skipped (no --graphrag-eval-python / GRAPHRAG_EVAL_PYTHON)")
        return 0
    theirs = their_seconds(args.graphrag_eval_python, reference, actual, 1 if args.quick else 3)
    print(f"{'graphrag-eval 6.6.1 compare_steps':>34} {theirs * 1e3:>9.1f} ms")
    print(f"graphrag-eval / ours: {theirs / ours:,.0f}x")
    if args.quick:
        return 0
    fast_enough = theirs / ours >= THEIR_SPEEDUP_BUDGET
    near_floor = ours / floor <= FLOOR_RATIO_BUDGET
    print(f"budget graphrag-eval >= {THEIR_SPEEDUP_BUDGET:,}x ours: {'OK' if fast_enough else 'EXCEEDED'}")
    print(f"budget ours <= {FLOOR_RATIO_BUDGET:.0f}x the JSON floor: {'OK' if near_floor else 'EXCEEDED'}")
    return 0 if fast_enough and near_floor else 1


if __name__ == "__main__":
    sys.exit(main())
