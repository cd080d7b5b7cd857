"""Console script `graphrag-eval-merge`: merge the JSON reports of a sharded run into one.

The merged report is the one a single unsharded run would have written: results in corpus order, then
aggregates, the baseline comparison, gates, Markdown and HTML computed on the whole. Exit status: 0, or 1
when a question or a gate failed (as pytest's), 2 when the reports cannot be merged (the message says
why), 130 when stopped by Ctrl-C and 143 by SIGTERM (a cancelled CI job).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from pytest_graphrag_eval.compare import DEFAULT_FLAKY_FLIPS, DEFAULT_FLAKY_RUNS
from pytest_graphrag_eval.errors import CommandError, GraphragEvalError
from pytest_graphrag_eval.options.command_line import add_option, declared
from pytest_graphrag_eval.options.files import check_files, history_file
from pytest_graphrag_eval.options.parsers import HistoryRef
from pytest_graphrag_eval.run.end_of_run import HistoryOptions, RunOutcome, conclude_run
from pytest_graphrag_eval.run.merge import ShardReport, load_shard, merge_shards, shard_summary
from pytest_graphrag_eval.run.pipeline import OutputPaths

_TERMINATED = 128 + signal.SIGTERM  # the status a shell reports for a process ended by SIGTERM


def merge_command() -> NoReturn:
    """`merge_main` in a process of its own: the one place that sets a signal handler or the collector's
    state. A cancelled CI job's SIGTERM becomes `SystemExit` here, so the merge unwinds as for Ctrl-C: a
    report half written is removed, not left beside the others (`formats.atomic`)."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    # This process is the merge's own and ends with it: the shards' and the baseline's results are
    # millions of small objects that make no cycles, and full collections walking them again and
    # again were a sixth of a 10,000-question merge. Never in `merge_main`, which others call.
    gc.disable()
    try:
        status = merge_main(sys.argv[1:])
    except KeyboardInterrupt:
        print("graphrag-eval-merge: interrupted (Ctrl-C)", file=sys.stderr)
        status = 128 + signal.SIGINT
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the summary's reader is gone (`| head`): what is left goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(status)


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> NoReturn:
    raise SystemExit(_TERMINATED)


def merge_main(argv: Sequence[str] | None = None) -> int:
    """`graphrag-eval-merge` as a function; returns the exit status."""
    args = _merge_parser().parse_args(argv)
    baseline_file = str(args.baseline) if isinstance(args.baseline, Path) else None
    try:
        if args.history is None and (args.history_required or args.history_run_key):
            needing = "--history-required" if args.history_required else "--history-run-key"
            raise CommandError(f"{needing} needs a history to record the run in: pass --history URL")
        check_files(
            [("--report", args.report), ("--markdown", args.markdown), ("--html", args.html)],
            [("--history", history_file(args.history)), *(("a shard", report) for report in args.reports)],
        )
        shards = [load_shard(path) for path in args.reports]
        baseline_ref = _history_baseline_ref(args.baseline, shards)
        history_baseline = _read_history_baseline(args.history, baseline_ref, shards)
        merged = merge_shards(
            shards,
            baseline_path=None if baseline_ref is not None else baseline_file,
            history_baseline=history_baseline,
        )
    except GraphragEvalError as error:
        print(f"graphrag-eval-merge: error: {error}", file=sys.stderr)
        return 2
    outcome = conclude_run(
        merged.results,
        merged.settings,
        OutputPaths(args.report, args.markdown, args.html),
        started=merged.started,
        finished=merged.finished,
        interrupted=merged.interrupted,
        warnings=merged.warnings,
        judge_spend=merged.judge_spend,
        history=HistoryOptions(
            args.history, args.history_required, args.history_run_key, args.flaky_runs, args.flaky_flips
        )
        if args.history
        else None,
        plain_results=merged.plain_results,
    )
    status = 1 if outcome.questions_failed or outcome.failed else 0
    with contextlib.suppress(BrokenPipeError):  # the summary's reader is gone (`| head`): files are written
        _print_summary(outcome, shards, len(merged.results))
    return status


