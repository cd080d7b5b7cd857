"""The JSON report and the recording of live responses, written atomically.

Results arrive in completion order (and from several xdist workers); they are
kept with a sort key from their corpus position so the report is the same
however the run was scheduled.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

try:  # the `speed` extra: re-indents the C encoder's compact text (see `json_bytes`)
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - the core runs without it
    _msgspec = None  # type: ignore[assignment]

from pytest_graphrag_eval.forked_work import ForkedWork, forking_helps
from pytest_graphrag_eval.formats.atomic import (
    finish_atomic,
    temporary_beside,
    write_bytes_atomic,
    write_text_atomic,
)
from pytest_graphrag_eval.formats.plain_json import indented_plain
from pytest_graphrag_eval.formats.write_behind import write_behind
from pytest_graphrag_eval.gates.model import GateResult
from pytest_graphrag_eval.report_model import QuestionResult, ReportDocument


class ResultCollector:
    """Results and live responses keyed by their corpus order."""

    def __init__(self) -> None:
        self.results: dict[tuple[object, ...], dict[str, Any]] = {}
        self.responses: dict[tuple[object, ...], list[dict[str, Any]]] = {}

    def add(self, order: Sequence[object], result: dict[str, Any]) -> None:
        self.results[tuple(order)] = result

    def add_response(
        self, order: Sequence[object], responses: Mapping[str, Sequence[dict[str, Any]]]
    ) -> None:
        """One question's live responses: `{"responses": [...]}`, several with agent repeats."""
        self.responses[tuple(order)] = list(responses["responses"])

    def ordered_results(self) -> list[dict[str, Any]]:
        return [self.results[key] for key in sorted(self.results)]

    def ordered_responses(self) -> list[dict[str, Any]]:
        return [response for key in sorted(self.responses) for response in self.responses[key]]


