"""One road for every agent response (file, memory, live hook): the same checks, normalisation and
`ResponseError` naming the source, question and field, so nothing downstream validates again.

A step's `status` is checked only when its question's steps are scored (`actual_step_problems`),
so a bad one spoils that question alone.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.errors import ResponseError, SourceLocation
from pytest_graphrag_eval.report_model import HUGE_INTEGER, is_finite_number, is_huge_integer

TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")
NUMERIC_RESPONSE_KEYS = (*TOKEN_KEYS, "elapsed_sec")
RESPONSE_STATUSES = ("success", "error")
STEP_STATUSES = ("success", "error")
# Keys only a response has (not a question id): an object holding one of them is one response.
RESPONSE_KEYS = frozenset(
    {"question_id", "actual_answer", "actual_steps", "steps", "status", "error", "attempt"}
).union(NUMERIC_RESPONSE_KEYS)
IN_MEMORY = "in-memory responses"
_FLOAT_MAX = sys.float_info.max

# Where a response came from, the id it was filed under (a dict key; None in a list), the raw response.
Entry = tuple[SourceLocation, str | None, object]


class ResponseRecord(dict[str, Any]):
    """One validated, normalised response: a dict, as graphrag-eval code expects, plus its question id,
    attempt and source (for later per-question errors)."""

    __slots__ = ("attempt", "question_id", "source")  # no attribute dict per response

    def __init__(self, fields: Mapping[str, Any], source: SourceLocation, attempt: int | None = None):
        super().__init__(fields)
        self.question_id = str(fields["question_id"])
        self.source = source
        self.attempt = attempt

    @property
    def is_error(self) -> bool:
        """The agent reported an error: nothing of this response is scored."""
        return self.get("status") == "error"


def normalise_response(raw: object, location: SourceLocation, *, filed_as: str = "its key") -> ResponseRecord:
    """Check one response's shape and return it normalised, or raise a `ResponseError` at `location`.

    A `question_id` differing from `location.question_id` is an error; a `ResponseRecord` is checked
    again, as it may have been edited."""
    if not (type(raw) is dict or type(raw) is ResponseRecord or isinstance(raw, Mapping)):  # ABCs are slow
        raise ResponseError(_not_an_object(raw), location)
    given = raw.get("question_id")
    if given is not None and location.question_id is not None and str(given) != location.question_id:
        raise ResponseError(f"does not match {filed_as} {location.question_id!r}", location, "question_id")
    question_id = location.question_id if given is None else str(given)
    if question_id is None:
        raise ResponseError("is missing", location, "question_id")
    # Records loaded from a file already name their question: no new location to build.
    where = location if location.question_id == question_id else location.for_question(question_id)
    if (
        type(raw) is ResponseRecord
        and raw.source is where
        and given is question_id
        and raw.question_id == question_id
        and _still_normal(raw)
    ):
        return raw  # checked again above and in `_still_normal`: nothing to normalise, no copy needed
    response = {**raw, "question_id": question_id}
    attempt = _attempt(response.get("attempt"), where)
    if "steps" in response:
        if "actual_steps" in response:
            raise ResponseError(
                "has both 'steps' (graphrag-eval 4.0 name) and 'actual_steps'; keep one", where, "steps"
            )
        response["actual_steps"] = response.pop("steps")
    status = response.get("status")
    if status == "error" or response.get("error") is not None:
        error = response.get("error")
        if error is not None and not isinstance(error, str):
            response["error"] = json.dumps(error, ensure_ascii=False, default=str)  # e.g. {"code": 503}
        response["status"] = "error"
        return ResponseRecord(response, where, attempt)
    if status is not None and status not in RESPONSE_STATUSES:
        raise ResponseError(
            f"must be success or error, got {status!r} (a failed run is `status: error` with the reason "
            "in `error`)",
            where,
            "status",
        )
    _check_success_fields(response, where)
    return ResponseRecord(response, where, attempt)


def _still_normal(record: ResponseRecord) -> bool:
    """Whether `normalise_response` would return `record` unchanged (raising what it raises); False
    leaves the record to the full path."""
    where = record.source
    if "steps" in record or _attempt(record.get("attempt"), where) != record.attempt:
        return False
    status = record.get("status")
    error = record.get("error")
    if status == "error" or error is not None:
        return status == "error" and (error is None or isinstance(error, str))
    if status is not None and status not in RESPONSE_STATUSES:
        return False  # the full path says what is wrong
    _check_success_fields(record, where)
    return True


def _check_success_fields(response: Mapping[str, Any], where: SourceLocation) -> None:
    """The fields of a success response: answer text, numbers and steps; raises `ResponseError`."""
    answer = response.get("actual_answer")
    if answer is not None and not isinstance(answer, str):
        raise ResponseError("must be text", where, "actual_answer")
    for key in NUMERIC_RESPONSE_KEYS:
        value = response.get(key)
        if value is not None and not (  # a whole number, or a time in seconds, from 0 to a float's range
            (type(value) is int or (type(value) is float and key == "elapsed_sec"))
            and 0 <= value <= _FLOAT_MAX
        ):
            _check_number(value, key, where)
    steps = response.get("actual_steps")
    if steps is not None:
        _check_steps(steps, where)


def collect_attempts(entries: Iterable[Entry]) -> dict[str, list[ResponseRecord]]:
    """Normalise every entry into `{question_id: [record, ...]}`, attempts in `attempt` order; two
    responses to one question are a duplicate unless their `attempt` numbers differ."""
    first: dict[str, ResponseRecord] = {}
    # A question's attempts by number, made only for a question with more than one response.
    several: dict[str, dict[int | None, ResponseRecord]] = {}
    for location, key, raw in entries:
        filed = location if key is None or key == location.question_id else location.for_question(key)
        record = normalise_response(raw, filed)
        earlier = first.setdefault(record.question_id, record)
        if earlier is record:
            continue
        recorded = several.setdefault(record.question_id, {earlier.attempt: earlier})
        if record.attempt in recorded or record.attempt is None or None in recorded:
            raise ResponseError(
                "duplicate response (several attempts of one question need distinct `attempt` numbers)",
                record.source,
                "question_id",
            )
        recorded[record.attempt] = record
    return {
        question_id: [record]
        if question_id not in several
        else [several[question_id][number] for number in sorted(several[question_id], key=lambda n: n or 0)]
        for question_id, record in first.items()
    }


def responses_from_memory(data: object, origin: str = IN_MEMORY) -> dict[str, list[ResponseRecord]]:
    """The library's in-memory responses (keyed by question id, a list with `question_id`s, or one
    response), through the same checks as a file's."""
    if isinstance(data, Mapping):
        if is_one_response(data):
            return collect_attempts([(_where(data, origin), None, data)])
        return collect_attempts(
            (_where(value, where), str(key), value)
            for key, attempts in data.items()
            for where, value in _keyed_attempts(key, attempts, origin)
        )
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes, bytearray)):
        return collect_attempts(
            (_where(value, origin, index), None, value) for index, value in enumerate(data)
        )
    hint = "; to read a responses file, call load_responses(path)" if isinstance(data, (str, bytes)) else ""
    raise ResponseError(
        f"must be a dict keyed by question id or a list of responses, got {type(data).__name__}{hint}",
        SourceLocation(origin=origin),
    )


