"""Calibration of the trend gates by simulation: false fails under noise alone, power against a slide.

    python benchmarks/bench_trend_calibration.py           # 20,000 trials per row, checks budgets
    python benchmarks/bench_trend_calibration.py --quick   # 200 trials, prints only (CI)

A trial is a window of W nightly runs of one corpus; each run's gated value is a mean over the
corpus's questions, drawn fresh every run from the questions' fixed qualities:
- `pass-rate`: 200 questions, 85% always pass or always fail (quality drawn from Beta(2, 0.7),
  passing iff above 0.5), 15% flaky with a pass chance from U(0.2, 0.8); the value is the pass rate;
- `small`: the same with 20 questions (coarse, very discrete values);
- `graded`: 100 questions with quality q ~ Beta(2, 0.7) and a score per run from Beta(10q, 10(1-q))
  rounded to twelfths (like steps_score or token F1), 30% of them deterministic (the same every run);
- `bad-runs`: `graded`, but one run in twenty loses 15% of its questions to errors scored 0 (an
  outage night: a heavy left tail).
A true slope s per run is added to every run's value (s x run index). The gate
`trend:m.mean>=-0.005/run@W` goes through the real gate code (`evaluate_trend_gate`).

Null rows: s = -0.005, exactly at the bound, the hardest case the gate must let pass; and s = 0,
the flat series a team sees most nights. The gate's false-fail rate must be at most its nominal
level (1 - confidence) / 2 = 2.5% at 95% (5% at 90%), within three Monte Carlo standard errors.
Power rows: s = -0.02 and -0.01 per run. Exits 1 when a budget is missed (full mode only).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import announce_quick

from pytest_graphrag_eval.gates.history_gates import evaluate_trend_gate
from pytest_graphrag_eval.gates.suite_gates import parse_gate

BOUND = -0.005
CHUNK = 500
Draw = Callable[[np.random.Generator, int, int], np.ndarray]  # (rng, trials, window) -> values


def _qualities(rng: np.random.Generator, trials: int, questions: int) -> np.ndarray:
    return rng.beta(2.0, 0.7, size=(trials, 1, questions))


def pass_rate(questions: int) -> Draw:
    def draw(rng: np.random.Generator, trials: int, window: int) -> np.ndarray:
        fixed = (_qualities(rng, trials, questions) > 0.5).astype(float)
        flaky = rng.random((trials, 1, questions)) < 0.15
        chance = np.where(flaky, rng.uniform(0.2, 0.8, size=(trials, 1, questions)), fixed)
        values: np.ndarray = (rng.random((trials, window, questions)) < chance).mean(axis=2)
        return values

    return draw


def graded(outages: bool) -> Draw:
    def draw(rng: np.random.Generator, trials: int, window: int) -> np.ndarray:
        quality = np.clip(_qualities(rng, trials, 100), 0.005, 0.995)
        scores = np.round(rng.beta(10 * quality, 10 * (1 - quality), size=(trials, window, 100)) * 12) / 12
        deterministic = rng.random((trials, 1, 100)) < 0.3
        scores = np.where(deterministic, scores[:, :1, :], scores)
        if outages:
            outage = rng.random((trials, window, 1)) < 0.05
            lost = rng.random((trials, window, 100)) < 0.15
            scores = np.where(outage & lost, 0.0, scores)
        values: np.ndarray = scores.mean(axis=2)
        return values

    return draw


MODELS: dict[str, Draw] = {
    "pass-rate": pass_rate(200),
    "small": pass_rate(20),
    "graded": graded(outages=False),
    "bad-runs": graded(outages=True),
}


def fail_rate(draw: Draw, window: int, slope: float, confidence: int, trials: int, seed: int) -> float:
    """Share of trials in which the gate fails, its values drawn in chunks of trials."""
    gate = parse_gate(f"trend:steps_score.mean>={BOUND}/run@{window}@{confidence}")
    rng = np.random.default_rng(seed)
    fails = 0
    for start in range(0, trials, CHUNK):
        values = draw(rng, min(CHUNK, trials - start), window) + slope * np.arange(window)
        for series in values.tolist():
            fails += not evaluate_trend_gate(gate, series, window - 1, [], "").passed
    return fails / trials


def rows(trials: int, windows: list[int], seed: int) -> list[dict[str, Any]]:
    found = []
    for index, (name, draw) in enumerate(MODELS.items()):
        for window in windows:
            cases = [(95, BOUND), (95, 0.0), (95, -0.01), (95, -0.02)]
            if window == 10:
                cases.insert(1, (90, BOUND))
            for confidence, slope in cases:
                rate = fail_rate(draw, window, slope, confidence, trials, seed + 1000 * index + window)
                nominal = (1 - confidence / 100) / 2
                found.append(
                    {
                        "model": name,
                        "window": window,
                        "confidence": confidence,
                        "slope": slope,
                        "fails": rate,
                        "nominal": nominal,
                        "null": slope >= BOUND,
                    }
                )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 trials, windows 5 and 10, no budget check")
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    announce_quick(args.quick)
    trials = 200 if args.quick else 20_000
    windows = [5, 10] if args.quick else [5, 10, 20]
    found = rows(trials, windows, args.seed)
    print(f"trend:m.mean>={BOUND}/run@W: share of {trials} trials failing the gate")
    print(f"{'model':<10} {'W':>3} {'level':>5} {'true slope':>10} {'fails':>8} {'nominal':>8}")
    missed = []
    for row in found:
        print(
            f"{row['model']:<10} {row['window']:>3} {row['confidence']:>4}% {row['slope']:>10.3f} "
            f"{row['fails']:>8.4f} {row['nominal'] if row['null'] else math.nan:>8.3f}"
            + ("" if row["null"] else "  (power)")
        )
        allowed = row["nominal"] + 3 * math.sqrt(row["nominal"] * (1 - row["nominal"]) / trials)
        if row["null"] and row["fails"] > allowed:
            missed.append(
                f"{row['model']} W={row['window']} {row['confidence']}% "
                f"slope {row['slope']}: {row['fails']:.4f}"
            )
    if args.quick:
        return 0
    for miss in missed:
        print(f"BUDGET MISSED: {miss}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
