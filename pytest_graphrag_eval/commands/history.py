"""`graphrag-eval-history URL SUBCOMMAND`: read, backfill and prune a run history (docs/history.md).

Stored text (branch names, commit messages from CI variables) is shown with its control characters
escaped; reading commands open the history read-only. Exit status 0, 1 when `report` could not write
a file, 2 when the history cannot be read or written (never naming the password).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.commands import Argument, add_arguments
from pytest_graphrag_eval.errors import CommandError, GraphragEvalError, json_problem
from pytest_graphrag_eval.formats.terminal_text import terminal_safe
from pytest_graphrag_eval.gates.expressions import numeric_value
from pytest_graphrag_eval.history.analysis import flaky_questions, trend
from pytest_graphrag_eval.history.metrics import check_metric
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.records import check_report, corpus_identity
from pytest_graphrag_eval.history.retention import retention_rule
from pytest_graphrag_eval.history.store import IDENTITY_FIELDS, HistoryStore, RunSummary, open_history
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.options.command_line import FLAG
from pytest_graphrag_eval.options.declarations import OptionSpec
from pytest_graphrag_eval.options.files import check_files, history_file
from pytest_graphrag_eval.report.history_summary import OUTCOME_CODES
from pytest_graphrag_eval.report_model import ReportDocument
from pytest_graphrag_eval.run.merge import merge_shard_reports
from pytest_graphrag_eval.run.pipeline import OutputPaths, write_outputs

PROG = "graphrag-eval-history"
_SHORT_SHA = 10
_BAR = 10  # characters of the widest bar in `trend`


_WRITING = frozenset({"import", "prune", "shards"})


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out = _Output(args.json)
    try:
        if (metric := getattr(args, "metric", None)) is not None:
            check_metric(metric)
        writes = args.command in _WRITING and not (args.command == "shards" and not args.clear)
        with open_history(
            args.url, environ=os.environ, create=args.command == "import", read_only=not writes
        ) as store:
            status = int(args.handler(store, args, out))
        out.flush()
    except GraphragEvalError as error:
        _error(str(error))
        return 2
    except BrokenPipeError:
        return _reader_gone()
    return status


def _error(text: str) -> None:
    with contextlib.suppress(BrokenPipeError):
        print(f"{PROG}: error: {terminal_safe(text)}", file=sys.stderr)


def _reader_gone() -> int:
    """The reader closed our output (`| head`); stdout goes to the null device, or Python would report
    the failed flush at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


