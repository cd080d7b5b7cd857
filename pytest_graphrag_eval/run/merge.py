"""Merge the JSON reports of a sharded run into the report one unsharded run would have written,
through the plugin's own pipeline; mismatched, missing or overlapping shards are refused naming files."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.compare.baseline import read_report, report_from_bytes
from pytest_graphrag_eval.corpus.input_files import read_input_bytes
from pytest_graphrag_eval.errors import GraphragEvalError, InputError
from pytest_graphrag_eval.formats.json_types import JsonMapping
from pytest_graphrag_eval.gates.suite_gates import parse_gate
from pytest_graphrag_eval.report.judge_spend import merge_spend
from pytest_graphrag_eval.report_model import JudgeSpend, QuestionResult, ReportDocument
from pytest_graphrag_eval.run.pipeline import RunSettings, finish_run
from pytest_graphrag_eval.run.run_identity import Position, bytes_sha256, corpus_positions

# Metadata the report writer sets itself, and what only a shard records.
_WRITER_KEYS = frozenset(
    {"tool", "version", "python", "started_at", "duration_sec", "interrupted", "questions"}
)
_SHARD_KEYS = frozenset({"shard", "corpus_positions", "partial"})  # `partial`: a shard is part of a whole
# Settings every shard must share beyond `settings`, as they decide the results; the responses file
# is compared by content (`settings.responses`), since its path differs between checkouts.
_SHARED_KEYS = ("steps_scope", "judge", "judge_model")
# What says when a graph was used, and where this checkout had it: not part of which graph it was.
_GRAPH_CIRCUMSTANCES = frozenset({"used_at", "loaded_at", "checked_at", "at", "location"})
_SHOWN = 5


class MergeError(GraphragEvalError):
    """Shard reports that cannot make one run."""


@dataclass(frozen=True)
class ShardReport:
    """A shard's report, read and checked (`ReportDocument`), and where it came from (for messages)."""

    path: str
    document: ReportDocument

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self.document.metadata


@dataclass(frozen=True)
class MergedRun:
    """The merged results in corpus order and what the end-of-run pipeline needs to finish them."""

    results: list[QuestionResult]
    settings: RunSettings
    started: float
    finished: float
    interrupted: bool
    warnings: list[str]
    judge_spend: JudgeSpend | None = None
    plain_results: bool = False  # every shard's results are plain JSON values (`ReportDocument`)


def load_shard(path: str | Path) -> ShardReport:
    """A shard's JSON report, checked like a baseline (format, results, outcomes)."""
    shard = ShardReport(str(path), read_report(path, what="shard report"))
    for key in ("corpus_files", "settings"):
        if key not in shard.metadata:
            raise MergeError(
                f"{path}: the report's metadata has no `{key}`: it was written by a version of "
                "pytest-graphrag-eval without shard support; run the shards again with this version"
            )
    return shard


