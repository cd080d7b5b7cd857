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
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE
from pytest_graphrag_eval.adapters.replay import trace_entries
from pytest_graphrag_eval.corpus.input_files import read_input_text
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")
NUMERIC_RESPONSE_KEYS = (*TOKEN_KEYS, "elapsed_sec")
STEP_STATUSES = ("success", "error")


def load_responses(
    path: str | Path, response_format: str = "auto", question_attribute: str = QUESTION_ID_ATTRIBUTE
) -> dict[str, dict[str, Any]]:
    """Read a JSON, JSON-list or JSONL response file into `{question_id: response}`.

    A recording of repeated agent runs holds several attempts per question; here only the first counts
    (`load_response_attempts` gives them all). Trace files (OTLP/JSON, JSONL of message lists) are
    converted by `adapters.replay`; `response_format` names the format instead of detecting it.
    """
    attempts = load_response_attempts(path, response_format, question_attribute)
    return {question_id: responses[0] for question_id, responses in attempts.items()}


def load_response_attempts(
    path: str | Path, response_format: str = "auto", question_attribute: str = QUESTION_ID_ATTRIBUTE
) -> dict[str, list[dict[str, Any]]]:
    """Read a response file into `{question_id: [response, ...]}`, attempts in `attempt` order.

    Two records of one question are a duplicate unless both carry distinct whole `attempt` numbers
    (what `--graphrag-record` writes with `--graphrag-agent-repeats`).
    """
    path = Path(path)
    text = read_input_text(path, error_type=ResponseError, what="response file")
    converted = trace_entries(text, str(path), response_format, question_attribute)
    entries = converted if converted is not None else _parse_entries(text, str(path))
    attempts: dict[str, dict[int | None, dict[str, Any]]] = {}
    for line, key, raw in entries:
        location = SourceLocation(str(path), line, question_id=key)
        question_id = _question_id(raw, key, location)
        where = SourceLocation(str(path), line, question_id=question_id)
        attempt = raw.get("attempt") if isinstance(raw, Mapping) else None
        if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1):
            raise ResponseError(f"must be a whole number from 1, got {attempt!r}", where, "attempt")
        recorded = attempts.setdefault(question_id, {})
        if attempt in recorded or (recorded and (attempt is None or None in recorded)):
            raise ResponseError(
                "duplicate response (several attempts of one question need distinct `attempt` numbers)",
                where,
                "question_id",
            )
        recorded[attempt] = validate_response(raw, where)
    return {
        question_id: [recorded[number] for number in sorted(recorded, key=lambda number: number or 0)]
        for question_id, recorded in attempts.items()
    }


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
        except RecursionError:
            raise ResponseError("invalid JSON: nested too deeply", SourceLocation(file)) from None
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
    # Split on newlines only: str.splitlines() also splits on U+2028 and friends, which JSON text may hold.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entries.append((number, None, json.loads(line)))
        except json.JSONDecodeError as error:
            raise ResponseError(f"invalid JSON line: {error.msg}", SourceLocation(file, number)) from None
        except RecursionError:
            raise ResponseError(
                "invalid JSON line: nested too deeply", SourceLocation(file, number)
            ) from None
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
        _check_number(response.get(key), key, location)
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


def _check_number(value: Any, key: str, location: SourceLocation) -> None:
    """Token counts are whole numbers >= 0, `elapsed_sec` a finite number >= 0 (they feed the aggregates)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResponseError(f"must be a number, got {value!r}", location, key)
    if not math.isfinite(value) or value < 0:
        raise ResponseError(f"must be a finite number >= 0, got {value!r}", location, key)
    if key in TOKEN_KEYS and value != int(value):
        raise ResponseError(f"must be a whole number, got {value!r}", location, key)


def actual_step_problems(steps: Any) -> list[str]:
    """What makes the agent's steps unscorable, naming each field; empty when they are fine.

    A step's `status` decides whether it can match at all, so a missing or
    unknown one (`ok`, `failed`) must not be read as a plain non-match or success.
    These make only that question's `steps_score_error`, not the whole file fail.
    """
    if not isinstance(steps, list):
        return []
    problems = []
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            continue
        status = step.get("status")
        field = f"actual_steps[{index}].status"
        if status is None:
            problems.append(f"{field} is missing (expected {' or '.join(STEP_STATUSES)})")
        elif status not in STEP_STATUSES:
            problems.append(f"{field} must be {' or '.join(STEP_STATUSES)}, got {status!r}")
    return problems
