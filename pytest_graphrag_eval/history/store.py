"""The run history: every run's report, verdicts and identities, in SQLite or PostgreSQL. A shard's report
waits in the store until all its run's shards are in; the last one merges them with the `merge_shards` its
recorder passes (the merge is the run layer's, above this one). Opening a store upgrades its schema; one
written by a newer version is refused."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from pytest_graphrag_eval.corpus.shards import MAX_SHARDS
from pytest_graphrag_eval.errors import GraphragEvalError, HistoryError
from pytest_graphrag_eval.formats.terminal_text import terminal_safe
from pytest_graphrag_eval.history.backends import Backend, describe_failure, open_backend
from pytest_graphrag_eval.history.locations import parse_location
from pytest_graphrag_eval.history.metrics import metric_value
from pytest_graphrag_eval.history.provenance import RunProvenance
from pytest_graphrag_eval.history.records import (
    ABSENT,
    REPORT_ENCODING,
    QuestionRow,
    RunRecord,
    check_report,
    decode_report,
    encode_report,
    run_inputs,
    run_record,
)
from pytest_graphrag_eval.history.retention import PruneResult, RetentionRule, RunId
from pytest_graphrag_eval.history.schema import LATEST_VERSION, MIGRATIONS, VERSION_TABLE

_SUMMARY_COLUMNS = (
    "run_id, run_key, started_at, recorded_at, duration_sec, commit_sha, branch, ci, ci_url, tool_version, "
    "corpus_identity, graph_identity, responses_identity, settings_fingerprint, questions, failed, passed, "
    "interrupted, failure_reason, aggregates, gates, identity, suite"
)
# RunSummary's fields, read from its columns (`identity` gives `inputs`)
_SUMMARY_FIELDS = _SUMMARY_COLUMNS.replace("commit_sha", "commit").split(", ")
_NEWEST_FIRST = "ORDER BY started_at DESC, run_id DESC"
IDENTITY_FIELDS = {
    "corpus": "corpus_identity",
    "graph": "graph_identity",
    "responses": "responses_identity",
    "settings": "settings_fingerprint",
}
"""Each identity a run is compared by, and the RunSummary field that holds it."""


ShardMerger = Callable[[Sequence[tuple[str, Mapping[str, Any]]]], dict[str, Any]]
"""Merges one run's shard reports, each with the name messages give it, into the run's report."""


@dataclass(frozen=True)
class RunSummary:
    """One recorded run as `list` shows it; `passed` is the run's exit verdict."""

    run_id: RunId
    run_key: str
    started_at: str
    recorded_at: str
    duration_sec: float | None
    commit: str | None
    branch: str | None
    ci: str | None
    ci_url: str | None
    tool_version: str | None
    corpus_identity: str
    graph_identity: str | None
    responses_identity: str
    settings_fingerprint: str
    questions: int
    failed: int
    passed: bool
    interrupted: bool
    failure_reason: str | None
    aggregates: dict[str, Any]
    gates: list[dict[str, Any]]
    # a run of the same commit and inputs that gives another outcome is noise, not a change
    inputs: str = ""
    suite: str | None = None  # the corpus paths it ran (`records.suite_of`); None if recorded before suites


@dataclass(frozen=True)
class RecordedRun:
    """What `record_run` did: the run's id, or for a shard how many of its run's shards are in."""

    run_key: str
    run_id: RunId | None
    shards_recorded: int = 1
    shards_expected: int = 1

    @property
    def complete(self) -> bool:
        return self.run_id is not None


@dataclass(frozen=True)
class RunRef:
    run_id: RunId
    run_key: str
    started_at: str
    commit: str | None
    branch: str | None
    inputs: str  # corpus, graph, settings and where responses came from (a file, or live), fingerprinted


@dataclass(frozen=True)
class OutcomeHistory:
    """Each question's outcomes over some runs, oldest first, as a strip of one code per run: 200 runs
    of 10,000 questions are 10,000 short strings."""

    runs: tuple[RunRef, ...]
    strips: dict[str, str]