def _print_summary(outcome: RunOutcome, shards: Sequence[ShardReport], questions: int) -> None:
    finished = outcome.finished
    failed = outcome.questions_failed
    shown = shard_summary(shards)
    print(f"graphrag-eval-merge: merged {shown}: {questions} questions, {failed} failed")
    for gate in finished.gate_results:
        print(f"  gate {'passed' if gate.passed else 'FAILED'}: {gate.message}")
    for what, path in outcome.written:
        print(f"graphrag-eval-merge: wrote the {what}: {path}")
    for problem in outcome.problems:
        print(f"graphrag-eval-merge: {problem}", file=sys.stderr)
    if finished.incomplete:
        print(f"graphrag-eval-merge: {finished.incomplete}")
    if outcome.interrupted:
        interrupted = ", ".join(shard.path for shard in shards if shard.metadata.get("interrupted"))
        print(
            f"graphrag-eval-merge: the run is incomplete: {interrupted} "
            f"{'was' if ',' not in interrupted else 'were'} interrupted (Ctrl-C); run that shard again"
        )
    if outcome.history is not None:
        history = outcome.history
        print(f"graphrag-eval-merge: {history.line}", file=sys.stdout if history.recorded else sys.stderr)


def _history_baseline_ref(baseline: Path | HistoryRef | None, shards: Sequence[ShardReport]) -> str | None:
    """`--baseline history:REF`, else the history run the shards were compared with (if they were)."""
    if baseline is not None:
        return str(baseline) if isinstance(baseline, HistoryRef) else None
    record = (shards[0].metadata.get("settings") or {}).get("baseline") if shards else None
    return str(record["history"]) if isinstance(record, dict) and record.get("history") else None


def _read_history_baseline(
    url: str | None, ref: str | None, shards: Sequence[ShardReport]
) -> tuple[dict[str, Any], str] | None:
    """The baseline run of the history, of the shards' suite."""
    if ref is None:
        return None
    if url is None:
        raise CommandError(f"the baseline history:{ref} is a run of the history: pass --history URL")
    from pytest_graphrag_eval.history.records import suite_of
    from pytest_graphrag_eval.run.run_history import read_history

    found = read_history(
        url,
        environ=os.environ,
        cwd=None,
        window=1,
        flaky_runs=DEFAULT_FLAKY_RUNS,
        flaky_flips=DEFAULT_FLAKY_FLIPS,
        baseline_ref=ref,
        suite=suite_of(shards[0].metadata) if shards else None,
    )
    assert found.baseline is not None and found.baseline_name is not None
    return found.baseline, found.baseline_name


_OPTION_HELP = (
    ("--report", "write the merged JSON report here"),
    ("--markdown", "write the Markdown summary here"),
    ("--html", "write the HTML report here"),
    (
        "--baseline",
        "the baseline report the shards were compared with, where the merge finds it (default: the path "
        "the shards recorded), or one to compare the merged run with; history:REF for a run of --history",
    ),
    ("--history", "record the merged run in this history (SQLite path or postgresql://...)"),
    ("--history-run-key", "the merged run's key in the history"),
    (
        "--flaky-runs",
        f"with --history, look for flaky questions in the last N runs (default {DEFAULT_FLAKY_RUNS})",
    ),
    (
        "--flaky-flips",
        "flaky: flipped K times in those runs, or passed and failed on one commit (default "
        f"{DEFAULT_FLAKY_FLIPS})",
    ),
    ("--history-required", "exit 1 when the history cannot be written"),
)


def _merge_parser() -> argparse.ArgumentParser:
    """The command's arguments; every option but the shards is a declared setting (`options/`)."""
    parser = argparse.ArgumentParser(
        prog="graphrag-eval-merge",
        description="Merge the JSON reports of a sharded run (--graphrag-shard K/N, or pytest-split) into "
        "the report one unsharded run would have written.",
    )
    parser.add_argument("reports", nargs="+", type=Path, help="the shards' JSON reports, every shard once")
    for flag, help_text in _OPTION_HELP:  # the plugin's --graphrag-<flag>, under a shorter name
        add_option(parser, flag, declared("graphrag_" + flag[2:].replace("-", "_")), help=help_text)
    return parser