class _Output:
    """Lines for a terminal, or one JSON document with `--json`."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.width = max(60, shutil.get_terminal_size((100, 24)).columns)
        self.document: Any = None

    def line(self, text: str = "") -> None:
        if not self.as_json:
            print(_cut(terminal_safe(text), self.width))

    def flush(self) -> None:
        if self.as_json and self.document is not None:
            # ASCII: every control character of stored text written as a JSON escape, inert on a terminal
            print(json.dumps(self.document, indent=2, ensure_ascii=True, default=str))


def _list(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """recorded runs, newest first"""
    runs = store.runs(branch=args.branch, limit=args.limit, suite=args.suite)
    out.document = [_summary_json(run) for run in runs]
    for waiting in store.waiting_shards():
        out.line(
            f"waiting: run {waiting.run_key} has {len(waiting.indexes)} of its {waiting.expected} shards "
            "(listed once all are in; see the shards subcommand)"
        )
    if not runs:
        out.line(f"no runs in {store.display}" + (f" on branch {args.branch}" if args.branch else ""))
        return 0
    out.line(
        f"{'run':>5}  {'started (UTC)':<16}  verdict  {'failed':>11}  {'branch':<12}  {'commit':<8}  key"
    )
    for run in runs:
        out.line(
            f"{run.run_id:>5}  {_when(run.started_at):<16}  {'passed' if run.passed else 'FAILED':<6}  "
            f"{f'{run.failed}/{run.questions}':>11}  {_cut(run.branch or '-', 12):<12}  "
            f"{(run.commit or '-')[:8]:<8}  {run.run_key}"
        )
    return 0


def _show(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """one run: verdict, provenance, identities, scores, gates, failures"""
    run = store.resolve(args.run)
    questions = store.question_results(run.run_id)
    failed = [question for question in questions if question.outcome == "failed"]
    counts = _count_outcomes(question.outcome for question in questions)
    out.document = {
        **_summary_json(run),
        "questions_by_outcome": counts,
        "failed_questions": [
            {"question_id": q.question_id, "template_id": q.template_id, "failure": q.failure} for q in failed
        ],
    }
    out.line(f"run {run.run_id} ({run.run_key}): {'passed' if run.passed else 'FAILED'}")
    if run.failure_reason:
        out.line(f"  why:        {run.failure_reason}")
    out.line(f"  started:    {run.started_at}" + (f" ({run.duration_sec:.1f} s)" if run.duration_sec else ""))
    out.line(f"  commit:     {run.commit or '-'} on {run.branch or '-'}" + (f" ({run.ci})" if run.ci else ""))
    if run.ci_url:
        out.line(f"  CI:         {run.ci_url}")
    out.line(f"  suite:      {run.suite if run.suite is not None else '(recorded before suites)'}")
    out.line(f"  corpus:     {_short(run.corpus_identity)}   graph: {_short(run.graph_identity)}")
    out.line(f"  responses:  {_short(run.responses_identity)}   settings: {_short(run.settings_fingerprint)}")
    out.line(
        f"  questions:  {run.questions} (" + ", ".join(f"{n} {name}" for name, n in counts.items()) + ")"
    )
    for key, value in sorted(_micro_means(run.aggregates).items()):
        out.line(f"    {key:<34} {value:.4f}")
    for gate in run.gates:
        out.line(
            f"  gate {'PASS' if gate.get('passed') else 'FAIL'}  {gate.get('message') or gate.get('gate')}"
        )
    shown = failed[: args.limit]
    for question in shown:
        first = (question.failure or "").splitlines()[0] if question.failure else ""
        out.line(f"  FAILED {question.question_id}: {first}")
    if len(failed) > len(shown):
        out.line(f"  ... and {len(failed) - len(shown)} more failed question(s) (--limit, or --json)")
    return 0


def _flaky(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """questions whose outcome flips between runs"""
    suite = _suite(store, args)
    history = store.question_outcomes(last_n=args.last, branch=args.branch, suite=suite)
    found = flaky_questions(history, args.min_flips, same_commit=not args.no_same_commit)
    out.document = {
        "suite": suite,
        "runs": [asdict(run) for run in history.runs],
        "min_flips": args.min_flips,
        "flaky": [asdict(item) for item in found],
    }
    out.line(
        f"{len(found)} flaky question(s) over the last {len(history.runs)} run(s): "
        f"flipped >= {args.min_flips} times"
    )
    out.line(f"(suite {suite or '-'}; a flip counts between two runs with the same inputs)")
    if not args.no_same_commit:
        out.line("or passed and failed on one commit with the same inputs")
    out.line("(outcomes oldest run first: P passed, F failed, s skipped, x xfailed, - absent)")
    for item in found[: args.limit]:
        mixed = (
            f"  same commit: {', '.join(c[:_SHORT_SHA] for c in item.mixed_commits)}"
            if item.mixed_commits
            else ""
        )
        out.line(
            f"  {item.flips:>3} flips  {item.passes:>3}P {item.failures:>3}F  {item.strip[-40:]}  "
            f"{item.question_id}{mixed}"
        )
    if len(found) > args.limit:
        out.line(f"  ... and {len(found) - args.limit} more (--limit, or --json)")
    return 0


def _trend(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """a metric per run, corpus/graph/settings changes marked, its slope"""
    suite = _suite(store, args)
    points = store.metric_series(args.metric, last_n=args.last, branch=args.branch, suite=suite)
    result = trend(points, confidence=args.confidence)
    changed = {change.index: change.what for change in result.changes}
    out.document = {
        "metric": args.metric,
        "suite": suite,
        "points": [
            {**asdict(point), "changed": list(changed.get(index, ()))} for index, point in enumerate(points)
        ],
        "slope_per_run": result.slope,
        "slope_interval": [result.low, result.high] if result.low is not None else None,
        "confidence": result.confidence,
        "runs_with_value": result.runs_with_value,
    }
    if not points:
        out.line(f"no runs in {store.display}")
        return 0
    if result.runs_with_value == 0:
        known = sorted(
            {key for run in store.runs(limit=1, suite=suite) for key in _micro_means(run.aggregates)}
        )
        raise CommandError(
            f"no run of the last {len(points)} has the metric {args.metric!r} "
            f"(the last run has: {', '.join(known) or 'no scores'}; or pass_rate)"
        )
    values = [point.value for point in points if point.value is not None]
    low, high = (min(values), max(values)) if values else (0.0, 0.0)
    out.line(f"{args.metric} over the last {len(points)} run(s), oldest first (suite {suite or '-'})")
    out.line("(<- what changed since the run before: corpus, graph, settings, responses)")
    for index, point in enumerate(points):
        bar = _bar(point.value, low, high)
        note = f"  <- {', '.join(changed[index])}" if index in changed else ""
        out.line(
            f"{point.run_id:>5}  {_when(point.started_at):<16}  {(point.commit or '-')[:_SHORT_SHA]:<10}  "
            f"{_num(point.value):>8}  {bar:<{_BAR}}{note}"
        )
    if result.slope is None:
        out.line("slope: needs at least two runs with a value")
    elif result.low is None:
        out.line(f"slope: {result.slope:+.5f} per run (an interval needs three runs)")
    else:
        out.line(
            f"slope: {result.slope:+.5f} per run, {result.confidence:.0%} interval "
            f"[{result.low:+.5f}, {result.high:+.5f}] over {result.runs_with_value} run(s)"
        )
    return 0


def _bar(value: float | None, low: float, high: float) -> str:
    if value is None:
        return ""
    span = high - low
    return "#" * (1 + round((_BAR - 1) * (value - low) / span) if span > 0 else _BAR)


def _compare(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """two runs: what changed, metric deltas, regressed and fixed questions"""
    before, after = store.resolve(args.runs[0]), store.resolve(args.runs[1])
    left = {q.question_id: q for q in store.question_results(before.run_id)}
    right = {q.question_id: q for q in store.question_results(after.run_id)}
    verdicts = {qid: (left[qid].passed, right[qid].passed) for qid in left.keys() & right.keys()}
    regressed = sorted(qid for qid, pair in verdicts.items() if pair == (True, False))
    fixed = sorted(qid for qid, pair in verdicts.items() if pair == (False, True))
    added, removed = sorted(right.keys() - left.keys()), sorted(left.keys() - right.keys())
    means_before, means_after = _micro_means(before.aggregates), _micro_means(after.aggregates)
    metrics = {
        key: {"before": means_before.get(key), "after": means_after.get(key)}
        for key in sorted(means_before.keys() | means_after.keys())
    }
    identity = {
        name: getattr(before, field) != getattr(after, field) for name, field in IDENTITY_FIELDS.items()
    }
    out.document = {
        "before": _summary_json(before),
        "after": _summary_json(after),
        "changed": identity,
        "metrics": metrics,
        "regressed": regressed,
        "fixed": fixed,
        "new": added,
        "removed": removed,
    }
    out.line(
        f"run {before.run_id} ({_when(before.started_at)}) -> run {after.run_id} ({_when(after.started_at)})"
    )
    what = [name for name, differs in identity.items() if differs]
    out.line(
        f"  changed: {', '.join(what) if what else 'nothing (same corpus, graph, responses and settings)'}"
    )
    for key, pair in metrics.items():
        b, a = pair["before"], pair["after"]
        delta = f"{a - b:+.4f}" if a is not None and b is not None else ""
        out.line(f"  {key:<34} {_num(b):>8} -> {_num(a):>8}  {delta}")
    out.line(f"  {len(regressed)} regressed, {len(fixed)} fixed, {len(added)} new, {len(removed)} removed")
    for label, ids in (("REGRESSED", regressed), ("fixed", fixed)):
        for qid in ids[: args.limit]:
            out.line(f"    {label} {qid}")
        if len(ids) > args.limit:
            out.line(f"    ... and {len(ids) - args.limit} more {label.lower()} (--json)")
    return 0


def _report(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """write a past run's JSON report, HTML report or Markdown summary again"""
    run = store.resolve(args.run)
    if not (args.report or args.html or args.markdown):
        raise CommandError("report: give at least one of --report, --html, --markdown")
    outputs = [("--report", args.report), ("--html", args.html), ("--markdown", args.markdown)]
    check_files(outputs, [("the history", history_file(args.url))])
    report = ReportDocument.from_json(store.load_report(run.run_id), f"run {run.run_id} of the history")
    written = write_outputs(report, OutputPaths(args.report, args.markdown, args.html))
    out.document = {
        "run_id": run.run_id,
        "written": [{"what": what, "path": str(path)} for what, path in written.written],
        "problems": written.problems,
    }
    for what, path in written.written:
        out.line(f"wrote the {what} of run {run.run_id}: {path}")
    for problem in written.problems:
        print(f"{PROG}: {problem}", file=sys.stderr)
    return 1 if written.problems else 0


