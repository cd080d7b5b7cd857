"""Parsing and checking of judge replies, which are untrusted too.

`InvalidReply`'s message is sent back to the judge on its one retry, so it says exactly what was
wrong. Values are never clamped: an out-of-range count means the judge did not follow the task.
"""

from __future__ import annotations

import json
import re

from pytest_graphrag_eval.errors import json_problem
from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.report_model import is_finite_number

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*)\n\s*```$", re.DOTALL)
_SHOWN_CHARS = 200


class InvalidReply(ValueError):
    """The judge's reply broke the output contract; the message says how."""


def parse_object(text: str) -> dict[str, JSONValue]:
    """The JSON object in `text` (a single ```json fence around it is tolerated)."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError) as error:
        raise InvalidReply(
            f"the reply is not valid JSON ({json_problem(error)}): {shorten(text)!r}"
        ) from None
    if not isinstance(data, dict):
        raise InvalidReply(f"the reply must be a JSON object, got {type(data).__name__}")
    return data


def require(data: dict[str, JSONValue], key: str) -> JSONValue:
    if key not in data:
        raise InvalidReply(f"the field {key!r} is missing")
    return data[key]


def integer_field(
    data: dict[str, JSONValue], key: str, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An integer field within [minimum, maximum]; 3.0 is accepted as 3, 2.5 and true are not."""
    value = require(data, key)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidReply(f"the field {key!r} must be an integer, got {shorten(json.dumps(value))}")
    _check_range(key, value, minimum, maximum)
    return value


def number_field(
    data: dict[str, JSONValue], key: str, minimum: float | None = None, maximum: float | None = None
) -> float:
    """A finite number field within [minimum, maximum]."""
    value = require(data, key)
    if not is_finite_number(value):
        raise InvalidReply(f"the field {key!r} must be a number, got {shorten(json.dumps(value))}")
    _check_range(key, value, minimum, maximum)
    return float(value)


def flag_field(data: dict[str, JSONValue], key: str) -> bool:
    """A yes/no field given as 0/1 or false/true."""
    value = require(data, key)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise InvalidReply(f"the field {key!r} must be 0 or 1, got {shorten(json.dumps(value))}")


def scalar_field(data: dict[str, JSONValue], key: str) -> float | int | bool | str:
    """Any JSON scalar (a finite number, true/false or a text), for untyped outputs."""
    value = require(data, key)
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or is_finite_number(value):
        return value
    raise InvalidReply(f"the field {key!r} must be a number or a text, got {shorten(json.dumps(value))}")


def text_field(data: dict[str, JSONValue], key: str) -> str:
    """A non-blank text field."""
    value = require(data, key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidReply(f"the field {key!r} must be a non-empty text, got {shorten(json.dumps(value))}")
    return value.strip()


def _check_range(key: str, value: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and value < minimum:
        raise InvalidReply(f"the field {key!r} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InvalidReply(f"the field {key!r} must be at most {maximum}, got {value}")


def shorten(text: str) -> str:
    """At most a couple of hundred characters of `text`, for error messages."""
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"
