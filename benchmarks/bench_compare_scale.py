"""Speed of the baseline comparison: two reports of 10,000 questions with 20 metrics each.

    python benchmarks/bench_compare_scale.py           # 10,000 questions, median of 3, budget 0.5x the floor
    python benchmarks/bench_compare_scale.py --quick   # 500 questions, one run, prints only (CI)

The reports are built in memory as the plugin would write them (format_version 2,
with outcomes and content hashes), in 50 templates: 5 metrics are 0/1 (McNemar),
15 continuous (bootstrap, default resamples), so both paths and the per-template
scopes are timed, and so is building the report section (to_json).

The floor, measured side by side: scipy.stats.bootstrap's percentile interval of the mean
paired difference of each continuous metric over the whole run, the same resamples, nothing
else (no templates, no 0/1 metrics, no studentizing). The budget: the whole comparison in at
most half the floor's time.

Times are the process's CPU time: on a shared machine wall time mostly measures the other
processes (both are printed, with the load average). On an idle machine the two agree; BLAS
runs single-threaded here, since its spinning threads would count as CPU time.
Exits 1 when the full run misses the budget.
"""

from __future__ import annotations

import argparse
import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # spinning BLAS threads would be counted as CPU time

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from timing import announce_quick  # noqa: E402

from pytest_graphrag_eval.compare import DEFAULT_RESAMPLES  # noqa: E402
from pytest_graphrag_eval.compare.comparison import Comparison, compare_documents  # noqa: E402
from pytest_graphrag_eval.compare.hashing import content_hash  # noqa: E402
from pytest_graphrag_eval.report_model import ReportDocument, parse_results  # noqa: E402

RATIO_BUDGET = 0.5  # the comparison's CPU time over the floor's
TEMPLATES = 50
BINARY_METRICS = 5
CONTINUOUS_METRICS = 15


def make_results(questions: int, seed: int, quality: np.ndarray) -> list[dict[str, Any]]:
    """One run's results: every question with 20 metric values drawn around its quality."""
    rng = np.random.default_rng(seed)
    binary = rng.random((questions, BINARY_METRICS)) < quality[:, None]
    continuous = np.clip(quality[:, None] + rng.normal(0.0, 0.15, (questions, CONTINUOUS_METRICS)), 0.0, 1.0)
    results = []
    for index in range(questions):
        result: dict[str, Any] = {
            "template_id": f"template_{index % TEMPLATES}",
            "question_id": f"q{index}",
            "question_text": f"Question number {index}?",
            "reference_answer": f"answer {index}",
            "status": "success",
            "outcome": "passed" if binary[index, 0] else "failed",
        }
        result["content_hash"] = content_hash(result)
        result.update({f"binary_{m}": float(binary[index, m]) for m in range(BINARY_METRICS)})
        result.update({f"score_{m}": float(continuous[index, m]) for m in range(CONTINUOUS_METRICS)})
        results.append(result)
    return results


def compare(baseline: dict[str, Any], current: list[dict[str, Any]], resamples: int) -> Comparison:
    """The comparison as the plugin runs it, from the JSON mappings: reading both sides is timed too."""
    document = ReportDocument.from_json(baseline, "baseline report")
    results = parse_results(current, "current run", require_outcome=True)
    return compare_documents(document, results, resamples=resamples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 questions, one run, no budget check")
    args = parser.parse_args()
    announce_quick(args.quick)
    questions = 500 if args.quick else 10_000
    quality = np.random.default_rng(1).beta(2.0, 0.7, size=questions)
    baseline: dict[str, Any] = {
        "format_version": 2,
        "results": make_results(questions, 2, quality),
        "metadata": {},
    }
    current = make_results(questions, 3, quality)
    compare(baseline, current[:50], DEFAULT_RESAMPLES)  # warm-up: lazy imports of numpy/scipy are not timed
    differences = [
        [after[key] - before[key] for before, after in zip(baseline["results"], current, strict=True)]
        for key in (f"score_{m}" for m in range(CONTINUOUS_METRICS))
    ]
    walls, cpus, floors = [], [], []
    for _ in range(1 if args.quick else 3):
        wall, cpu = time.perf_counter(), time.process_time()
        comparison = compare(baseline, current, DEFAULT_RESAMPLES)
        comparison.to_json()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        floors.append(floor_seconds(differences))
    wall_sec, cpu_sec, floor_sec = (
        statistics.median(walls),
        statistics.median(cpus),
        statistics.median(floors),
    )
    print(
        f"read + compare_documents + to_json: {questions} questions, {len(comparison.metrics)} metrics, "
        f"{TEMPLATES} templates, {DEFAULT_RESAMPLES} resamples: {cpu_sec:.3f} s CPU, {wall_sec:.3f} s wall "
        f"(median of {len(walls)}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    ratio = cpu_sec / floor_sec
    print(
        f"floor (scipy.stats.bootstrap, percentile, {CONTINUOUS_METRICS} whole-run intervals): "
        f"{floor_sec:.3f} s CPU; the comparison takes {ratio:.2f}x the floor"
    )
    if args.quick:
        return 0
    if ratio > RATIO_BUDGET:
        print(f"BUDGET MISSED: {ratio:.2f}x the floor > {RATIO_BUDGET}x", file=sys.stderr)
        return 1
    return 0


def floor_seconds(differences: list[list[float]]) -> float:
    """CPU seconds of scipy's percentile bootstrap interval of each column's mean."""
    started = time.process_time()
    for column in differences:
        stats.bootstrap(
            (np.asarray(column),),
            np.mean,
            n_resamples=DEFAULT_RESAMPLES,
            method="percentile",
            vectorized=True,
            random_state=np.random.default_rng(0),
        )
    return time.process_time() - started


if __name__ == "__main__":
    sys.exit(main())