def merge_shards(
    shards: Sequence[ShardReport],
    *,
    baseline_path: str | None = None,
    history_baseline: tuple[JsonMapping, str] | None = None,
    history_baseline_required: bool = True,
) -> MergedRun:
    """Check that the shards make one run, and put their results together in corpus order.

    `baseline_path` overrides or supplies the baseline (the same file); shards compared with a history
    run need `history_baseline`, else they are an error or, when not required, merged without a comparison.
    """
    if not shards:
        raise MergeError("no shard reports given")
    _check_same(shards, "corpus_files", "were run on different corpora (or an edited corpus)")
    _check_same(
        shards,
        "settings",
        "were run with different settings",
        view=_settings_by_content,
        hint=" (settings.responses is the responses file's SHA-256: the shards replayed "
        "different recordings)",
    )
    _check_same(
        shards,
        "graph",
        "were run on different knowledge graphs (releases); run every shard on one graph",
        view=_graph_identity,
    )
    for key in _SHARED_KEYS:
        _check_same(shards, key, "were run with different settings")
    _check_shard_numbers(shards)
    first = shards[0].metadata
    files = first["corpus_files"]
    totals = [int(record["questions"]) for record in files]
    placed: dict[Position, tuple[str, QuestionResult | None]] = {}
    for shard in shards:
        held, unanswered = _positions(shard, totals)
        for position, result in [*held, *((position, None) for position in unanswered)]:
            if position in placed:
                raise MergeError(_duplicate_message(position, result, placed[position], shard.path, files))
            placed[position] = (shard.path, result)
    _check_complete(placed, totals, files)
    ordered = sorted(placed)
    results = [result for position in ordered if (result := placed[position][1]) is not None]
    answered = [position for position in ordered if placed[position][1] is not None]
    unanswered_positions = [position for position in ordered if placed[position][1] is None]
    metadata = {key: value for key, value in first.items() if key not in _WRITER_KEYS | _SHARD_KEYS}
    positions = corpus_positions(answered, unanswered_positions, sum(totals))
    if positions is not None:
        metadata["corpus_positions"] = positions
    starts = [_started(shard) for shard in shards]
    ends = [
        start + float(shard.metadata.get("duration_sec") or 0)
        for start, shard in zip(starts, shards, strict=True)
    ]
    return MergedRun(
        results=results,
        settings=_run_settings(
            first["settings"], metadata, baseline_path, history_baseline, history_baseline_required
        ),
        started=min(starts),
        finished=max(ends),
        interrupted=any(bool(shard.metadata.get("interrupted")) for shard in shards),
        warnings=list(dict.fromkeys(warning for shard in shards for warning in shard.document.warnings))
        + _unread_history_baseline(first["settings"], baseline_path, history_baseline),
        judge_spend=merge_spend(
            [shard.document.judge_spend for shard in shards], [result.record for result in results]
        ),
        plain_results=all(shard.document.plain_results for shard in shards),
    )


def _check_same(
    shards: Sequence[ShardReport],
    key: str,
    problem: str,
    *,
    view: Callable[[object], object] = lambda value: value,
    hint: str = "",
) -> None:
    """Refuse shards whose `metadata[key]` (as `view` sees it) differs from the first shard's."""
    first = shards[0]
    expected = view(first.metadata.get(key))
    for shard in shards[1:]:
        actual = view(shard.metadata.get(key))
        if actual != expected:
            detail = _difference(expected, actual)
            shown_hint = hint if detail.startswith(".responses") else ""
            raise MergeError(f"{first.path} and {shard.path} {problem}: {key}{detail}{shown_hint}")


def _settings_by_content(settings: object) -> object:
    """The settings with the baseline named by its content only (its path differs between checkouts)."""
    if not isinstance(settings, Mapping) or not isinstance(settings.get("baseline"), Mapping):
        return settings
    return {**settings, "baseline": {"sha256": settings["baseline"].get("sha256")}}


def _graph_identity(graph: object) -> object:
    """Which graph a shard ran on: its identity without when it was used or where this checkout had it."""
    if not isinstance(graph, Mapping):
        return graph
    return {key: value for key, value in graph.items() if key not in _GRAPH_CIRCUMSTANCES}


def _difference(left: object, right: object, where: str = "") -> str:
    """The first place two JSON values differ, as `.path: left != right`."""
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        for key in [*left, *(key for key in right if key not in left)]:
            if left.get(key) != right.get(key):
                return _difference(left.get(key), right.get(key), f"{where}.{key}")
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (one, other) in enumerate(zip(left, right, strict=True)):
            if one != other:
                return _difference(one, other, f"{where}[{index}]")
    return f"{where}: {left!r} != {right!r}"


