"""Which runs and waiting shard sets `graphrag-eval-history URL prune` deletes: a history grows by
1-5 MB a run of 10,000 questions, and a shard set whose other shards never come waits forever."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.errors import HistoryError

RunId = int


@dataclass(frozen=True)
class RetentionRule:
    """Per branch (and suite) the newest `keep_last` runs and every run since `keep_since` are kept;
    waiting shard sets whose last shard came before `waiting_before` are given up."""

    keep_last: int | None = None
    keep_since: str | None = None
    branch: str | None = None
    waiting_before: str | None = None

    def runs_to_delete(self, newest_first: Sequence[Sequence[Any]]) -> list[int]:
        """The run ids to delete, from (run_id, branch, suite, started_at) rows newest first."""
        if self.keep_last is None and self.keep_since is None:
            return []
        seen: dict[tuple[object, object], int] = {}
        doomed = []
        for run_id, branch, suite, started_at in newest_first:
            if self.branch is not None and branch != self.branch:
                continue
            rank = seen[branch, suite] = seen.get((branch, suite), 0) + 1
            kept_by_count = self.keep_last is not None and rank <= self.keep_last
            kept_by_date = self.keep_since is not None and str(started_at) >= self.keep_since
            if not (kept_by_count or kept_by_date):
                doomed.append(int(run_id))
        return doomed


@dataclass(frozen=True)
class PruneResult:
    runs: tuple[RunId, ...]  # deleted (or, in a dry run, that would be)
    waiting: tuple[str, ...]  # run keys of waiting shard sets deleted
    dry_run: bool


def retention_rule(
    *, keep: int | None, newer_than: str | None, branch: str | None, waiting_days: float | None
) -> RetentionRule:
    """The rule the prune command's options give (their parsers check the ranges); a HistoryError
    when none is given or a date is not one."""
    if keep is None and newer_than is None and waiting_days is None:
        raise HistoryError(
            "prune: say what to keep: --keep N (runs per branch), --newer-than DATE, "
            "and/or --waiting-days D (for incomplete shard sets)"
        )
    now = dt.datetime.now(dt.UTC)
    return RetentionRule(
        keep_last=keep,
        keep_since=_timestamp(newer_than) if newer_than is not None else None,
        branch=branch,
        waiting_before=_format(now - dt.timedelta(days=waiting_days)) if waiting_days is not None else None,
    )


def _timestamp(text: str) -> str:
    """A date or date-time (ISO 8601; UTC when no zone is given) as the store writes start times."""
    try:
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise HistoryError(f"prune: --newer-than {text!r} is not a date (2026-01-31) or date-time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return _format(moment)


def _format(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
