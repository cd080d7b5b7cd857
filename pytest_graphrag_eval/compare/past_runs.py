"""The earlier runs a run is judged against, as plain data, and which questions flip between runs.

Everything deciding from them works on these values, so it is tested without a store. A flip counts
as flaky only between runs with the same inputs (rule: docs/history.md): a new graph or recording is
a change, not noise.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_graphrag_eval.compare import DEFAULT_FLAKY_FLIPS, DEFAULT_FLAKY_RUNS
from pytest_graphrag_eval.compare.classify import passed

IDENTITIES = ("corpus", "graph", "responses", "settings")


@dataclass(frozen=True)
class PastRun:
    """One recorded run: when, on what, its aggregates and each question's outcome (by question id)."""

    run_id: str
    started_at: str
    aggregates: Mapping[str, Any]
    outcomes: Mapping[str, str]
    commit: str | None = None
    branch: str | None = None
    passed: bool | None = None
    identities: Mapping[str, str | None] = field(default_factory=dict)  # corpus, graph, ... fingerprints
    inputs: str = ""  # what it ran on besides the code (`history.records.run_inputs`); "" if unknown


@dataclass(frozen=True)
class RunHistory:
    """Earlier runs, oldest first (this run not included), and the flaky rule the run uses."""

    runs: tuple[PastRun, ...]
    flaky_runs: int = DEFAULT_FLAKY_RUNS
    flaky_flips: int = DEFAULT_FLAKY_FLIPS

    def last(self, count: int) -> tuple[PastRun, ...]:
        """The newest `count` earlier runs, oldest first."""
        return self.runs[-count:] if count > 0 else ()


@dataclass(frozen=True)
class Flakiness:
    """How one question behaved over the window: outcomes oldest first (None: not in that run)."""

    question_id: str
    outcomes: tuple[str | None, ...]
    flips: int
    same_commit: bool

    def is_flaky(self, min_flips: int) -> bool:
        return self.flips >= min_flips or self.same_commit


def outcome_series(
    history: RunHistory, current: Sequence[Mapping[str, Any]], window: int
) -> dict[str, tuple[str | None, ...]]:
    """Each current question's outcomes over the last `window` runs, this run last."""
    earlier = history.last(window - 1)
    return {
        str(result["question_id"]): (
            *(run.outcomes.get(str(result["question_id"])) for run in earlier),
            result.get("outcome"),
        )
        for result in current
    }


def flakiness(
    history: RunHistory,
    current: Sequence[Mapping[str, Any]],
    current_commit: str | None,
    current_inputs: str = "",
) -> list[Flakiness]:
    """Every current question's flips over the history's window (this run included), in result order."""
    earlier = history.last(history.flaky_runs - 1)
    commits = [(run.commit, run.inputs) for run in earlier] + [(current_commit, current_inputs)]
    found = []
    for question_id, outcomes in outcome_series(history, current, history.flaky_runs).items():
        counted = [
            (commit, verdict)
            for commit, outcome in zip(commits, outcomes, strict=True)
            if (verdict := passed(outcome)) is not None
        ]
        flips = sum(
            1
            for before, after in itertools.pairwise(counted)
            if before[1] != after[1] and before[0][1] == after[0][1]
        )
        seen: dict[tuple[str, str], set[bool]] = {}
        for (commit, inputs), verdict in counted:
            if commit:
                seen.setdefault((commit, inputs), set()).add(verdict)
        found.append(Flakiness(question_id, outcomes, flips, any(len(both) == 2 for both in seen.values())))
    return found


def flaky_questions(
    history: RunHistory,
    current: Sequence[Mapping[str, Any]],
    current_commit: str | None,
    current_inputs: str = "",
) -> list[Flakiness]:
    """The current questions that are flaky by the history's rule, in result order."""
    return [
        found
        for found in flakiness(history, current, current_commit, current_inputs)
        if found.is_flaky(history.flaky_flips)
    ]