@dataclass(frozen=True)
class MetricPoint:
    """One run's value of a metric (None when the run does not have it) and what it ran on."""

    run_id: RunId
    run_key: str
    started_at: str
    commit: str | None
    value: float | None
    corpus_identity: str
    graph_identity: str | None
    settings_fingerprint: str
    responses_identity: str


@dataclass(frozen=True)
class StoredQuestion:
    """One question of one run, from the run's question rows."""

    position: int
    question_id: str
    template_id: str | None
    outcome: str
    passed: bool | None
    attempts: str | None
    failure: str | None
    scores: dict[str, float]


def open_history(
    url: str, *, environ: Mapping[str, str] | None = None, create: bool = True, read_only: bool = False
) -> HistoryStore:
    """Open (and upgrade) the history at `url`; `read_only` lets a history on a read-only volume be read.
    Nothing is written to a store before it is known to be a history (or empty)."""
    location = parse_location(url, environ)
    if (create is False or read_only) and location.kind == "sqlite":
        assert location.path is not None
        if not location.path.exists():
            raise HistoryError(
                f"history {location.display}: no such file (record a run with --graphrag-history first)"
            )
    if read_only:
        with closing(open_backend(location, read_only=True)) as backend:
            version = _read_version(backend)
        if version is not None and version < LATEST_VERSION:
            open_history(url, environ=environ).close()  # upgraded first, then read as it now is
    backend = open_backend(location, read_only=read_only)
    try:
        if read_only:
            if _read_version(backend) is None:
                raise HistoryError(f"history {location.display}: holds no runs yet")
        else:
            _migrate(backend)
    except BaseException:
        backend.close()
        raise
    return HistoryStore(backend)


