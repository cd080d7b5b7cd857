"""Agent responses: loading and validation of the seed's target format.

Accepted files: a JSON object keyed by question id, a JSON list of responses
each carrying `question_id`, or JSONL (one response per line). A response is
either the success shape (`actual_answer`, `actual_steps`, token counts,
`elapsed_sec`) or the error shape: any record with a non-null `error` (its
other keys are kept but not scored), or `status: error`. graphrag-eval 4.0
recordings name the agent's steps `steps`; they are read as `actual_steps`.
A step's `output` is the tool's raw output: text or any JSON value.

A malformed response raises `ResponseError` naming the file, line (JSONL or
list position), question id and field: a response file is machine-written, so
a broken one means the recording is broken and must not be half-used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.errors import ResponseError, SourceLocation

NUMERIC_RESPONSE_KEYS = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")


def load_responses(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a JSON, JSON-list or JSONL response file into `{question_id: response}`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ResponseError(
            f"cannot read response file: {error.strerror or error}", SourceLocation(str(path))
        ) from None
    entries = _parse_entries(text, str(path))
    responses: dict[str, dict[str, Any]] = {}
    for line, key, raw in entries:
        location = SourceLocation(str(path), line, question_id=key)
        question_id = _question_id(raw, key, location)
        if question_id in responses:
            raise ResponseError(
                "duplicate response", SourceLocation(str(path), line, question_id=question_id), "question_id"
            )
        responses[question_id] = validate_response(
            raw, SourceLocation(str(path), line, question_id=question_id)
        )
    return responses


def _parse_entries(text: str, file: str) -> list[tuple[int | None, str | None, Any]]:
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            if stripped[0] == "{" and "\n{" in text.strip():
                return _parse_jsonl(text, file)
            raise ResponseError(f"invalid JSON: {error.msg}", SourceLocation(file, error.lineno)) from None
        if isinstance(data, list):
            return [(None, None, item) for item in data]
        if isinstance(data, Mapping) and _is_single_response(data):
            return [(1, None, data)]
        return [(None, str(key), value) for key, value in data.items()]
    return _parse_jsonl(text, file)


def _is_single_response(data: Mapping[str, Any]) -> bool:
    """One response (a one-line JSONL file) rather than an object of responses keyed by id."""
    return "question_id" in data or not all(isinstance(value, Mapping) for value in data.values())


def _parse_jsonl(text: str, file: str) -> list[tuple[int | None, str | None, Any]]:
    entries: list[tuple[int | None, str | None, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((number, None, json.loads(line)))
        except json.JSONDecodeError as error:
            raise ResponseError(f"invalid JSON line: {error.msg}", SourceLocation(file, number)) from None
    return entries


def _question_id(raw: Any, key: str | None, location: SourceLocation) -> str:
    if not isinstance(raw, Mapping):
        raise ResponseError(f"a response must be an object, got {type(raw).__name__}", location)
    question_id = raw.get("question_id", key)
    if question_id is None:
        raise ResponseError("is missing", location, "question_id")
    if key is not None and "question_id" in raw and str(raw["question_id"]) != key:
        raise ResponseError(f"does not match its key {key!r}", location, "question_id")
    return str(question_id)


def validate_response(raw: Any, location: SourceLocation) -> dict[str, Any]:
    """Check one response's shape; return a shallow copy with `question_id` set."""
    if not isinstance(raw, Mapping):
        raise ResponseError(f"a response must be an object, got {type(raw).__name__}", location)
    response = dict(raw)
    if location.question_id is not None:
        response.setdefault("question_id", location.question_id)
    if "steps" in response:
        if "actual_steps" in response:
            raise ResponseError(
                "has both 'steps' (graphrag-eval 4.0 name) and 'actual_steps'; keep one", location, "steps"
            )
        response["actual_steps"] = response.pop("steps")
    if response.get("status") == "error" or response.get("error") is not None:
        error = response.get("error")
        if error is not None and not isinstance(error, str):
            response["error"] = json.dumps(error, ensure_ascii=False, default=str)  # e.g. {"code": 503}
        response["status"] = "error"
        return response
    answer = response.get("actual_answer")
    if answer is not None and not isinstance(answer, str):
        raise ResponseError("must be text", location, "actual_answer")
    for key in NUMERIC_RESPONSE_KEYS:
        value = response.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ResponseError("must be a number", location, key)
    steps = response.get("actual_steps")
    if steps is not None:
        _validate_steps(steps, location)
    return response


def _validate_steps(steps: Any, location: SourceLocation) -> None:
    if not isinstance(steps, list):
        raise ResponseError("must be a list of steps", location, "actual_steps")
    for index, step in enumerate(steps):
        field = f"actual_steps[{index}]"
        if not isinstance(step, Mapping):
            raise ResponseError("must be an object", location, field)
        if not isinstance(step.get("name"), str):
            raise ResponseError("is missing", location, f"{field}.name")