def _check_shard_numbers(shards: Sequence[ShardReport]) -> None:
    """Shards that say `K/N` must all say the same N, each K once, every K from 1 to N."""
    numbered = [(shard, shard.metadata["shard"]) for shard in shards if shard.metadata.get("shard")]
    if not numbered:
        return
    counts = {int(spec["count"]) for _, spec in numbered}
    if len(counts) > 1:
        shown = ", ".join(
            f"{shard.path} is shard {spec['index']}/{spec['count']}" for shard, spec in numbered
        )
        raise MergeError(f"the reports come from different splits: {shown}")
    count = counts.pop()
    seen: dict[int, str] = {}
    for shard, spec in numbered:
        index = int(spec["index"])
        if index in seen:
            raise MergeError(
                f"shard {index}/{count} is given twice: {seen[index]} and {shard.path} "
                "(pass each shard's report once)"
            )
        seen[index] = shard.path
    missing = [index for index in range(1, count + 1) if index not in seen]
    if missing and len(numbered) == len(shards):
        names = ", ".join(f"{index}/{count}" for index in missing)
        raise MergeError(
            f"shard {names} {'is' if len(missing) == 1 else 'are'} missing: "
            f"got {len(seen)} of {count} shard reports ({', '.join(seen[index] for index in sorted(seen))})"
        )


def _positions(
    shard: ShardReport, totals: Sequence[int]
) -> tuple[list[tuple[Position, QuestionResult]], list[Position]]:
    """Each result with its corpus position, and the positions of selected questions without one."""
    results = shard.document.results
    recorded = shard.metadata.get("corpus_positions")
    if recorded is None:
        if len(results) != sum(totals):
            raise MergeError(
                f"{shard.path}: holds {len(results)} of the corpus's {sum(totals)} questions but "
                "records no `corpus_positions`; was it edited?"
            )
        implied = [(file, position) for file, total in enumerate(totals) for position in range(total)]
        return list(zip(implied, results, strict=True)), []
    try:
        positions = [_position(item, totals) for item in recorded["results"]]
        unanswered = [_position(item, totals) for item in recorded["unanswered"]]
    except (KeyError, TypeError, ValueError) as error:
        raise MergeError(f"{shard.path}: malformed metadata.corpus_positions ({error})") from None
    if len(positions) != len(results):
        raise MergeError(
            f"{shard.path}: metadata.corpus_positions has {len(positions)} positions for "
            f"{len(results)} results; was it edited?"
        )
    return list(zip(positions, results, strict=True)), unanswered


def _position(item: Any, totals: Sequence[int]) -> Position:
    file, position = (int(part) for part in item)
    if not (0 <= file < len(totals) and 0 <= position < totals[file]):
        raise ValueError(f"position {item} is outside the corpus")
    return file, position


def _duplicate_message(
    position: Position,
    result: QuestionResult | None,
    earlier: tuple[str, QuestionResult | None],
    path: str,
    files: Sequence[JsonMapping],
) -> str:
    known = result or earlier[1]
    what = (
        f"question {known.question_id!r}"
        if known is not None
        else f"question {position[1] + 1} of {files[position[0]]['file']}"
    )
    return (
        f"{what} is in two reports: {earlier[0]} and {path} (the same shard given twice, or shards of "
        "two different splits)"
    )


def _check_complete(
    placed: Mapping[Position, object], totals: Sequence[int], files: Sequence[Mapping[str, Any]]
) -> None:
    missing: dict[int, list[int]] = {}
    for file, total in enumerate(totals):
        for position in range(total):
            if (file, position) not in placed:
                missing.setdefault(file, []).append(position + 1)
    if not missing:
        return
    parts = []
    for file, numbers in missing.items():
        shown = ", ".join(str(number) for number in numbers[:_SHOWN]) + (
            ", ..." if len(numbers) > _SHOWN else ""
        )
        parts.append(f"{files[file]['file']}: {len(numbers)} (questions {shown})")
    raise MergeError(
        "questions of the corpus are in no report, so a shard is missing (or a shard run was "
        f"stopped or deselected questions): {'; '.join(parts)}"
    )