def _import(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """record existing JSON reports (--graphrag-report files)"""
    provenance = RunProvenance(commit=args.commit, branch=args.branch)
    done: list[dict[str, Any]] = []

    def refused(path: Path, error: GraphragEvalError) -> None:
        _error(str(error))
        done.append({"report": str(path), "error": str(error)})

    readable: list[tuple[Path, Any, str]] = []
    for path in {path.resolve(): path for path in args.reports}.values():  # a file given twice: once
        try:
            readable.append((path, *_read_report(path)))
        except GraphragEvalError as error:
            refused(path, error)
    keys = _import_keys(readable, args.run_key)
    for path, report, _ in readable:
        try:
            recorded = store.record_run(
                report,
                run_key=keys[path],
                provenance=provenance,
                source=str(path),
                merge_shards=merge_shard_reports,
            )
        except GraphragEvalError as error:
            refused(path, error)
            continue
        done.append({"report": str(path), **asdict(recorded)})
        if recorded.complete:
            out.line(f"imported run {recorded.run_id} ({recorded.run_key}) from {path}")
        else:
            # What was recorded first, the path last: a line cut to the terminal's width loses the path.
            out.line(
                f"imported shard {recorded.shards_recorded} of {recorded.shards_expected} of run "
                f"{recorded.run_key}, waiting for the others, from {path}"
            )
    out.document = done
    return 2 if any("error" in entry for entry in done) else 0


def _import_keys(reports: Sequence[tuple[Path, Any, str]], given: str | None) -> dict[Path, str]:
    """Each report's run key, `import:` and its file's hash so a re-import is refused; the shards of one
    run given together share the hash of all their files, so they make one run."""
    groups: dict[str, list[tuple[Path, str]]] = {}
    for path, report, digest in reports:
        groups.setdefault(_shard_group(report) or f"file:{path}", []).append((path, digest))
    if given is not None and len(groups) > 1:
        raise CommandError(
            "import: --run-key names one run; import one report, or the shards of one run, with it"
        )
    keys = {}
    for members in groups.values():
        combined = hashlib.sha256("".join(sorted(digest for _, digest in members)).encode()).hexdigest()[:16]
        for path, _ in members:
            keys[path] = given or f"import:{combined}"
    return keys


def _shard_group(report: Any) -> str | None:
    """What the shards of one run share (None for a whole run's report, or one not readable as one)."""
    try:
        check_report(report, "report")
    except GraphragEvalError:
        return None
    metadata = report.get("metadata") or {}
    shard = metadata.get("shard")
    if not isinstance(shard, Mapping) or shard.get("count") in (None, 1):
        return None
    return json.dumps(
        [
            shard.get("count"),
            corpus_identity(metadata, report["results"]),
            metadata.get("settings"),
            metadata.get("responses"),
        ],
        sort_keys=True,
        default=str,
    )


def _read_report(path: Path) -> tuple[Any, str]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CommandError(f"{path}: cannot read it: {error.strerror or error}") from None
    try:
        report = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise CommandError(f"{path}: not a JSON report: {json_problem(error)}") from None
    return report, hashlib.sha256(data).hexdigest()[:16]


def _shards(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """shard sets waiting for the rest of their run; clear them"""
    if args.clear:
        cleared = store.clear_waiting(args.clear)
        out.document = {"cleared": cleared, "not_waiting": sorted(set(args.clear) - set(cleared))}
        for key in cleared:
            out.line(f"cleared the waiting shards of run {key}")
        for key in sorted(set(args.clear) - set(cleared)):
            out.line(f"no waiting shards of run {key}")
        return 0
    waiting = store.waiting_shards()
    out.document = [asdict(item) for item in waiting]
    if not waiting:
        out.line(f"no shards waiting in {store.display}")
        return 0
    out.line(f"{'shards':>7}  {'last recorded (UTC)':<19}  {'branch':<12}  {'commit':<8}  key")
    for item in waiting:
        out.line(
            f"{f'{len(item.indexes)}/{item.expected}':>7}  {_when(item.last_recorded_at):<19}  "
            f"{_cut(item.branch or '-', 12):<12}  {(item.commit or '-')[:8]:<8}  {item.run_key}"
        )
        missing = sorted(set(range(1, item.expected + 1)) - set(item.indexes))
        out.line(f"{'':>7}  missing shard(s) {', '.join(map(str, missing))}")
    out.line("clear one with: shards --clear KEY; all older than D days with: prune --waiting-days D")
    return 0


def _prune(store: HistoryStore, args: argparse.Namespace, out: _Output) -> int:
    """delete old runs (keeping the newest N per branch, or those newer than a date) and stale shards"""
    rule = retention_rule(
        keep=args.keep, newer_than=args.newer_than, branch=args.branch, waiting_days=args.waiting_days
    )
    before = store.size_bytes()
    result = store.prune(rule, dry_run=args.dry_run)
    after = store.size_bytes()
    out.document = {
        "dry_run": result.dry_run,
        "runs": list(result.runs),
        "waiting": list(result.waiting),
        "size_before": before,
        "size_after": after,
    }
    verb = "would delete" if result.dry_run else "deleted"
    out.line(f"{verb} {len(result.runs)} run(s) and {len(result.waiting)} waiting shard set(s)")
    if result.runs:
        shown = ", ".join(str(run_id) for run_id in result.runs[: args.limit])
        more = f" and {len(result.runs) - args.limit} more" if len(result.runs) > args.limit else ""
        out.line(f"  runs: {shown}{more}")
    for key in result.waiting:
        out.line(f"  waiting shards of run {key}")
    out.line(f"store: {before / 1e6:.1f} MB before, {after / 1e6:.1f} MB after")
    return 0


# helpers ---------------------------------------------------------------------------------------
def _suite(store: HistoryStore, args: argparse.Namespace) -> str | None:
    """The suite asked for, else the newest run's (of the branch): one suite's runs, never a mix."""
    if args.suite is not None:
        return str(args.suite)
    newest = store.runs(branch=args.branch, limit=1)
    return newest[0].suite if newest else None


def _summary_json(run: RunSummary) -> dict[str, Any]:
    data = asdict(run)
    data["micro_means"] = _micro_means(run.aggregates)
    del data["aggregates"]
    return data


def _micro_means(aggregates: Mapping[str, Any]) -> dict[str, float]:
    micro = aggregates.get("micro") or {}
    return {
        key: mean
        for key, stats in micro.items()
        if isinstance(stats, Mapping)
        and (mean := numeric_value(stats.get("mean"))) is not None
        and not key.endswith(("_tokens", "_cost", "_sec", "_count"))  # scores only
    }


def _count_outcomes(outcomes: Any) -> dict[str, int]:
    """Outcomes counted in the order of OUTCOME_CODES, any other after them."""
    counts = Counter(outcomes)
    return {name: counts.pop(name) for name in OUTCOME_CODES if name in counts} | dict(counts)


def _when(timestamp: str) -> str:
    return timestamp.replace("T", " ")[:16]


def _short(identity: str | None) -> str:
    return "-" if identity is None else identity.removeprefix("sha256:")[:12]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


MAX_LISTED = 1_000_000
"""The most runs or questions a listing takes (the bound catches a typo, as the plugin's do)."""
MAX_WAITING_DAYS = 36_500
"""A century: longer cannot be meant, and a date that many days back must still be a date."""


def _text(metavar: str) -> OptionSpec:
    """A command-only name (`--branch`, `--commit`), taken as given less surrounding blanks."""
    return OptionSpec("--text", "", metavar=metavar)


def _counted(default: int | None) -> OptionSpec:
    """A command-only count (`--limit`, `trend --last`, `prune --keep`)."""
    return OptionSpec("--n", "", metavar="N", parse=P.whole_number(1, MAX_LISTED), default=default)


_WAITING_DAYS = OptionSpec(
    "--days", "", metavar="D", parse=P.limit(float, "a number of days", MAX_WAITING_DAYS)
)
_RUN_KEYS = OptionSpec("--keys", "", action="extend", metavar="KEY", parse=P.texts, default=())
_BRANCH: Argument = ("--branch", _text("BRANCH"), "only this branch's runs")
_SUITE: Argument = ("--suite", _text("SUITE"), "this suite's runs (default: the newest run's suite)")


def _limit(default: int, help: str) -> Argument:
    return ("--limit", _counted(default), help)


# Each subcommand is named after its handler, which its docstring describes in `--help`.
_SUBCOMMANDS: dict[Callable[..., int], tuple[Argument, ...]] = {
    _list: (
        _BRANCH,
        _limit(20, "at most this many runs (default 20)"),
        ("--suite", _text("SUITE"), "only this suite's runs (its corpus paths, as `show` names it)"),
    ),
    _show: (
        ("run", None, "last, last-passed, a run id, a run key or a branch"),
        _limit(20, "failed questions shown (default 20)"),
    ),
    _flaky: (
        ("--last", "graphrag_flaky_runs", "over the last N runs (default 10, as --graphrag-flaky-runs)"),
        (
            "--min-flips",
            "graphrag_flaky_flips",
            "flipped at least K times (default 2, as --graphrag-flaky-flips)",
        ),
        _BRANCH,
        ("--no-same-commit", FLAG, "do not list questions only for passing and failing on one commit"),
        _limit(30, "questions shown (default 30)"),
        _SUITE,
    ),
    _trend: (
        ("metric", None, "e.g. steps_score.mean, macro:answer_f1.mean, template[ID]:steps_score, pass_rate"),
        ("--last", _counted(20), "over the last N runs (default 20)"),
        _BRANCH,
        (
            "--confidence",
            "graphrag_confidence",
            "of the slope's interval, in percent (default 95, as --graphrag-confidence)",
        ),
        _SUITE,
    ),
    _compare: (
        ("runs", None, None, {"nargs": 2, "metavar": "RUN"}),
        _limit(20, "questions listed per class (default 20)"),
    ),
    _report: (
        ("run", None, None),
        ("--report", "graphrag_report", "write the JSON report here"),
        ("--html", "graphrag_html", "write the HTML report here"),
        ("--markdown", "graphrag_markdown", "write the Markdown summary here"),
    ),
    _import: (
        ("reports", None, None, {"nargs": "+", "type": Path}),
        ("--branch", _text("BRANCH"), "the branch the reports were made on"),
        ("--commit", _text("SHA"), "the commit the reports were made on"),
        (
            "--run-key",
            "graphrag_history_run_key",
            "the run key (default: import: and the file's hash, so a re-import is refused; the shards "
            "of one run given together share one)",
        ),
    ),
    _shards: (("--clear", _RUN_KEYS, "delete these run keys' waiting shards"),),
    _prune: (
        (
            "--keep",
            _counted(None),
            "keep the newest N runs of each branch (delete a whole history by deleting its file)",
        ),
        ("--newer-than", _text("DATE"), "keep the runs started on or after DATE (UTC)"),
        ("--branch", _text("BRANCH"), "prune only this branch's runs"),
        (
            "--waiting-days",
            _WAITING_DAYS,
            "delete shard sets still waiting D days after their last shard came",
        ),
        ("--dry-run", FLAG, "say what would be deleted; delete nothing"),
        _limit(20, "run ids listed (default 20)"),
    ),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read a pytest-graphrag-eval run history (SQLite file or postgresql:// URL): runs, "
        "flaky questions, metric trends, past reports; import existing JSON reports.",
        epilog="A PostgreSQL password comes from PGPASSWORD (or the URL); it is never printed.",
    )
    parser.add_argument("url", help="the history: a file path, sqlite:///PATH or postgresql://USER@HOST/DB")
    commands = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for handler, arguments in _SUBCOMMANDS.items():
        sub = commands.add_parser(handler.__name__[1:], help=handler.__doc__, description=handler.__doc__)
        add_arguments(sub, (("--json", FLAG, "print JSON for scripts"), *arguments))
        sub.set_defaults(handler=handler)
    return parser


if __name__ == "__main__":
    sys.exit(main())
