"""What the history keeps of one JSON report: the run's row, its questions' rows and identities (SHA-256
of canonical JSON: "did the corpus / graph / responses / settings change" is an equality test). Pure
functions of the report, so a run recorded at a session's end and the report imported later are alike."""

from __future__ import annotations

import datetime
import hashlib
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pytest_graphrag_eval.compare.classify import passed as outcome_passed
from pytest_graphrag_eval.errors import HistoryError
from pytest_graphrag_eval.gates.expressions import numeric_value
from pytest_graphrag_eval.report.history_summary import OUTCOME_CODES
from pytest_graphrag_eval.report.json_report import json_bytes
from pytest_graphrag_eval.report_model import HUGE_INTEGER, huge_integer_key

OUTCOME_NAMES: dict[str, str] = {code: name for name, code in OUTCOME_CODES.items()}
ABSENT = "-"  # a question absent from a run
UNKNOWN = "?"
REPORT_ENCODING = "json+zlib"
_COMPRESSION = 3  # a 10,000-question report: 0.3 s to 2.2 MB; level 6 takes three times as long for 1.7 MB
# Settings that say where a baseline was, not how anything is scored: left out of the fingerprint.
_NOT_SCORE_SETTINGS = frozenset({"baseline", "responses"})  # responses: an identity of its own
_SETTINGS_KEYS = ("steps_scope", "judge", "judge_model")


class QuestionRow(NamedTuple):
    """One `run_questions` row but its run id, fields in column order."""

    position: int
    question_id: str
    template_id: str | None
    outcome: str
    passed: int | None  # 1 passed, 0 failed, None neither (skipped, xfailed, ...)
    attempts: str | None  # one outcome code per attempt, with agent repeats
    failure: str | None  # the failure lines, or the agent's error
    scores: str  # JSON object of every numeric result key (partial credit included)


@dataclass(frozen=True)
class RunRecord:
    """Everything stored about one run, ready for the SQL layer: `columns` is its `runs` row less the
    run key, the provenance and the time of recording."""

    columns: dict[str, object]
    question_ids: tuple[str, ...]
    rows: tuple[QuestionRow, ...]
    report_body: bytes

    @property
    def question_set(self) -> str:
        return str(self.columns["question_set"])


def fingerprint(value: object, *, sort_keys: bool = True) -> str:
    """`sha256:` of the canonical JSON of `value` (`sort_keys=False`: in the order given, faster)."""
    text = json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


def check_report(report: object, source: str) -> Mapping[str, Any]:
    """The report if it looks like one this package wrote; a HistoryError naming `source` if not."""
    if not isinstance(report, Mapping):
        raise HistoryError(f"{source}: not a pytest-graphrag-eval JSON report (not a JSON object)")
    results = report.get("results")
    if not isinstance(results, list):
        raise HistoryError(f"{source}: not a pytest-graphrag-eval JSON report (no `results` list)")
    metadata = report.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise HistoryError(f"{source}: field 'metadata' is not an object")
    if not isinstance(metadata.get("settings") or {}, Mapping):
        raise HistoryError(f"{source}: field 'metadata.settings' is not an object")
    aggregates = report.get("aggregates") or {}
    if not isinstance(aggregates, Mapping) or not all(
        isinstance(part, Mapping) for part in aggregates.values()
    ):
        raise HistoryError(
            f"{source}: field 'aggregates' must be an object of objects, as the plugin writes it"
        )
    if not results:
        raise HistoryError(f"{source}: field 'results' is empty: a report of no questions records no run")
    if not isinstance(metadata.get("started_at"), str) or not metadata["started_at"].strip():
        raise HistoryError(
            f"{source}: field 'metadata.started_at' is missing (a report written by the plugin says when "
            "its run started)"
        )
    try:
        datetime.datetime.fromisoformat(metadata["started_at"])
    except ValueError:
        raise HistoryError(
            f"{source}: field 'metadata.started_at' must be an ISO 8601 date-time such as "
            f"2026-01-31T09:30:00Z (runs are ordered by it), got {metadata['started_at'][:40]!r}"
        ) from None
    for index, result in enumerate(results):
        where = f"{source}: results[{index}]"
        if not isinstance(result, Mapping):
            raise HistoryError(f"{where} is not an object")
        if not isinstance(result.get("question_id"), str | int):
            raise HistoryError(f"{where}: field 'question_id' is missing")
        if not isinstance(result.get("outcome"), str):
            raise HistoryError(
                f"{where} (question {result['question_id']!r}): field 'outcome' is missing "
                "(a report written by the plugin records each question's verdict)"
            )
        if (huge := huge_integer_key(result)) is not None:
            raise HistoryError(
                f"{where} (question {result['question_id']!r}): field {huge!r} is {HUGE_INTEGER}"
            )
    return report


