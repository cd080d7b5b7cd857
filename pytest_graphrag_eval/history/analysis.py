"""Analyses of stored history, with no I/O: flaky questions and metric trends. A flip counts only between two
runs with the same inputs (`records.run_inputs`), so a change that came with other responses is never taken
for noise."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_graphrag_eval.history.store import IDENTITY_FIELDS, MetricPoint, OutcomeHistory

_PASS = frozenset("PX")  # passed, xpassed
_FAIL = frozenset("F")


@dataclass(frozen=True)
class FlakyQuestion:
    question_id: str
    flips: int  # pass <-> fail changes between consecutive runs that had a verdict
    passes: int
    failures: int
    mixed_commits: tuple[str, ...]  # commits on which it both passed and failed
    strip: str  # one outcome code per run, oldest first (records.OUTCOME_CODES)


def flaky_questions(
    history: OutcomeHistory, min_flips: int = 2, *, same_commit: bool = True
) -> list[FlakyQuestion]:
    """Questions that flipped at least `min_flips` times, or passed and failed on one commit with the
    same inputs; most flips first."""
    commits = [run.commit for run in history.runs]
    inputs = [run.inputs for run in history.runs]
    flaky = []
    for question_id, strip in history.strips.items():
        if "F" not in strip or ("P" not in strip and "X" not in strip):
            continue  # never failed, or never passed: most questions, decided by two scans in C
        counted = [
            (code, given) for code, given in zip(strip, inputs, strict=True) if code in _PASS or code in _FAIL
        ]
        verdicts = [code for code, _ in counted]
        flips = sum(
            1
            for (left, before), (right, after) in itertools.pairwise(counted)
            if (left in _PASS) != (right in _PASS) and before == after
        )
        mixed = _mixed_commits(strip, commits, inputs) if same_commit else ()
        if flips >= min_flips or mixed:
            passes = sum(1 for code in verdicts if code in _PASS)
            flaky.append(FlakyQuestion(question_id, flips, passes, len(verdicts) - passes, mixed, strip))
    flaky.sort(key=lambda item: (-item.flips, item.question_id))
    return flaky


def _mixed_commits(strip: str, commits: Sequence[str | None], inputs: Sequence[str]) -> tuple[str, ...]:
    seen: dict[tuple[str, str], set[bool]] = {}
    for code, commit, run_inputs in zip(strip, commits, inputs, strict=True):
        if commit is not None and (code in _PASS or code in _FAIL):
            seen.setdefault((commit, run_inputs), set()).add(code in _PASS)
    return tuple(dict.fromkeys(commit for (commit, _), verdicts in seen.items() if len(verdicts) == 2))


@dataclass(frozen=True)
class Change:
    """What changed at a run, compared with the run before it."""

    index: int  # position in the series
    what: tuple[str, ...]  # "corpus", "graph", "settings", "responses"


@dataclass(frozen=True)
class Trend:
    slope: float | None  # change of the metric per run (least squares over the runs that have it)
    low: float | None  # the slope's confidence interval
    high: float | None
    confidence: float
    runs_with_value: int
    changes: tuple[Change, ...]


def trend(points: Sequence[MetricPoint], *, confidence: float = 0.95) -> Trend:
    """The metric's slope per run with its interval (Student's t on the residuals), and the changes."""
    pairs = [(float(index), point.value) for index, point in enumerate(points) if point.value is not None]
    slope = low = high = None
    if len(pairs) >= 2:
        mean_x, mean_y = (statistics.fmean(column) for column in zip(*pairs, strict=True))
        sxx = sum((x - mean_x) ** 2 for x, _ in pairs)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in pairs) / sxx
        if len(pairs) >= 3:
            residual = sum((y - (mean_y + slope * (x - mean_x))) ** 2 for x, y in pairs)
            error = math.sqrt(residual / (len(pairs) - 2) / sxx)
            margin = _t_quantile(1 - (1 - confidence) / 2, len(pairs) - 2) * error
            low, high = slope - margin, slope + margin
    return Trend(slope, low, high, confidence, len(pairs), tuple(changes(points)))


def changes(points: Sequence[MetricPoint]) -> list[Change]:
    """The runs whose corpus, graph, settings or responses differ from the run before."""
    found = []
    for index, (before, after) in enumerate(itertools.pairwise(points), start=1):
        fields = ((name, IDENTITY_FIELDS[name]) for name in ("corpus", "graph", "settings", "responses"))
        what = tuple(name for name, field in fields if getattr(before, field) != getattr(after, field))
        if what:
            found.append(Change(index, what))
    return found


def _t_quantile(probability: float, degrees: int) -> float:
    """Student's t quantile: scipy's when installed, else a Cornish-Fisher expansion of the normal's."""
    try:
        from scipy.stats import t
    except ImportError:
        z = statistics.NormalDist().inv_cdf(probability)
        g1 = (z**3 + z) / 4
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
        return z + g1 / degrees + g2 / degrees**2 + g3 / degrees**3
    return float(t.ppf(probability, degrees))
