"""The comparison grammar thresholds and gates share, `<left> <op> <number>`; a printed limit parses
back to the same float, so reports quote exactly what was checked."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pytest_graphrag_eval.errors import ConfigurationError, CorpusError, SourceLocation
from pytest_graphrag_eval.report_model import HUGE_INTEGER, is_finite_number, is_huge_integer

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
DEFAULT_OPERATOR = ">="
_OPERATOR_CHARS = "<>=!"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
METRIC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_@.\-]*")
_OPERATOR_LIST = ", ".join(OPERATORS)
Rule = TypeVar("Rule")


class ExpressionError(ConfigurationError):
    """A malformed threshold or gate; the message is the reason only, callers add where it came from."""


def split_comparison(text: str) -> tuple[str, str, float]:
    """Split `left op number` at the first operator; `left` comes back stripped, unchecked."""
    start = next((index for index, char in enumerate(text) if char in _OPERATOR_CHARS), None)
    if start is None:
        raise ExpressionError(f"no comparison operator (one of {_OPERATOR_LIST})")
    rest = text[start:].lstrip(_OPERATOR_CHARS)
    op = text[start : len(text) - len(rest)]
    if op not in OPERATORS:
        raise ExpressionError(f"unknown operator {op!r} (use one of {_OPERATOR_LIST})")
    left = text[:start].strip()
    if not left:
        raise ExpressionError("nothing before the operator")
    return left, op, parse_number(rest)


def parse_limit(value: Any) -> tuple[str, float]:
    """Read a YAML limit: a number (meaning `>=`) or text `op number` / `number`."""
    if isinstance(value, bool):
        raise ExpressionError(f"expected a number or a comparison like '>=0.8', got {value!r}")
    if isinstance(value, (int, float)):
        if is_huge_integer(value):
            raise ExpressionError(f"expected a finite number, got {HUGE_INTEGER}")
        return DEFAULT_OPERATOR, _finite(float(value), str(value))
    if not isinstance(value, str):
        raise ExpressionError(f"expected a number or a comparison like '>=0.8', got {type(value).__name__}")
    text = value.strip()
    rest = text.lstrip(_OPERATOR_CHARS)
    op = text[: len(text) - len(rest)] or DEFAULT_OPERATOR
    if op not in OPERATORS:
        raise ExpressionError(f"unknown operator {op!r} (use one of {_OPERATOR_LIST})")
    return op, parse_number(rest)


def parse_number(text: str) -> float:
    """A finite decimal number, scientific notation allowed; no nan, inf or underscores."""
    stripped = text.strip()
    if not stripped:
        raise ExpressionError("no number after the operator")
    if not _NUMBER.fullmatch(stripped):
        raise ExpressionError(f"{stripped!r} is not a number")
    return _finite(float(stripped), stripped)


def confidence_level(percent: str) -> float:
    """The `95` of a trailing `@95` as 0.95, from 50 to below 100 percent."""
    if not 50 <= float(percent) < 100:
        raise ExpressionError(f"confidence @{percent} must be a percentage from 50 to below 100")
    return float(percent) / 100


def _finite(number: float, text: str) -> float:
    if not math.isfinite(number):
        raise ExpressionError(f"{text!r} is not a finite number")
    return number


def check_source(source: str, sources: Sequence[str]) -> None:
    if source not in sources:
        raise ValueError(f"source must be one of {', '.join(sources)}, got {source!r}")


def yaml_rules(
    value: object,
    location: SourceLocation,
    field: str,
    shapes: str,
    from_text: Callable[[object], Rule],
    from_entry: Callable[[str, object], Rule],
) -> Iterator[tuple[str, bool, Rule]]:
    """The rules of a corpus file's `thresholds:` or `gates:` (`field`), in order, each with the name that
    locates it and whether it was listed: a list of expressions (`from_text`), one expression, or a
    mapping `{left: limit}` (`from_entry`). A rule that does not parse is a CorpusError naming its entry;
    `shapes` says what the setting may be."""
    if value is None:
        return
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | Mapping):
        raise CorpusError(f"must be {shapes}, got {type(value).__name__}", location, field)
    what = field.removesuffix("s")
    listed = isinstance(value, list)
    for key, item in enumerate(value) if isinstance(value, list) else value.items():
        where = f"{field}[{key}]" if listed else f"{field}.{key}"
        try:
            rule = from_text(item) if listed else from_entry(str(key), item)
        except ExpressionError as error:
            shown = f" {item!r}" if listed else ""
            raise CorpusError(f"invalid {what}{shown}: {error}", location, where) from None
        yield where, listed, rule


def check_metric_name(name: str) -> str:
    """Accept result-key names such as `steps_score`, `retrieval_recall@10`, `erag_P_10`."""
    if not METRIC_NAME.fullmatch(name):
        raise ExpressionError(
            f"{name!r} is not a metric name (letters, digits and _ @ . - ; not starting with a digit)"
        )
    return name


def format_number(number: float) -> str:
    """Shortest text that parses back to the same float; whole numbers without `.0`."""
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def display_number(number: float) -> str:
    """A measured value for messages: six significant digits, whole numbers without `.0`."""
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else f"{number:.6g}"


def numeric_value(value: Any) -> float | None:
    """The value as a float when it is a real number (not a flag) and a float holds it, else None."""
    return float(value) if isinstance(value, float) or is_finite_number(value) else None  # NaN, inf kept


def compare(actual: float, op: str, limit: float) -> bool:
    """Apply `op`; NaN never passes."""
    return OPERATORS[op](actual, limit)