def _run_settings(
    recorded: Mapping[str, Any],
    metadata: Mapping[str, Any],
    baseline_path: str | None,
    history_baseline: tuple[JsonMapping, str] | None = None,
    history_baseline_required: bool = True,
) -> RunSettings:
    """The recorded settings, with the baseline read again (and checked to be the shards' own)."""
    record = recorded.get("baseline")
    history_ref = record.get("history") if isinstance(record, Mapping) else None
    baseline: ReportDocument | JsonMapping | None = None
    if history_baseline is not None or (history_ref and not baseline_path):
        if history_baseline is None and history_baseline_required:
            raise MergeError(
                f"the shards were compared with the run history:{history_ref} of the history: "
                "pass --history URL so the merge reads it"
            )
        baseline, baseline_path = history_baseline or (None, None)
    else:
        read_from = baseline_path or (record or {}).get("path")
        baseline = _read_baseline(str(read_from), record) if read_from is not None else None
        if read_from is not None and record is not None and baseline is None:
            raise MergeError(
                f"the shards were compared with the baseline {record.get('path')} ({record.get('sha256')}), "
                f"but {read_from} is {'not that file' if baseline_path else 'missing or changed'}; "
                "pass that file with --baseline"
            )
        if record is not None:  # the report names the baseline as the shards did, wherever it was found
            baseline_path = record.get("name") or record.get("path")
    return RunSettings(
        gates=[parse_gate(expression, source) for expression, source in recorded.get("gates", [])],
        metadata=metadata,
        baseline=baseline,
        baseline_path=baseline_path,
        confidence=float(recorded["confidence"]),
        resamples=int(recorded["resamples"]),
    )


def _read_baseline(path: str, record: Mapping[str, Any] | None) -> ReportDocument | None:
    """The baseline report at `path` (`--baseline`, else the one the shards recorded in `record`); None
    when it is missing or is not the file whose SHA-256 the shards recorded, whatever it holds."""
    try:
        data = read_input_bytes(path, what="baseline report")
    except InputError:
        if record is None or Path(path).is_file():
            raise  # unreadable or too large: its own message
        return None  # missing: the hash check's message says more
    if record is not None and bytes_sha256(data) != record.get("sha256"):
        return None
    return report_from_bytes(data, path)  # the very bytes hashed


def _unread_history_baseline(
    recorded: Mapping[str, Any],
    baseline_path: str | None,
    history_baseline: tuple[JsonMapping, str] | None,
) -> list[str]:
    """The warning of a merge that could not compare with the history run the shards were compared with."""
    record = recorded.get("baseline")
    ref = record.get("history") if isinstance(record, Mapping) else None
    if not ref or baseline_path or history_baseline is not None:
        return []
    return [
        f"the shards were compared with history:{ref}, which this merge did not read: the merged run has "
        "no comparison (graphrag-eval-merge --history URL compares it)"
    ]


def _started(shard: ShardReport) -> float:
    text = shard.metadata.get("started_at")
    try:
        return float(calendar.timegm(time.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        raise MergeError(f"{shard.path}: metadata.started_at is not a UTC time: {text!r}") from None


def merge_shard_reports(shards: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The run's report of shard reports the history kept (`history.store.ShardMerger`): merged and
    finished as `graphrag-eval-merge` does, without reading a history baseline."""
    merged = merge_shards(
        [ShardReport(source, ReportDocument.from_json(report, source)) for source, report in shards],
        history_baseline_required=False,
    )
    return finish_run(
        merged.results,
        merged.settings,
        started=merged.started,
        finished=merged.finished,
        interrupted=merged.interrupted,
        warnings=merged.warnings,
        judge_spend=merged.judge_spend,
    ).report


def shard_summary(shards: Iterable[ShardReport]) -> str:
    """`a.json (1/3), b.json (2/3)` for the merge's closing line."""
    return ", ".join(
        f"{shard.path} ({shard.metadata['shard']['index']}/{shard.metadata['shard']['count']})"
        if shard.metadata.get("shard")
        else shard.path
        for shard in shards
    )
