"""Time-series tool steps (`retrieve_time_series`, `retrieve_data_points`), judged on their
arguments with graphrag-eval 6.x semantics (docs/steps.md), since the data returned changes
between runs. Unreadable arguments score 0; nothing here raises on agent output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

TIME_TOLERANCE_SECONDS = 60
_RELATIVE_TIME = re.compile(r"(?:(\d+)([smhdw])-(ago|ahead)|now)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_GRANULARITY = re.compile(r"(\d+)([a-zA-Z]+)")
_GRANULARITY_UNITS = {
    "s": "seconds",
    "second": "seconds",
    "m": "minutes",
    "minute": "minutes",
    "h": "hours",
    "hour": "hours",
    "d": "days",
    "day": "days",
    "w": "weeks",
    "week": "weeks",
    "mo": "months",
    "month": "months",
    "q": "quarters",
    "quarter": "quarters",
    "y": "years",
    "year": "years",
}


def time_series_score(reference_step: Mapping[str, object], actual_step: Mapping[str, object]) -> float:
    """1.0 when a `retrieve_time_series` call asked for the reference's series and limit."""
    return float(not wrong_arguments(reference_step, actual_step))


def data_points_score(reference_step: Mapping[str, object], actual_step: Mapping[str, object]) -> float:
    """1.0 when a `retrieve_data_points` call has the reference's arguments (see the module docstring)."""
    return float(not wrong_arguments(reference_step, actual_step))


def wrong_arguments(reference_step: Mapping[str, object], actual_step: Mapping[str, object]) -> list[str]:
    """The reference arguments an actual call got wrong, as `field: expected X, got Y` lines; empty
    exactly when the step matches."""
    expected, actual = reference_step["args"], actual_step.get("args")
    assert isinstance(expected, Mapping), "reference_step_problem refuses a time-series step without args"
    if not isinstance(actual, Mapping):
        return ["args: the call has none"]
    if reference_step.get("name") == "retrieve_time_series":
        fields = _wrong_time_series_fields(expected, actual)
    else:
        anchor = _anchor(actual_step.get("execution_timestamp"))
        agree: dict[str, Callable[[object, object], bool]] = {
            "external_id": lambda a, b: "external_id" in actual and _id_set(a) == _id_set(b),
            "granularity": lambda a, b: _granularity(a) == _granularity(b),
            "aggregates": lambda a, b: _id_set(a) == _id_set(b),
            "start": lambda a, b: times_agree(a, b, anchor),
            "end": lambda a, b: times_agree(a, b, anchor),
            "limit": lambda a, b: a == b,
        }
        fields = [name for name, same in agree.items() if not same(expected.get(name), actual.get(name))]
    return [f"{name}: expected {expected.get(name)!r}, got {actual.get(name)!r}" for name in fields]


def _wrong_time_series_fields(expected: Mapping[str, object], actual: Mapping[str, object]) -> list[str]:
    if not expected.get("mrid"):
        wrong = ["mrid"] if actual.get("mrid") is not None else []
        return wrong + (["limit"] if expected.get("limit") != actual.get("limit") else [])
    wrong = ["mrid"] if _id_set(expected["mrid"]) != _id_set(actual.get("mrid")) else []
    if expected.get("limit") and expected["limit"] != actual.get("limit"):
        wrong.append("limit")
    return wrong


def times_agree(reference: object, actual: object, anchor: datetime | None) -> bool:
    """Whether an actual start/end time satisfies the reference one; without an anchor, a relative
    time equals only the same text."""
    if reference is None or actual is None:
        return reference is None and actual is None
    reference_relative, actual_relative = _is_relative(reference), _is_relative(actual)
    if actual_relative and not reference_relative:
        return False
    expected, got = _instant(reference, anchor), _instant(actual, anchor)
    if isinstance(expected, datetime) and isinstance(got, datetime):
        if reference_relative and not actual_relative:
            return abs((expected - got).total_seconds()) <= TIME_TOLERANCE_SECONDS
        return expected == got
    return bool(expected == got)


def _is_relative(value: object) -> bool:
    return isinstance(value, str) and _RELATIVE_TIME.fullmatch(value) is not None


def _instant(value: object, anchor: datetime | None) -> object:
    """A datetime in UTC for relative or ISO 8601 text; anything else is returned as it is."""
    if not isinstance(value, str):
        return value
    relative = _RELATIVE_TIME.fullmatch(value)
    if relative is not None:
        if anchor is None:
            return value
        if value == "now":
            return anchor
        amount, unit, direction = relative.groups()
        try:
            offset = timedelta(seconds=int(amount) * _UNIT_SECONDS[unit])
            return anchor + offset if direction == "ahead" else anchor - offset
        except OverflowError:  # e.g. 99999999w-ago: outside the calendar, so it equals no instant
            return value
    return _parse_iso(value) or value


def _anchor(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return _as_utc(value)
    return _parse_iso(value) if isinstance(value, str) else None


def _parse_iso(text: str) -> datetime | None:
    try:
        return _as_utc(datetime.fromisoformat(text))
    except ValueError:
        return None


def _as_utc(moment: datetime) -> datetime:
    """Naive times are read as UTC, so an offset-less timestamp and a `Z` one compare equal."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _id_set(value: object) -> object:
    """One id or a list of ids, order free; an empty or missing value stays as it is."""
    if not value:
        return value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return sorted(value, key=repr)
    return value


def _granularity(value: object) -> object:
    """`<count><unit>` with the unit spelled in full and plural; other text is kept."""
    if not value or not isinstance(value, str):
        return value
    found = _GRANULARITY.match(value)
    if found is None:
        return value
    count, unit = found.groups()
    unit = unit.lower()
    return f"{count}{_GRANULARITY_UNITS.get(unit, unit)}"
