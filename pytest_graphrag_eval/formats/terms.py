"""Normalised RDF terms: what two SPARQL result cells must share to be equal.

Integers (every xsd integer type) become `int`; xsd decimal, float and double
become `Decimal` truncated (not rounded) to 5 decimals, so `1`, `1.0` and
`1.000004` agree; xsd:boolean becomes a `BoolTerm` (never equal to 1 or "true");
anything else is its value string, whatever its type or language tag. An
unbound variable is `None` and equals only another unbound one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import ROUND_DOWN, Context, Decimal, InvalidOperation
from typing import Any

XSD = "http://www.w3.org/2001/XMLSchema#"
INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "positiveInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
DECIMAL_TYPES = frozenset(XSD + name for name in ("decimal", "float", "double"))
BOOLEAN_TYPE = XSD + "boolean"
DECIMAL_PLACES = 5

_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
_QUANTUM = Decimal(1).scaleb(-DECIMAL_PLACES)


class BoolTerm:
    """An xsd:boolean value: one of the two singletons below, so it never equals 1, 0 or "true".

    Equality and hashing are by identity (fast, C-level), which is right for singletons.
    """

    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value

    def __repr__(self) -> str:
        return f"BoolTerm({self.value})"

    def __reduce__(self) -> str:
        return "TRUE_TERM" if self.value else "FALSE_TERM"


TRUE_TERM = BoolTerm(True)
FALSE_TERM = BoolTerm(False)


Term = str | int | Decimal | BoolTerm | None
"""A normalised cell: value string, integer, truncated decimal, boolean, or None (unbound)."""


def integer_term(text: str) -> Term:
    """An xsd integer; text that is not a plain base-10 integer stays text."""
    stripped = text.strip()
    if not _INTEGER_TEXT.fullmatch(stripped):
        return text
    try:
        return int(stripped)
    except ValueError:  # more digits than int() accepts from text
        return text


def decimal_term(text: str) -> Term:
    """An xsd decimal/float/double truncated to 5 decimals; NaN/INF and junk stay text."""
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return text
    if not number.is_finite():
        return text.strip()
    if number.as_tuple().exponent >= -DECIMAL_PLACES:  # type: ignore[operator]
        return number
    digits = max(28, number.adjusted() + DECIMAL_PLACES + 2)
    return number.quantize(_QUANTUM, rounding=ROUND_DOWN, context=Context(prec=digits))


def boolean_term(text: str) -> Term:
    """xsd:boolean's lexical forms `true`/`1` and `false`/`0`; anything else stays text."""
    stripped = text.strip()
    if stripped in ("true", "1"):
        return TRUE_TERM
    if stripped in ("false", "0"):
        return FALSE_TERM
    return text


CONVERTERS: dict[str, Callable[[str], Term]] = {
    **dict.fromkeys(INTEGER_TYPES, integer_term),
    **dict.fromkeys(DECIMAL_TYPES, decimal_term),
    BOOLEAN_TYPE: boolean_term,
}


def normalize_cell(cell: Any) -> Term:
    """Normalise one binding object of SPARQL results JSON; raises ValueError when malformed."""
    if not isinstance(cell, dict):
        raise ValueError(f"a binding must be an object, got {type(cell).__name__}")
    value = cell.get("value")
    if not isinstance(value, str):
        if cell.get("type") == "triple" and isinstance(value, dict):
            return json.dumps(value, sort_keys=True)
        raise ValueError("a binding has no text 'value'")
    datatype = cell.get("datatype")
    if datatype is None:
        return value
    if not isinstance(datatype, str):
        raise ValueError("a binding's 'datatype' must be an IRI (text)")
    converter = CONVERTERS.get(datatype)
    return value if converter is None else converter(value)


def display_term(term: Term) -> str | int | float | bool | None:
    """A JSON-friendly form of a term for failure reports."""
    if isinstance(term, BoolTerm):
        return term.value
    if isinstance(term, Decimal):
        return float(term)
    return term
