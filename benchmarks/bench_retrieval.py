"""evaluate_run against pytrec_eval on the same run: time of each and their ratio.

    python benchmarks/bench_retrieval.py            # 10,000 queries x 100 documents
    python benchmarks/bench_retrieval.py --quick    # a small run for CI

Prints the median of several runs per side and checks that both give the same values.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from timing import announce_quick

from pytest_graphrag_eval.retrieval import evaluate_run

METRICS = {"P_10", "recall_100", "map", "recip_rank", "ndcg", "ndcg_cut_10", "success_1"}


def make_inputs(
    queries: int, documents: int, seed: int = 1
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded judgements for 20 documents per query; a run of `documents` scored documents (with ties)."""
    rng = random.Random(seed)
    pool = range(documents * 2)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 2) for j in rng.sample(pool, 20)} for i in range(queries)}
    run = {
        f"q{i}": {f"d{j}": round(rng.random(), 2) for j in rng.sample(pool, documents)}
        for i in range(queries)
    }
    return qrels, run


def median_seconds(function: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 queries, 3 runs (for CI)")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    announce_quick(args.quick)
    queries, repeats = (500, 3) if args.quick else (args.queries, args.repeats)
    qrels, run = make_inputs(queries, args.documents)
    print(
        f"{queries} queries x {args.documents} documents, metrics {sorted(METRICS)}, median of {repeats} runs"
    )
    ours, our_result = median_seconds(lambda: evaluate_run(qrels, run, METRICS), repeats)
    print(f"evaluate_run   {ours:8.3f} s")
    try:
        import pytrec_eval
    except ImportError:
        print("pytrec_eval    not installed (pip install pytrec-eval-terrier); no comparison")
        return
    theirs, their_result = median_seconds(
        lambda: pytrec_eval.RelevanceEvaluator(qrels, METRICS).evaluate(run), repeats
    )
    print(f"pytrec_eval    {theirs:8.3f} s (evaluator built and run)")
    print(f"ratio          {ours / theirs:8.2f} x pytrec_eval's time")
    if our_result != their_result:
        raise SystemExit("MISMATCH: evaluate_run and pytrec_eval disagree")
    print("values         identical")


if __name__ == "__main__":
    main()