def _keyed_attempts(key: object, value: object, origin: str) -> list[tuple[str, object]]:
    """One question's responses in a dict keyed by question id: one response, or a list of its attempts
    (what `load_response_attempts` returns), numbered by position unless they carry `attempt`."""
    if not isinstance(value, list):
        return [(origin, value)]
    return [
        (
            f"{origin}[{key!r}][{index}]",
            {**attempt, "attempt": index + 1}
            if isinstance(attempt, Mapping) and attempt.get("attempt") is None and len(value) > 1
            else attempt,
        )
        for index, attempt in enumerate(value)
    ]


def is_one_response(data: Mapping[object, object]) -> bool:
    """One response rather than responses keyed by question id; a key that is both (a question named
    `status`) is an id when its value is an object."""
    return any(key in RESPONSE_KEYS and not isinstance(value, Mapping) for key, value in data.items())


def _where(value: object, origin: str, index: int | None = None) -> SourceLocation:
    """A record loaded from a file keeps its file and line; anything else is located by `origin` (and
    its `index` in a list), a location made only then: records of a file need none."""
    if isinstance(value, ResponseRecord):
        return value.source
    return SourceLocation(origin=origin if index is None else f"{origin}[{index}]")


def _not_an_object(raw: object) -> str:
    if isinstance(raw, str):
        return (
            "a response must be an object, got text; an answer alone is written "
            '{"actual_answer": "..."} (see the responses format)'
        )
    return f"a response must be an object, got {type(raw).__name__}"


def _attempt(value: object, location: SourceLocation) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ResponseError(f"must be a whole number from 1, got {value!r}", location, "attempt")
    return value


def _check_steps(steps: object, location: SourceLocation) -> None:
    if not isinstance(steps, list):
        raise ResponseError("must be a list of steps", location, "actual_steps")
    for index, step in enumerate(steps):
        if type(step) is dict and type(step.get("name")) is str:
            continue  # the common case, decided without an abstract-class check or a field name
        field = f"actual_steps[{index}]"
        if not isinstance(step, Mapping):
            raise ResponseError("must be an object", location, field)
        if not isinstance(step.get("name"), str):
            raise ResponseError("is missing", location, f"{field}.name")


def _check_number(value: object, key: str, location: SourceLocation) -> None:
    """Token counts are whole numbers >= 0, `elapsed_sec` a finite number >= 0 (they feed the aggregates)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResponseError(f"must be a number, got {value!r}", location, key)
    if not is_finite_number(value) or value < 0:
        shown = HUGE_INTEGER if is_huge_integer(value) else repr(value)
        raise ResponseError(f"must be a finite number >= 0, got {shown}", location, key)
    if key in TOKEN_KEYS and value != int(value):
        raise ResponseError(f"must be a whole number, got {value!r}", location, key)


def actual_step_problems(steps: object, source: SourceLocation | None = None) -> list[str]:
    """What makes the agent's steps unscorable (naming source and field), empty if none: a missing or
    unknown step `status` must not pass for a non-match or a success."""
    if not isinstance(steps, list):
        return []
    where = source or SourceLocation()
    problems = []
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            continue
        status = step.get("status")
        field = f"actual_steps[{index}].status"
        if status is None:
            problems.append(f"{where.describe(field)}: is missing (expected {' or '.join(STEP_STATUSES)})")
        elif status not in STEP_STATUSES:
            problems.append(f"{where.describe(field)}: must be {' or '.join(STEP_STATUSES)}, got {status!r}")
    return problems
