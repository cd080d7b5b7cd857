"""A run and its history: the baseline and the earlier runs of its suite (and branch, when it has any)
read for flaky marks and gates, and the finished run recorded once its reports are written. A history
that cannot be read costs the run only its history gates and a warning, one that cannot be written
only a line saying why (`--graphrag-history-required` decides whether that fails it); a baseline it
cannot give is a usage error before any question runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.compare.baseline import check_report
from pytest_graphrag_eval.compare.past_runs import PastRun, RunHistory
from pytest_graphrag_eval.errors import ConfigurationError, HistoryError
from pytest_graphrag_eval.history.locations import parse_location
from pytest_graphrag_eval.history.provenance import RunProvenance, detect_provenance
from pytest_graphrag_eval.history.records import ABSENT, OUTCOME_NAMES, run_identities, run_inputs
from pytest_graphrag_eval.history.store import IDENTITY_FIELDS, HistoryStore, RunSummary, open_history


@dataclass(frozen=True)
class StartingHistory:
    """What a run took from its history at the start."""

    runs: RunHistory | None  # None: the history could not be read (see `warning`)
    provenance: RunProvenance
    baseline: dict[str, Any] | None = None
    baseline_name: str | None = None  # how the report names the baseline: history:REF (run N, started ...)
    warning: str | None = None

    def current_run(self, metadata: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> PastRun:
        """This run as the history will record it (its commit, branch and identities)."""
        identities = run_identities(metadata, results)
        return PastRun(
            run_id="this run",
            started_at=str(metadata.get("started_at") or ""),
            aggregates={},
            outcomes={},
            commit=self.provenance.commit,
            branch=self.provenance.branch,
            identities=identities,
            inputs=run_inputs(
                str(identities["corpus"]),
                identities["graph"],
                str(identities["settings"]),
                metadata.get("responses"),
                identities["responses"],
            ),
        )


def read_history(
    url: str,
    *,
    environ: Mapping[str, str],
    cwd: Path | None,
    window: int,
    flaky_runs: int,
    flaky_flips: int,
    baseline_ref: str | None = None,
    suite: str | None = None,
) -> StartingHistory:
    """The earlier runs of `suite` (and the baseline asked for) from the history at `url`."""
    provenance = detect_provenance(environ, cwd)
    try:
        with open_history(url, environ=environ) as store:
            baseline, name = (
                _baseline(store, baseline_ref, suite) if baseline_ref is not None else (None, None)
            )
            runs = _earlier_runs(store, provenance.branch, window - 1, suite)
    except HistoryError as error:
        if baseline_ref is not None:
            raise ConfigurationError(f"--graphrag-baseline history:{baseline_ref}: {error}") from None
        warning = (
            f"the run history could not be read, so nothing is marked flaky and history gates fail: {error}"
        )
        return StartingHistory(None, provenance, warning=warning)
    return StartingHistory(
        RunHistory(runs, flaky_runs=flaky_runs, flaky_flips=flaky_flips), provenance, baseline, name
    )


def _baseline(store: HistoryStore, ref: str, suite: str | None) -> tuple[dict[str, Any], str]:
    try:
        run = store.resolve(ref, suite=suite)
    except HistoryError as error:
        raise ConfigurationError(f"--graphrag-baseline history:{ref}: {error}") from None
    report = store.load_report(run.run_id)
    name = f"history:{ref} (run {run.run_id}, {run.run_key}, started {run.started_at})"
    check_report(report, name)
    return report, name


def _earlier_runs(
    store: HistoryStore, branch: str | None, count: int, suite: str | None
) -> tuple[PastRun, ...]:
    """The newest `count` runs of `suite` (of `branch` when it has any), oldest first, with every
    question's outcome."""
    if count <= 0:
        return ()
    summaries = store.runs(branch=branch, limit=count, suite=suite) if branch is not None else []
    if not summaries:
        branch = None
        summaries = store.runs(limit=count, suite=suite)
    outcomes = store.question_outcomes(last_n=count, branch=branch, suite=suite)
    by_run: dict[Any, dict[str, str]] = {run.run_id: {} for run in outcomes.runs}
    for question_id, strip in outcomes.strips.items():
        for run, code in zip(outcomes.runs, strip, strict=True):
            if code != ABSENT and code in OUTCOME_NAMES:
                by_run[run.run_id][question_id] = OUTCOME_NAMES[code]
    return tuple(_past_run(summary, by_run.get(summary.run_id, {})) for summary in reversed(summaries))


def _past_run(summary: RunSummary, outcomes: dict[str, str]) -> PastRun:
    return PastRun(
        run_id=str(summary.run_id),
        started_at=summary.started_at,
        aggregates=summary.aggregates,
        outcomes=outcomes,
        commit=summary.commit,
        branch=summary.branch,
        passed=summary.passed,
        identities={name: getattr(summary, field) for name, field in IDENTITY_FIELDS.items()},
        inputs=summary.inputs,
    )


@dataclass(frozen=True)
class HistoryOutcome:
    recorded: bool
    line: str  # for the terminal: what was recorded where, or why nothing was


def record_finished_run(
    url: str,
    report: Mapping[str, Any],
    *,
    run_key: str | None,
    environ: Mapping[str, str],
    cwd: Path | None = None,
) -> HistoryOutcome:
    """Record `report` in the history at `url`; a failure is an outcome with its reason, not an exception."""
    from pytest_graphrag_eval.run.merge import merge_shard_reports  # not loaded at a plugin's start

    try:
        display = parse_location(url, environ).display
        with open_history(url, environ=environ) as store:
            recorded = store.record_run(
                report,
                run_key=run_key,
                provenance=detect_provenance(environ, cwd),
                merge_shards=merge_shard_reports,
            )
    except HistoryError as error:
        return HistoryOutcome(False, f"the run was NOT recorded in the history: {error}")
    if not recorded.complete:
        return HistoryOutcome(
            True,
            f"history: shard {recorded.shards_recorded} of {recorded.shards_expected} of run "
            f"{recorded.run_key} recorded in {display}; the run is listed once every shard is in",
        )
    return HistoryOutcome(True, f"history: recorded run {recorded.run_id} ({recorded.run_key}) in {display}")
