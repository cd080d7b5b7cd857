"""Calibration of the baseline comparison by simulation: false alarms under noise, power for a real drop.

    python benchmarks/bench_compare_calibration.py           # 1,000 trials per row, checks budgets
    python benchmarks/bench_compare_calibration.py --quick   # 50 trials, prints only (CI)

Each trial draws a corpus: every question has a true quality q ~ Beta(2, 0.7) (most
questions good, a tail of hard ones). A run then draws, per question,
- `passed` and `exact_match`: 0/1, passing with chance q (and q**2);
- `answer_f1`: Beta(10q, 10(1-q)) rounded to twelfths (ties and exact zeros,
  like token F1), run-to-run spread about 0.13;
- `answer_f1_cached`: the same, but 70% of questions repeat the baseline value
  (a cached or deterministic agent), so most paired differences are 0.

Null rows: both runs come from the same qualities, so every alarm is false. The
gate `delta:m.mean>=T@95` fires when the 95% interval of the paired change lies
entirely below T (T = -0.02 and T = 0); it, and the exact McNemar test at 5% for
0/1 metrics, must fire in at most 5% of trials (the two-sided p<0.05 rate of the
bootstrap rows is shown, within Monte Carlo error of 5%). `coverage` is the share of two-sided 95% intervals
that contain the true change 0. For contrast the percentile-bootstrap interval of
answer_f1 is shown too (it under-covers at small n, which is why it is not used).

Power row: the current run's answer_f1 is 0.05 lower on average (q - 0.05) on 200
questions; the interval must lie entirely below 0 in at least 80% of trials.
Exits 1 when a budget is missed (full mode only).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
from timing import announce_quick

from pytest_graphrag_eval.compare.bootstrap import resample_counts
from pytest_graphrag_eval.compare.paired import PairedSample, paired_changes

CONFIDENCE = 0.95
RESAMPLES = 2000
FALSE_ALARM_BUDGET = 0.05
POWER_BUDGET = 0.80
DROP = 0.05
METRICS = ("passed", "exact_match", "answer_f1", "answer_f1_cached")


def draw_run(rng: np.random.Generator, quality: np.ndarray, shift: float = 0.0) -> dict[str, np.ndarray]:
    """One run's metric values for questions of the given true quality (answer_f1 lowered by `shift`)."""
    mean_f1 = np.clip(quality - shift, 0.005, 0.995)
    return {
        "passed": (rng.random(quality.size) < quality).astype(float),
        "exact_match": (rng.random(quality.size) < quality**2).astype(float),
        "answer_f1": np.round(rng.beta(10 * mean_f1, 10 * (1 - mean_f1)) * 12) / 12,
    }


def trial(rng: np.random.Generator, n: int, shift: float) -> tuple[dict[str, PairedSample], float]:
    """Paired samples of one simulated baseline/current pair, and the true mean change of answer_f1."""
    quality = rng.beta(2.0, 0.7, size=n)
    before, after = draw_run(rng, quality), draw_run(rng, quality, shift)
    cached = rng.random(n) < 0.7
    before["answer_f1_cached"] = before["answer_f1"]
    after["answer_f1_cached"] = np.where(cached, before["answer_f1"], after["answer_f1"])
    true_change = float(np.mean(np.clip(quality - shift, 0.005, 0.995) - np.clip(quality, 0.005, 0.995)))
    samples = {
        metric: PairedSample(tuple(before[metric].tolist()), tuple(after[metric].tolist()))
        for metric in METRICS
    }
    return samples, true_change


def percentile_high(differences: Any, seed: int) -> tuple[float, float]:
    """The plain percentile-bootstrap 95% interval (same resamples), for contrast only."""
    values = np.asarray(differences)
    means = np.concatenate(
        [counts @ values / values.size for counts in resample_counts(values.size, RESAMPLES, seed)]
    )
    low, high = np.quantile(means, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return float(low), float(high)


def null_rows(sizes: list[int], trials: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        rng = np.random.default_rng([seed, n])
        counts = {metric: np.zeros(4) for metric in (*METRICS, "percentile answer_f1")}
        for index in range(trials):
            samples, _ = trial(rng, n, 0.0)
            changes = paired_changes(samples, confidence=CONFIDENCE, resamples=RESAMPLES, seed=index)
            for metric, change in changes.items():
                assert change.ci_low is not None and change.ci_high is not None and change.p_value is not None
                counts[metric] += [
                    change.ci_high < -0.02,
                    change.ci_high < 0.0,
                    change.ci_low <= 0.0 <= change.ci_high,
                    change.p_value < 1 - CONFIDENCE,
                ]
            sample = samples["answer_f1"]
            low, high = percentile_high(np.subtract(sample.current, sample.baseline), index)
            counts["percentile answer_f1"] += [high < -0.02, high < 0.0, low <= 0.0 <= high, np.nan]
        for metric, (gate_002, gate_0, covered, significant) in counts.items():
            test = "mcnemar" if metric in ("passed", "exact_match") else "boot-t|t"
            rows.append(
                {
                    "n": n,
                    "metric": metric,
                    "test": "percentile" if metric.startswith("percentile") else test,
                    "gate@-0.02": gate_002 / trials,
                    "gate@0": gate_0 / trials,
                    "p<0.05": significant / trials,
                    "coverage": covered / trials,
                    "budgeted": not metric.startswith("percentile"),
                }
            )
    return rows


def power_row(n: int, trials: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng([seed, n, 1])
    caught = 0
    true_changes = []
    for index in range(trials):
        samples, true_change = trial(rng, n, DROP)
        change = paired_changes(
            {"answer_f1": samples["answer_f1"]}, confidence=CONFIDENCE, resamples=RESAMPLES, seed=index
        )["answer_f1"]
        assert change.ci_high is not None
        caught += change.ci_high < 0.0
        true_changes.append(true_change)
    return {"n": n, "power": caught / trials, "true_change": float(np.mean(true_changes))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 trials, n=20 and 40, no budget check")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    announce_quick(args.quick)
    trials = 50 if args.quick else 1000
    sizes = [20, 40] if args.quick else [20, 40, 200]
    rows = null_rows(sizes, trials, args.seed)
    print(f"Null (no true change), {trials} trials, {CONFIDENCE:.0%} intervals, {RESAMPLES} resamples")
    header = ("n", "metric", "test", "gate@-0.02", "gate@0", "p<0.05", "coverage")
    print(
        f"{header[0]:>4}  {header[1]:<22} {header[2]:<12} " + " ".join(f"{name:>10}" for name in header[3:])
    )
    for row in rows:
        print(
            f"{row['n']:>4}  {row['metric']:<22} {row['test']:<12} "
            + " ".join(f"{row[name]:>10.3f}" for name in header[3:])
        )
    power = power_row(200 if not args.quick else 40, trials, args.seed)
    print(
        f"Power: answer_f1 drop of {DROP} (realised {power['true_change']:+.4f}) on {power['n']} questions: "
        f"interval below 0 in {power['power']:.3f} of {trials} trials"
    )
    if args.quick:
        return 0
    missed = [
        f"n={row['n']} {row['metric']} {column}={row[column]:.3f}"
        for row in rows
        if row["budgeted"]
        for column in ("gate@-0.02", "gate@0", "p<0.05")
        if row[column] > FALSE_ALARM_BUDGET and (column != "p<0.05" or row["test"] == "mcnemar")
    ]
    if power["power"] < POWER_BUDGET:
        missed.append(f"power {power['power']:.3f} < {POWER_BUDGET}")
    for miss in missed:
        print(f"BUDGET MISSED: {miss}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