def build_report(
    results: list[dict[str, Any]],
    aggregates: Mapping[str, object],
    gates: Sequence[GateResult],
    run_settings: Mapping[str, object],
    *,
    started: float,
    interrupted: bool,
    comparison: Mapping[str, object] | None = None,
    warnings: Sequence[str] = (),
    finished: float | None = None,
    judge_spend: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The report document as its JSON object (see `build_document`)."""
    return build_document(
        [QuestionResult.from_record(result) for result in results],
        aggregates,
        gates,
        run_settings,
        started=started,
        interrupted=interrupted,
        comparison=comparison,
        warnings=warnings,
        finished=finished,
        judge_spend=judge_spend,
    ).to_json()


def build_document(
    results: list[QuestionResult],
    aggregates: Mapping[str, object],
    gates: Sequence[GateResult],
    run_settings: Mapping[str, object],
    *,
    started: float,
    interrupted: bool,
    comparison: Mapping[str, object] | None = None,
    warnings: Sequence[str] = (),
    finished: float | None = None,
    judge_spend: Mapping[str, object] | None = None,
) -> ReportDocument:
    """The typed report: results, aggregates, gates and run metadata.

    `run_settings` is what the run was configured with (corpus, responses, judge...), as JSON values;
    `finished` defaults to now (a merge of shard reports gives the last shard's end).
    """
    return ReportDocument(
        results=results,
        aggregates=dict(aggregates),
        gates=[gate.to_dict() for gate in gates],
        metadata={
            "tool": "pytest-graphrag-eval",
            "version": _version(),
            "python": platform.python_version(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "duration_sec": round((time.time() if finished is None else finished) - started, 3),
            "interrupted": interrupted,
            "questions": len(results),
            **run_settings,
        },
        comparison=dict(comparison) if comparison is not None else None,
        warnings=list(warnings),
        judge_spend=dict(judge_spend) if judge_spend is not None else None,
    )


def write_json_atomic(path: Path, data: object, *, plain_keys: Collection[str] = ()) -> None:
    """Write JSON next to `path` and rename it into place, so readers never see half a file.

    `plain_keys`: keys of `data` (an object) whose values are plain JSON values (`formats.plain_json`).
    """
    if plain_keys and isinstance(data, Mapping) and data:
        write_bytes_atomic(path, [*indented_object_parts(data, plain_keys), b"\n"])
    else:
        write_bytes_atomic(path, [json_bytes(data, indent=2), b"\n"])


def indented_object_parts(data: Mapping[str, object], plain_keys: Collection[str]) -> list[bytes]:
    """`json_bytes(data, indent=2)` of a non-empty object in parts, the values of `plain_keys`
    written by orjson when it can.

    An object indented by two spaces is each member's own indented text, its lines indented once more.
    """
    return [b"{", *_member_parts(data.items(), plain_keys, first=True), b"\n}"]


def _member_parts(
    members: Iterable[tuple[str, object]], plain_keys: Collection[str], *, first: bool
) -> list[bytes]:
    """The parts of `indented_object_parts` for some of an object's members (`first`: they begin it)."""
    parts: list[bytes] = []
    for key, value in members:
        encoded = indented_plain(value) if key in plain_keys else None
        if encoded is None:
            encoded = json_bytes(value, indent=2)
        parts += (b"\n  " if first else b",\n  ", json_bytes(key), b": ")
        parts.append(encoded.replace(b"\n", b"\n  "))
        first = False
        del encoded  # one copy of a large member at a time
    return parts


class ReportWrittenAhead:
    """The JSON report's file begun by a second process (`forked_work`): its first members (the format
    version and the results, nearly all of its bytes) are written while this process computes the
    aggregates, the comparison and the gates that follow them. `finish` appends those and renames the
    file into place: the bytes `write_json_atomic` writes, in the same one rename.

    A context manager: leaving it without `finish` (an error first) stops the child and removes the file.
    """

    def __init__(
        self, path: Path, temporary: Path, head: list[tuple[str, object]], plain_keys: Collection[str]
    ):
        self.path = path
        self._temporary: Path | None = temporary
        self._head = head
        self._written = ForkedWork(partial(_write_head, temporary, head, plain_keys))

    @classmethod
    def start(
        cls, path: Path, head: Mapping[str, object], plain_keys: Collection[str]
    ) -> ReportWrittenAhead | None:
        """Begin the report at `path` with the members of `head`; None where no child can be forked,
        or no temporary file made (writing the report then says why)."""
        if not forking_helps():
            return None
        try:
            temporary = temporary_beside(path)
        except OSError:
            return None
        return cls(path, temporary, list(head.items()), plain_keys)

    def finish(self, report: Mapping[str, object], plain_keys: Collection[str]) -> None:
        """Write `report`, whose first members must be the very values begun with (else it is written
        whole, here)."""
        members = list(report.items())
        begun = members[: len(self._head)]
        temporary, self._temporary = self._temporary, None
        assert temporary is not None, "finish() is called once"
        if len(begun) < len(self._head) or not all(map(_same_member, self._head, begun)):
            self._stop(temporary)
            write_json_atomic(self.path, report, plain_keys=plain_keys)
            return
        try:
            self._written.result()  # the head is in the file: the child's, or written here if it failed
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        rest = _member_parts(members[len(begun) :], plain_keys, first=False)
        finish_atomic(temporary, self.path, [*rest, b"\n}", b"\n"], mode="ab")

    def _stop(self, temporary: Path) -> None:
        self._written.__exit__(None, None, None)
        temporary.unlink(missing_ok=True)

    def __enter__(self) -> ReportWrittenAhead:
        return self

    def __exit__(self, *exception: object) -> None:
        if self._temporary is not None:
            self._stop(self._temporary)
            self._temporary = None


def _same_member(begun: tuple[str, object], written: tuple[str, object]) -> bool:
    """The member written ahead is the report's: the same key, and the same value or the same items
    (the report's results list is a new list of the very records)."""
    (key, value), (other_key, other) = begun, written
    if key != other_key:
        return False
    if isinstance(value, list) and isinstance(other, list):
        return len(value) == len(other) and all(
            mine is theirs for mine, theirs in zip(value, other, strict=True)
        )
    return value is other or (
        type(value) is type(other) and value == other and not isinstance(value, (dict, list))
    )


_HEAD_CHUNK = 1_000  # results encoded while the ones before them are written to disk


def _write_head(temporary: Path, head: list[tuple[str, object]], plain_keys: Collection[str]) -> bool:
    # Each chunk is written and synced on a second thread while the next is encoded (`write_behind`):
    # the disk's work overlaps the encoding instead of following it. On disk before `finish`
    # appends: its own sync is then of the rest only.
    with open(temporary, "wb") as stream:  # from the start: done again here after a child that failed
        write_behind(_head_chunks(head, plain_keys), partial(_write_synced, stream))
    return True


def _write_synced(stream: BinaryIO, parts: Sequence[bytes | memoryview]) -> None:
    stream.writelines(parts)
    stream.flush()
    _sync_data(stream.fileno())


_sync_data = getattr(os, "fdatasync", os.fsync)  # the data and its size; fsync where that is all there is


def _head_chunks(
    head: list[tuple[str, object]], plain_keys: Collection[str]
) -> Iterator[list[bytes | memoryview]]:
    """The report's text up to the end of the head's last member, in chunks of parts.

    A head of plain members ending with a list (the results) is orjson's indented object, a chunk of
    the list at a time: each chunk, encoded as the last member of an object of its own, sits at the
    very indentation it has in the whole and is cut out of it (views: no copies of the text).
    Otherwise the head is one chunk.
    """
    *before, (last_key, last) = head
    plain = all(key in plain_keys for key, _ in head)
    if not (plain and isinstance(last, list) and last):
        whole = indented_plain(dict(head)) if plain else None
        yield (
            [memoryview(whole)[: -len(b"\n}")]]
            if whole is not None
            else [b"{", *_member_parts(head, plain_keys, first=True)]
        )
        return
    closing = len(b"\n  ]\n}")
    opening = len(b"{\n  " + json_bytes(last_key) + b": [")
    starts = range(0, len(last), _HEAD_CHUNK)
    for start in starts:
        members = dict(before) if start == 0 else {}
        members[last_key] = last[start : start + _HEAD_CHUNK]
        encoded = memoryview(indented_plain(members) or json_bytes(members, indent=2))
        parts: list[bytes | memoryview] = [b",", encoded[opening:-closing]] if start else [encoded[:-closing]]
        yield [*parts, b"\n  ]"] if start == starts[-1] else parts


def write_recording(path: Path, responses: Sequence[Mapping[str, object]]) -> None:
    """Live responses in the replay format: one JSON object per line (JSONL)."""
    write_text_atomic(path, "".join(json_text(response) + "\n" for response in responses))


def json_text(data: object, *, indent: int | None = None) -> str:
    """JSON with non-ASCII text kept readable, and any lone surrogate written as a `\\udXXX` escape.

    Agent answers are untrusted text: a lone surrogate (from a broken decoder)
    cannot be encoded as UTF-8 and would crash the write. Inside a JSON string the
    escape is valid JSON and reads back as the same text, so nothing is lost.
    """
    return json_bytes(data, indent=indent).decode("utf-8")


def json_bytes(data: object, *, indent: int | None = None) -> bytes:
    """`json_text` as the UTF-8 a file gets: a report of 100 MB is encoded once, not three times.

    An indented document is the standard library's compact text (its C encoder: the same numbers,
    escapes and `default=str`) re-indented by msgspec when the `speed` extra is installed, which
    gives the very bytes `json.dumps(indent=...)` writes in a quarter of the time; without msgspec,
    or for text msgspec will not read (a lone surrogate's escape, NaN), the standard library indents.
    """
    compact = json.dumps(data, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")
    if indent is None:
        return compact
    if _msgspec is not None:
        try:
            return bytes(_msgspec.json.format(compact, indent=indent))
        except _msgspec.DecodeError:
            pass
    return json.dumps(data, indent=indent, ensure_ascii=False, default=str).encode(
        "utf-8", "backslashreplace"
    )


def _version() -> str:
    try:
        return metadata.version("pytest-graphrag-eval")
    except metadata.PackageNotFoundError:
        return "unknown"
