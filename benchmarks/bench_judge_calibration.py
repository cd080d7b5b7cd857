"""Calibration of the judge-agreement statistics by simulation: the kappa interval's coverage.

    python benchmarks/bench_judge_calibration.py           # 4,000 trials per row, checks budgets
    python benchmarks/bench_judge_calibration.py --quick   # 200 trials, prints only (CI)

A simulated judge of known quality is held to people's labels: a labelled answer passes in the
person's eyes with prevalence P; the judge says pass with sensitivity SE on those and fail with
specificity SP on the others. That fixes the population's true Cohen's kappa. Each trial draws
N labelled answers, and the 95% interval `judging.agreement.binary_agreement` reports (Fleiss,
Cohen and Everitt's large-sample variance, estimated on the table smoothed by half a count a cell)
either covers the true kappa or not. Samples where kappa is undefined (every verdict the same on one
side) are counted apart.

Budget (full mode only): at the docs' recommendation, N >= 50 labels with ten or more expected of
each verdict, every row covers at least 92.5% (nominal 95%, less the large-sample approximation's
shortfall of about 1.5 points and three Monte Carlo standard errors). Other rows (30 labels, or 5
expected passes at P = 0.1) are printed for the docs, not held.
"""

from __future__ import annotations

import argparse
import random
import sys

from timing import announce_quick

from pytest_graphrag_eval.judging.agreement import binary_agreement

LEVEL = 0.95
RECOMMENDED = 50
FLOOR = 0.925
MIN_PER_VERDICT = 10
# (prevalence of pass in people's labels, judge's sensitivity, judge's specificity)
JUDGES = [
    (0.5, 0.9, 0.9),  # a good judge on balanced labels
    (0.5, 0.75, 0.75),  # a middling judge
    (0.3, 0.95, 0.8),  # a lenient judge on mostly failing answers
    (0.7, 0.85, 0.6),  # skewed labels, a judge that lets too much pass
    (0.5, 0.97, 0.97),  # an excellent judge: kappa near 1, where the interval is skewed
    (0.1, 0.9, 0.9),  # few answers deserve a pass
]


def true_kappa(prevalence: float, sensitivity: float, specificity: float) -> float:
    p11 = prevalence * sensitivity
    p22 = (1 - prevalence) * specificity
    judge_pass = p11 + (1 - prevalence) * (1 - specificity)
    observed = p11 + p22
    chance = prevalence * judge_pass + (1 - prevalence) * (1 - judge_pass)
    return (observed - chance) / (1 - chance)


def coverage(
    rng: random.Random, trials: int, n: int, prevalence: float, sensitivity: float, specificity: float
) -> tuple[float, int]:
    kappa = true_kappa(prevalence, sensitivity, specificity)
    covered = undefined = 0
    for _ in range(trials):
        pairs = []
        for _ in range(n):
            person = rng.random() < prevalence
            judge = rng.random() < (sensitivity if person else 1 - specificity)
            pairs.append((person, judge))
        interval = binary_agreement(pairs, LEVEL).interval
        if interval is None:
            undefined += 1
        elif interval.low <= kappa <= interval.high:
            covered += 1
    defined = trials - undefined
    return (covered / defined if defined else float("nan")), undefined


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 trials, two label counts, no budget check")
    parser.add_argument("--seed", type=int, default=20261128)
    args = parser.parse_args()
    announce_quick(args.quick)
    trials = 200 if args.quick else 4_000
    counts = [30, 50] if args.quick else [30, 50, 100, 200]
    rng = random.Random(args.seed)
    print(f"95% kappa interval: share of {trials} trials covering the true kappa")
    print(f"{'P':>4} {'SE':>5} {'SP':>5} {'kappa':>6} {'N':>4} {'coverage':>9} {'undefined':>9}")
    missed = []
    for prevalence, sensitivity, specificity in JUDGES:
        kappa = true_kappa(prevalence, sensitivity, specificity)
        for n in counts:
            share, undefined = coverage(rng, trials, n, prevalence, sensitivity, specificity)
            print(
                f"{prevalence:>4} {sensitivity:>5} {specificity:>5} {kappa:>6.3f} {n:>4} "
                f"{share:>9.4f} {undefined:>9}"
            )
            recommended = n >= RECOMMENDED and min(prevalence, 1 - prevalence) * n >= MIN_PER_VERDICT
            if recommended and not share >= FLOOR:
                missed.append(f"P={prevalence} SE={sensitivity} SP={specificity} N={n}: {share:.4f}")
    if args.quick:
        return 0
    for miss in missed:
        print(f"BUDGET MISSED: {miss}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
