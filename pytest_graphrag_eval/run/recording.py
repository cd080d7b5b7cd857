"""Recording a finished run once its reports are written: a history that cannot be written costs the
run only a line saying why (`--graphrag-history-required` decides whether that fails it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.history.errors import HistoryError
from pytest_graphrag_eval.history.locations import parse_location
from pytest_graphrag_eval.history.provenance import detect_provenance
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports


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