class HistoryStore:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    @property
    def display(self) -> str:
        """The store's URL without its password."""
        return self.backend.location.display

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # writing ---------------------------------------------------------------------------------
    def record_run(
        self,
        report: Mapping[str, Any],
        *,
        run_key: str | None = None,
        provenance: RunProvenance | None = None,
        source: str = "the run's report",
        merge_shards: ShardMerger | None = None,
    ) -> RecordedRun:
        """Record one run's report, or one shard's (refused without `merge_shards`)."""
        check_report(report, source)
        provenance = provenance or RunProvenance()
        shard = _shard_of(report, source)
        if shard is not None:
            key = run_key or provenance.ci_run_key
            if not key:
                raise HistoryError(
                    f"{source} is shard {shard[0]}/{shard[1]}: give every shard the same run key "
                    "(--graphrag-history-run-key, or run in GitHub Actions, GitLab CI or Jenkins), "
                    "or record the merged run with graphrag-eval-merge --history"
                )
            if merge_shards is None:
                raise HistoryError(
                    f"{source} is shard {shard[0]}/{shard[1]}: record shards through the plugin, "
                    "graphrag-eval-history import or graphrag-eval-merge --history, which merge them"
                )
            family = provenance.ci_run_family if key == provenance.ci_run_key else None
            return self._record_shard(report, key, shard, provenance, family, merge_shards)
        key = run_key or _new_run_key(report)
        record = run_record(report)
        with self._writing(f"run:{key}") as cursor:
            self._check_new_key(cursor, key)
            run_id = self._insert_run(cursor, key, record, provenance)
        return RecordedRun(key, run_id)

    def _record_shard(
        self,
        report: Mapping[str, object],
        key: str,
        shard: tuple[int, int],
        provenance: RunProvenance,
        family: str | None,
        merge_shards: ShardMerger,
    ) -> RecordedRun:
        index, count = shard
        body = encode_report(report)
        with self._writing(f"run:{family or key}") as cursor:
            self._check_new_key(cursor, key)
            if family is not None:
                _adopt_earlier_attempts(cursor, key, family, index, count)
            cursor.execute("SELECT shard_index, shard_count FROM pending_shards WHERE run_key = ?", (key,))
            waiting = {int(row[0]): int(row[1]) for row in cursor.fetchall()}
            if index in waiting:
                raise HistoryError(f"run key {key!r}: shard {index}/{count} is already recorded")
            if any(other != count for other in waiting.values()):
                raise HistoryError(
                    f"run key {key!r}: shard {index}/{count} does not belong with the shards recorded "
                    f"(they are of {sorted(set(waiting.values()))[0]})"
                )
            cursor.execute(
                "INSERT INTO pending_shards "
                "(run_key, shard_index, shard_count, recorded_at, provenance, report, run_family) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, index, count, _now(), json.dumps(asdict(provenance)), body, family),
            )
            if len(waiting) + 1 < count:
                return RecordedRun(key, None, len(waiting) + 1, count)
            merged = self._merge_shards(cursor, key, merge_shards)
            run_id = self._insert_run(cursor, key, run_record(merged), provenance)
            cursor.execute("DELETE FROM pending_shards WHERE run_key = ?", (key,))
        return RecordedRun(key, run_id, count, count)

    def _merge_shards(self, cursor: Any, key: str, merge_shards: ShardMerger) -> dict[str, Any]:
        cursor.execute(
            "SELECT shard_index, shard_count, report FROM pending_shards "
            "WHERE run_key = ? ORDER BY shard_index",
            (key,),
        )
        shards = [
            (f"shard {row[0]}/{row[1]} of run {key}", decode_report(REPORT_ENCODING, row[2]))
            for row in cursor.fetchall()
        ]
        try:
            return merge_shards(shards)
        except GraphragEvalError as error:
            raise HistoryError(f"run key {key!r}: the shards cannot be merged: {error}") from None
        except (KeyError, TypeError, ValueError) as error:  # a shard report edited or cut short
            raise HistoryError(
                f"run key {key!r}: the shards cannot be merged: a shard's metadata is incomplete ({error!r})"
            ) from None

    def _check_new_key(self, cursor: Any, key: str) -> None:
        cursor.execute("SELECT run_id, started_at FROM runs WHERE run_key = ?", (key,))
        row = cursor.fetchone()
        if row is not None:
            raise HistoryError(
                f"run key {key!r} is already recorded (run {row[0]}, started {row[1]}): "
                "a run key names one run; give a new one"
            )

    def _insert_run(self, cursor: Any, key: str, record: RunRecord, provenance: RunProvenance) -> RunId:
        cursor.execute(
            "INSERT INTO question_sets (question_set, question_ids) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (record.question_set, json.dumps(list(record.question_ids), ensure_ascii=False)),
        )
        row = {
            "run_key": key,
            "recorded_at": _now(),
            "commit_sha": provenance.commit,
            "branch": provenance.branch,
            "ci": provenance.ci,
            "ci_url": provenance.ci_url,
            **record.columns,
        }
        marks = ", ".join("?" for _ in row)
        run_id = self.backend.insert_id(
            cursor, f"INSERT INTO runs ({', '.join(row)}) VALUES ({marks})", tuple(row.values())
        )
        self.backend.insert_many(
            cursor, "run_questions", ("run_id", *QuestionRow._fields), ((run_id, *row) for row in record.rows)
        )
        cursor.execute(
            "INSERT INTO run_reports (run_id, encoding, body) VALUES (?, ?, ?)",
            (run_id, REPORT_ENCODING, record.report_body),
        )
        return run_id

    def _writing(self, lock: str) -> Any:
        return _translated(self.backend, self.backend.transaction(write=True, lock=lock))

    def _reading(self) -> Any:
        return _translated(self.backend, self.backend.transaction(write=False))

    # reading ---------------------------------------------------------------------------------
    def runs(
        self, *, branch: str | None = None, limit: int | None = None, suite: str | None = None
    ) -> list[RunSummary]:
        """Recorded runs, newest first (by start time), optionally of one branch and one suite."""
        where, params = _filters(branch, suite)
        sql = f"SELECT {_SUMMARY_COLUMNS} FROM runs{where} {_NEWEST_FIRST}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self._reading() as cursor:
            cursor.execute(sql, params)
            return [_summary(row) for row in cursor.fetchall()]

    def waiting_shards(self) -> list[WaitingShards]:
        """Run keys whose shards are not all in yet, oldest first."""
        with self._reading() as cursor:
            cursor.execute(
                "SELECT run_key, shard_index, shard_count, recorded_at, provenance FROM pending_shards "
                "ORDER BY run_key, shard_index"
            )
            rows = cursor.fetchall()
        waiting: dict[str, list[Any]] = {}
        for row in rows:
            waiting.setdefault(row[0], []).append(row)
        found = [
            WaitingShards(
                run_key=key,
                indexes=tuple(int(row[1]) for row in group),
                expected=int(group[0][2]),
                first_recorded_at=min(row[3] for row in group),
                last_recorded_at=max(row[3] for row in group),
                branch=json.loads(group[-1][4]).get("branch"),
                commit=json.loads(group[-1][4]).get("commit"),
            )
            for key, group in waiting.items()
        ]
        return sorted(found, key=lambda item: (item.last_recorded_at, item.run_key))

    def resolve(self, ref: str, *, suite: str | None = None) -> RunSummary:
        """`last`, `last-passed`, a run key, a run id (`12` or `#12`) or a branch (its newest run); with
        `suite`, the first two and a branch look at that suite's runs only."""
        text = ref.strip()
        with self._reading() as cursor:
            for sql, params, by_suite in _lookups(text):
                condition, extra = _suite_filter(suite) if by_suite else ("", ())
                cursor.execute(
                    f"SELECT {_SUMMARY_COLUMNS} FROM runs WHERE {sql}{condition} {_NEWEST_FIRST} LIMIT 1",
                    (*params, *extra),
                )
                row = cursor.fetchone()
                if row is not None:
                    return _summary(row)
        of_suite = f" of suite {terminal_safe(suite)!r}" if suite is not None else ""
        raise HistoryError(
            f"history {self.display}: no run {terminal_safe(ref)!r}{of_suite} (give last, last-passed, a run "
            "id or key from `graphrag-eval-history URL list`, or a branch name)"
        )

    def load_report(self, ref: RunId | str) -> dict[str, Any]:
        """The JSON report of a run, exactly as it was recorded."""
        run = self.resolve(str(ref))
        with self._reading() as cursor:
            cursor.execute("SELECT encoding, body FROM run_reports WHERE run_id = ?", (run.run_id,))
            row = cursor.fetchone()
        if row is None:
            raise HistoryError(f"history {self.display}: run {run.run_id} has no stored report")
        return decode_report(row[0], row[1])

    def question_results(self, ref: RunId | str) -> list[StoredQuestion]:
        """A run's questions in report order."""
        run = self.resolve(str(ref))
        with self._reading() as cursor:
            cursor.execute(
                f"SELECT {', '.join(QuestionRow._fields)} FROM run_questions "
                "WHERE run_id = ? ORDER BY position",
                (run.run_id,),
            )
            rows = cursor.fetchall()
        return [
            StoredQuestion(at, qid, template, outcome, _flag(passed), attempts, failure, json.loads(scores))
            for at, qid, template, outcome, passed, attempts, failure, scores in rows
        ]

    def question_outcomes(
        self, *, last_n: int, branch: str | None = None, suite: str | None = None
    ) -> OutcomeHistory:
        """Every question's outcome over the last `last_n` runs (of `branch`, `suite`), oldest run first."""
        where, params = _filters(branch, suite)
        with self._reading() as cursor:
            cursor.execute(
                "SELECT run_id, run_key, started_at, commit_sha, branch, question_set, outcome_codes, "
                "corpus_identity, graph_identity, settings_fingerprint, identity, responses_identity "
                f"FROM runs{where} {_NEWEST_FIRST} LIMIT {int(last_n)}",
                params,
            )
            rows = cursor.fetchall()[::-1]
            sets: dict[str, list[str]] = {}
            for question_set in dict.fromkeys(row[5] for row in rows):
                cursor.execute(
                    "SELECT question_ids FROM question_sets WHERE question_set = ?", (question_set,)
                )
                sets[question_set] = json.loads(cursor.fetchone()[0])
        runs = tuple(
            RunRef(
                int(row[0]), row[1], row[2], row[3], row[4], _inputs(row[7], row[8], row[9], row[10], row[11])
            )
            for row in rows
        )
        return OutcomeHistory(runs, _strips([(sets[row[5]], row[6]) for row in rows]))

    def metric_series(
        self, metric: str, *, last_n: int, branch: str | None = None, suite: str | None = None
    ) -> list[MetricPoint]:
        """A metric's value per run over the last `last_n` runs, oldest first (`history.metrics` grammar)."""
        where, params = _filters(branch, suite)
        with self._reading() as cursor:
            cursor.execute(
                "SELECT run_id, run_key, started_at, commit_sha, aggregates, outcome_codes, corpus_identity, "
                f"graph_identity, settings_fingerprint, responses_identity FROM runs{where} {_NEWEST_FIRST} "
                f"LIMIT {int(last_n)}",
                params,
            )
            rows = cursor.fetchall()[::-1]
        return [
            MetricPoint(
                row[0], row[1], row[2], row[3], metric_value(json.loads(row[4]), row[5], metric), *row[6:]
            )
            for row in rows
        ]

    def size_bytes(self) -> int:
        """What the store takes: the SQLite file with its WAL, or the history's PostgreSQL tables."""
        if self.backend.dialect == "sqlite":
            path = self.backend.location.path
            assert path is not None
            return sum(
                candidate.stat().st_size
                for candidate in (path, path.with_name(path.name + "-wal"))
                if candidate.exists()
            )
        with self._reading() as cursor:
            cursor.execute(
                "SELECT coalesce(sum(pg_total_relation_size(quote_ident(table_name))), 0) "
                "FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN "
                f"({', '.join('?' for _ in HISTORY_TABLES)})",
                HISTORY_TABLES,
            )
            return int(cursor.fetchone()[0])

    # retention -------------------------------------------------------------------------------
    def prune(self, rule: RetentionRule, *, dry_run: bool = False) -> PruneResult:
        """Delete the runs `rule` does not keep and the waiting shard sets it gives up on, chosen in the
        deleting transaction so that a run recorded meanwhile is never deleted unseen."""
        with self._writing("prune") as cursor:
            cursor.execute(f"SELECT run_id, branch, suite, started_at FROM runs {_NEWEST_FIRST}")
            doomed = rule.runs_to_delete(cursor.fetchall())
            stale: list[str] = []
            if rule.waiting_before is not None:
                cursor.execute(
                    "SELECT run_key FROM pending_shards GROUP BY run_key HAVING max(recorded_at) <= ?",
                    (rule.waiting_before,),
                )
                stale = sorted(row[0] for row in cursor.fetchall())
            if not dry_run:
                _delete_runs(cursor, doomed)
                _delete_waiting(cursor, stale)
        if doomed and not dry_run and self.backend.dialect == "sqlite":
            self._compact()
        return PruneResult(tuple(doomed), tuple(stale), dry_run)

    def clear_waiting(self, keys: Sequence[str]) -> list[str]:
        """Delete the waiting shards of these run keys; the keys that had some."""
        with self._writing("prune") as cursor:
            marks = ", ".join("?" for _ in keys)
            cursor.execute(
                f"SELECT DISTINCT run_key FROM pending_shards WHERE run_key IN ({marks})", tuple(keys)
            )
            found = sorted(row[0] for row in cursor.fetchall())
            _delete_waiting(cursor, found)
        return found

    def _compact(self) -> None:
        """Give deleted pages back to the disk, and empty the write-ahead log VACUUM wrote into."""
        try:
            self.backend.connection.execute("VACUUM")  # type: ignore[attr-defined]
            self.backend.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
        except sqlite3.Error as error:
            raise _history_error(self.backend, error) from None