def _in_utc(started_at: str) -> str:
    """A start time with an offset, in UTC as the plugin writes it: runs are ordered by this text."""
    moment = datetime.datetime.fromisoformat(started_at)
    in_utc = moment.utcoffset() in (None, datetime.timedelta(0))
    return started_at if in_utc else moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_record(report: Mapping[str, Any]) -> RunRecord:
    """The stored form of a checked report."""
    metadata: Mapping[str, Any] = report.get("metadata") or {}
    results: Sequence[Mapping[str, Any]] = report["results"]
    ids = _question_ids(results)
    rows = tuple(
        _question_row(position, qid, result)
        for position, (qid, result) in enumerate(zip(ids, results, strict=True))
    )
    failed = sum(1 for row in rows if row.outcome == "failed")
    gates = [gate for gate in report.get("gates") or [] if isinstance(gate, Mapping)]
    failed_gates = [
        str(gate.get("gate") or gate.get("expression")) for gate in gates if not gate.get("passed")
    ]
    interrupted = bool(metadata.get("interrupted"))
    reasons = [
        *(["the run was interrupted"] if interrupted else []),
        *([f"{failed} question(s) failed"] if failed else []),
        *(f"gate failed: {gate}" for gate in failed_gates),
    ]
    settings = score_settings(metadata)
    identities = run_identities(metadata, results)
    identity = {key: metadata.get(key) for key in ("corpus_files", "graph", "responses")}
    columns: dict[str, object] = {
        "started_at": _in_utc(metadata["started_at"]),
        "duration_sec": numeric_value(metadata.get("duration_sec")),
        "tool_version": _text(metadata.get("version")),
        "corpus_identity": identities["corpus"],
        "graph_identity": identities["graph"],
        "responses_identity": identities["responses"],
        "settings_fingerprint": identities["settings"],
        "identity": _json({**identity, "settings": settings}),
        "suite": suite_of(metadata),
        "questions": len(results),
        "failed": failed,
        "passed": int(not reasons),
        "interrupted": int(interrupted),
        "failure_reason": "; ".join(reasons) or None,
        "aggregates": _json(report.get("aggregates") or {}),
        "gates": _json(gates),
        "question_set": fingerprint(ids),
        "outcome_codes": "".join(OUTCOME_CODES.get(row.outcome, UNKNOWN) for row in rows),
    }
    return RunRecord(columns, tuple(ids), rows, encode_report(report))


def score_settings(metadata: Mapping[str, object]) -> dict[str, object]:
    """The settings that decide scores (the baseline is not one of them)."""
    settings = metadata.get("settings") or {}
    assert isinstance(settings, Mapping), "check_report checked the metadata"
    return {
        **{key: value for key, value in settings.items() if key not in _NOT_SCORE_SETTINGS},
        **{key: metadata.get(key) for key in _SETTINGS_KEYS},
    }


def suite_of(metadata: Mapping[str, object]) -> str:
    """The suite a run belongs to: its corpus paths as configured (`metadata.corpus`), else its corpus
    files' names. A suite keeps its name when its questions are edited (the corpus identity changes,
    the suite does not), and two corpora sharing one history with the same question ids stay apart."""
    corpus = metadata.get("corpus")
    if isinstance(corpus, list) and corpus:
        return ", ".join(str(path) for path in corpus)
    files = metadata.get("corpus_files")
    if not isinstance(files, list):
        return ""
    return ", ".join(str(record.get("file")) for record in files if isinstance(record, Mapping))


LIVE = "live"


def run_inputs(
    corpus: str, graph: str | None, settings: str, responses_source: object, responses: str | None
) -> str:
    """What a run ran on besides the code: corpus, graph, settings, and its responses — a live agent
    (`responses_source` "live") is one input however it answers; a recording is its content
    (`responses`, the responses identity), so two recordings are two inputs even under one path.
    Only a pass and a fail under the same inputs say a question is flaky: a change of outcome that
    came with other responses is the responses' doing, never noise."""
    answered = LIVE if responses_source == LIVE else responses
    return fingerprint([corpus, graph, settings, answered])


