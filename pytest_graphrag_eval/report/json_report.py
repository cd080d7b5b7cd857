"""The JSON report and the recording of live responses, written atomically, in corpus order however
the run was scheduled."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

try:  # the `speed` extra: re-indents the C encoder's compact text (see `json_bytes`)
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - the core runs without it
    _msgspec = None  # type: ignore[assignment]

from pytest_graphrag_eval import __version__
from pytest_graphrag_eval.formats.atomic import write_bytes_atomic, write_text_atomic
from pytest_graphrag_eval.formats.plain_json import indented_plain
from pytest_graphrag_eval.gates.model import GateResult
from pytest_graphrag_eval.report_model import (
    Aggregates,
    ComparisonSection,
    JudgeSpend,
    QuestionResult,
    ReportDocument,
)


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


def build_document(
    results: list[QuestionResult],
    aggregates: Mapping[str, object],
    gates: Sequence[GateResult],
    run_settings: Mapping[str, object],
    *,
    started: float,
    interrupted: bool,
    comparison: ComparisonSection | None = None,
    warnings: Sequence[str] = (),
    finished: float | None = None,
    judge_spend: JudgeSpend | None = None,
) -> ReportDocument:
    """The typed report; `finished` defaults to now (a merge gives the last shard's end)."""
    return ReportDocument(
        results=results,
        aggregates=Aggregates.of(aggregates),
        gates=[gate.record() for gate in gates],
        metadata={
            "tool": "pytest-graphrag-eval",
            "version": __version__,
            "python": platform.python_version(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "duration_sec": round((time.time() if finished is None else finished) - started, 3),
            "interrupted": interrupted,
            "questions": len(results),
            **run_settings,
        },
        comparison=comparison,
        warnings=list(warnings),
        judge_spend=judge_spend,
    )


def write_json_atomic(path: Path, data: object, *, plain_keys: Collection[str] = ()) -> None:
    """Write JSON next to `path` and rename it into place, so readers never see half a file;
    `plain_keys` name values that are plain JSON (`formats.plain_json`)."""
    if plain_keys and isinstance(data, Mapping) and data:
        write_bytes_atomic(path, [*indented_object_parts(data, plain_keys), b"\n"])
    else:
        write_bytes_atomic(path, [json_bytes(data, indent=2), b"\n"])


def indented_object_parts(data: Mapping[str, object], plain_keys: Collection[str]) -> list[bytes]:
    """`json_bytes(data, indent=2)` of a non-empty object in parts, the values of `plain_keys`
    written by orjson when it can: as the one member of `{key: value}`, cut out of its braces, so the
    results' bytes are not indented again in a second pass."""
    parts = [b"{"]
    for key, value in data.items():
        parts.append(b"\n" if len(parts) == 1 else b",\n")
        member = indented_plain({key: value}) if key in plain_keys else None
        if member is not None:  # b'{\n  "key": ...\n}'
            parts.append(member[2:-2])
        else:
            parts += (b"  ", json_bytes(key), b": ", json_bytes(value, indent=2).replace(b"\n", b"\n  "))
        del member  # one copy of a large member at a time
    parts.append(b"\n}")
    return parts


def write_recording(path: Path, responses: Sequence[Mapping[str, object]]) -> None:
    """Live responses in the replay format: one JSON object per line (JSONL)."""
    write_text_atomic(path, "".join(json_text(response) + "\n" for response in responses))


def json_text(data: object, *, indent: int | None = None) -> str:
    """JSON with non-ASCII text kept readable, and any lone surrogate of untrusted text written as a
    `\\udXXX` escape instead of crashing the write."""
    return json_bytes(data, indent=indent).decode("utf-8")


def json_bytes(data: object, *, indent: int | None = None) -> bytes:
    """`json_text` as UTF-8 bytes, encoded once: re-indented by msgspec when installed (the very bytes of
    `json.dumps(indent=...)`, in a quarter of the time), else by the standard library."""
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