HISTORY_TABLES = ("runs", "run_questions", "run_reports", "question_sets", "pending_shards", "schema_version")


@dataclass(frozen=True)
class WaitingShards:
    """The shards of one run key recorded so far, waiting for the rest."""

    run_key: str
    indexes: tuple[int, ...]
    expected: int
    first_recorded_at: str
    last_recorded_at: str
    branch: str | None
    commit: str | None


def _delete_runs(cursor: Any, run_ids: Sequence[RunId]) -> None:
    for start in range(0, len(run_ids), 500):
        chunk = tuple(run_ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        for table in ("run_questions", "run_reports", "runs"):
            cursor.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", chunk)
    if run_ids:
        cursor.execute("DELETE FROM question_sets WHERE question_set NOT IN (SELECT question_set FROM runs)")


def _delete_waiting(cursor: Any, keys: Sequence[str]) -> None:
    for key in keys:
        cursor.execute("DELETE FROM pending_shards WHERE run_key = ?", (key,))


def _adopt_earlier_attempts(cursor: Any, key: str, family: str, index: int, count: int) -> None:
    """A CI re-run of failed jobs runs only those shards, under a new run key: the shards its run's
    earlier attempts recorded join it, newest first."""
    cursor.execute("SELECT shard_index FROM pending_shards WHERE run_key = ?", (key,))
    have = {int(row[0]) for row in cursor.fetchall()} | {index}
    cursor.execute(
        "SELECT run_key, shard_index FROM pending_shards WHERE run_family = ? AND run_key <> ? "
        "AND shard_count = ? ORDER BY recorded_at DESC",
        (family, key, count),
    )
    for other_key, other_index in cursor.fetchall():
        if int(other_index) not in have:
            cursor.execute(
                "UPDATE pending_shards SET run_key = ? WHERE run_key = ? AND shard_index = ?",
                (key, other_key, other_index),
            )
            have.add(int(other_index))


def _inputs(corpus: str, graph: str | None, settings: str, identity: str, responses: str) -> str:
    return run_inputs(corpus, graph, settings, json.loads(identity).get("responses"), responses)


def _strips(runs: Sequence[tuple[list[str], str]]) -> dict[str, str]:
    """Per question, its outcome code in each run (`-` where absent), from each run's ids and codes."""
    if not runs:
        return {}
    first_ids = runs[0][0]
    if all(ids is first_ids or ids == first_ids for ids, _ in runs):
        columns: Iterable[Sequence[str]] = (codes for _, codes in runs)
        return dict(zip(first_ids, map("".join, zip(*columns, strict=True)), strict=True))
    union = list(dict.fromkeys(qid for ids, _ in runs for qid in ids))
    where = {qid: index for index, qid in enumerate(union)}
    aligned = []
    for ids, codes in runs:
        column = [ABSENT] * len(union)
        for qid, code in zip(ids, codes, strict=True):
            column[where[qid]] = code
        aligned.append(column)
    return dict(zip(union, map("".join, zip(*aligned, strict=True)), strict=True))


def _lookups(text: str) -> list[tuple[str, tuple[object, ...], bool]]:
    """(condition, parameters, whether a suite narrows it) for each reading of a run reference."""
    if text == "last":
        return [("1 = 1", (), True)]
    if text == "last-passed":
        return [("passed = 1", (), True)]
    lookups: list[tuple[str, tuple[object, ...], bool]] = [("run_key = ?", (text,), False)]
    digits = text[1:] if text.startswith("#") else text
    if digits.isdigit():
        lookups.append(("run_id = ?", (int(digits),), False))
    lookups.append(("branch = ?", (text,), True))
    return lookups


def _suite_filter(suite: str | None) -> tuple[str, tuple[object, ...]]:
    """A run of `suite`, or recorded before suites were (those match any)."""
    return (" AND (suite = ? OR suite IS NULL)", (suite,)) if suite is not None else ("", ())


def _filters(branch: str | None, suite: str | None) -> tuple[str, tuple[object, ...]]:
    condition, params = _suite_filter(suite)
    if branch is not None:
        condition, params = f" AND branch = ?{condition}", (branch, *params)
    return (f" WHERE {condition.removeprefix(' AND ')}", params) if condition else ("", ())


def _summary(row: Sequence[Any]) -> RunSummary:
    run = dict(zip(_SUMMARY_FIELDS, row, strict=True))
    identity = run.pop("identity")
    run.update(
        passed=bool(run["passed"]),
        interrupted=bool(run["interrupted"]),
        aggregates=json.loads(run["aggregates"]),
        gates=json.loads(run["gates"]),
        inputs=_inputs(
            run["corpus_identity"],
            run["graph_identity"],
            run["settings_fingerprint"],
            identity,
            run["responses_identity"],
        ),
    )
    return RunSummary(**run)


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


def _shard_of(report: Mapping[str, object], source: str) -> tuple[int, int] | None:
    shard = _metadata(report).get("shard")
    if not isinstance(shard, Mapping):
        return None
    index, count = shard.get("index"), shard.get("count")
    if type(index) is not int or type(count) is not int or not 1 <= index <= count <= MAX_SHARDS:
        raise HistoryError(
            f"{source}: field 'metadata.shard' must give whole numbers 1 <= index <= count <= {MAX_SHARDS}, "
            f"got index {index!r:.20}, count {count!r:.20}"
        )
    return (index, count) if count > 1 else None


def _new_run_key(report: Mapping[str, object]) -> str:
    started = str(_metadata(report).get("started_at") or _now())
    return f"{started.replace('-', '').replace(':', '')}-{uuid.uuid4().hex[:8]}"


def _metadata(report: Mapping[str, object]) -> Mapping[str, object]:
    metadata = report.get("metadata") or {}
    return metadata if isinstance(metadata, Mapping) else {}  # check_report refuses a non-object


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@contextmanager
def _translated(backend: Backend, transaction: Any) -> Iterator[Any]:
    """A backend transaction whose driver errors become HistoryErrors naming the store: any error
    beginning or ending it, a driver's error inside it."""
    inside = False
    try:
        with transaction as cursor:
            inside = True
            yield cursor
            inside = False
    except GraphragEvalError:
        raise
    except Exception as error:
        if (
            inside
            and not isinstance(error, sqlite3.Error)
            and not type(error).__module__.startswith("psycopg")
        ):
            raise
        raise _history_error(backend, error) from None


def _history_error(backend: Backend, error: BaseException) -> HistoryError:
    return HistoryError(describe_failure(backend.location, error, "use"))


def _migrate(backend: Backend) -> None:
    """Bring the store to the newest schema; refuse one that is not a history or is newer, unchanged."""
    version = _read_version(backend)
    backend.prepare_writes()
    if version == LATEST_VERSION:
        return
    with _translated(backend, backend.transaction(write=True, lock="schema")) as cursor:
        version = _version_in(backend, cursor)
        if version is None:
            cursor.execute(VERSION_TABLE)
            cursor.execute("INSERT INTO schema_version (version) VALUES (0)")
            version = 0
        for migration in MIGRATIONS:
            if migration.version > version:
                for statement in migration.statements(backend.dialect):
                    cursor.execute(statement)
                cursor.execute("UPDATE schema_version SET version = ?", (migration.version,))


def _read_version(backend: Backend) -> int | None:
    with _translated(backend, backend.transaction(write=False)) as cursor:
        return _version_in(backend, cursor)


def _version_in(backend: Backend, cursor: Any) -> int | None:
    """The schema version, None for an empty store; HistoryError for a foreign or newer one."""
    if backend.dialect == "sqlite":
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    else:
        cursor.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            f"AND table_name IN ({', '.join('?' for _ in HISTORY_TABLES)})",
            HISTORY_TABLES,
        )
    tables = {row[0] for row in cursor.fetchall()}
    if "schema_version" not in tables:
        if tables:
            raise HistoryError(
                f"history {backend.location.display}: not a pytest-graphrag-eval history "
                f"(it has other tables: {', '.join(sorted(tables)[:5])})"
            )
        return None
    cursor.execute("SELECT version FROM schema_version")
    row = cursor.fetchone()
    version = int(row[0]) if row is not None else 0
    if version > LATEST_VERSION:
        raise HistoryError(
            f"history {backend.location.display}: written by a newer pytest-graphrag-eval (schema version "
            f"{version}; this version reads up to {LATEST_VERSION}): upgrade pytest-graphrag-eval to use it"
        )
    return version