def run_identities(
    metadata: Mapping[str, object], results: Sequence[Mapping[str, object]]
) -> dict[str, str | None]:
    """A run's identities as `record_run` will store them, known before the run is recorded."""
    return {
        "corpus": corpus_identity(metadata, results),
        "graph": graph_identity(metadata),
        "responses": responses_identity(results),
        "settings": fingerprint(score_settings(metadata)),
    }


def corpus_identity(metadata: Mapping[str, object], results: Sequence[Mapping[str, object]]) -> str:
    """The corpus files' SHA-256s in run order; a report without them, its questions' content hashes."""
    files = metadata.get("corpus_files")
    if isinstance(files, list) and files:
        return fingerprint(
            [[record.get("file"), record.get("sha256")] for record in files if isinstance(record, Mapping)]
        )
    return fingerprint(
        sorted([str(result.get("question_id")), str(result.get("content_hash"))] for result in results)
    )


def graph_identity(metadata: Mapping[str, object]) -> str | None:
    """The knowledge graph's identity (its files' hashes, or its endpoint), None without a graph."""
    graph = metadata.get("graph")
    if not isinstance(graph, Mapping):
        return None
    return fingerprint(
        {key: value for key, value in graph.items() if key not in ("loaded_at", "checked_at", "at")}
    )


def responses_identity(results: Sequence[Mapping[str, object]]) -> str:
    """What the agent answered: every question's answer and steps (each attempt's, with repeats)."""
    return fingerprint(
        [
            [
                str(result.get("question_id")),
                result.get("actual_answer"),
                result.get("actual_steps"),
                [
                    [attempt.get("actual_answer"), attempt.get("actual_steps")]
                    for attempt in _attempts(result)
                ],
            ]
            for result in results
        ],
        sort_keys=False,  # a recording keeps its keys in order; sorting megabytes of steps doubles the cost
    )


def encode_report(report: Mapping[str, object]) -> bytes:
    return zlib.compress(json_bytes(report), _COMPRESSION)


def decode_report(encoding: str, body: bytes) -> dict[str, Any]:
    if encoding != REPORT_ENCODING:
        raise HistoryError(f"a stored report has encoding {encoding!r}, which this version cannot read")
    report = json.loads(zlib.decompress(bytes(body)).decode("utf-8"))
    if not isinstance(report, dict):
        raise HistoryError("a stored report is not a JSON object")
    return report


def _question_ids(results: Sequence[Mapping[str, object]]) -> list[str]:
    """Question ids in report order; a repeated id (two corpus files) gets `#2`, `#3`."""
    seen: dict[str, int] = {}
    ids = []
    for result in results:
        qid = str(result["question_id"])
        seen[qid] = seen.get(qid, 0) + 1
        ids.append(qid if seen[qid] == 1 else f"{qid}#{seen[qid]}")
    return ids


def _question_row(position: int, qid: str, result: Mapping[str, object]) -> QuestionRow:
    outcome = str(result["outcome"])
    passed = outcome_passed(outcome)
    attempts = _attempts(result)
    failures = result.get("failures")
    failure_lines = [str(line) for line in failures] if isinstance(failures, list) else []
    if not failure_lines and result.get("status") == "error" and result.get("error"):
        failure_lines = [f"agent error: {result['error']}"]
    return QuestionRow(
        position=position,
        question_id=qid,
        template_id=_text(result.get("template_id")),
        outcome=outcome,
        passed=None if passed is None else int(passed),
        attempts="".join(OUTCOME_CODES.get(str(a.get("outcome")), UNKNOWN) for a in attempts) or None,
        failure="\n".join(failure_lines) or None,
        scores=_json(
            {
                key: value
                for key, value in result.items()
                if isinstance(value, int | float) and not isinstance(value, bool)
            }
        ),
    )


def _attempts(result: Mapping[str, object]) -> list[Mapping[str, object]]:
    attempts = result.get("attempts")
    return [item for item in attempts if isinstance(item, Mapping)] if isinstance(attempts, list) else []


# One encoder for every row: `json.dumps` with options builds a new one per call, which is most of
# the cost of encoding 10,000 small score objects.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def _json(value: object) -> str:
    """Compact JSON text (NaN kept as JSON's `NaN` token, which Python reads back)."""
    return _ENCODER.encode(value)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
