"""Normalised RDF terms: what two SPARQL result cells must share to be equal (rules: docs/steps.md).

A blank node equals only one of the same label, so results are compared up to a renaming of their
blank nodes (steps/blank_nodes.py), never label by label.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import ROUND_DOWN, Context, Decimal, InvalidOperation
from typing import Literal, get_args

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

LiteralMatch = Literal["value", "strict"]
"""How text compares with typed numbers: `value` (a canonical numeral is its number) or `strict`."""
LITERAL_MATCHES: tuple[LiteralMatch, ...] = get_args(LiteralMatch)
DEFAULT_LITERAL_MATCH: LiteralMatch = "value"

_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
# One written form per number, so no two texts give the same number; a decimal numeral always has a
# non-zero fraction, so it never equals an integer numeral.
CANONICAL_NUMERAL = re.compile(
    rf"(0|-?[1-9][0-9]*)|-?(?:0|[1-9][0-9]*)\.[0-9]{{0,{DECIMAL_PLACES - 1}}}[1-9]"
)
_NUMERAL_START = frozenset("-0123456789")
_AFTER_NUMERALS = ":"  # the character after "9"; sorts after "-" and every digit
_QUANTUM = Decimal(1).scaleb(-DECIMAL_PLACES)


class BoolTerm:
    """An xsd:boolean value: one of the two singletons below (compared by identity), never equal to 1,
    0 or "true"."""

    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value

    def __repr__(self) -> str:
        return f"BoolTerm({self.value})"

    def __reduce__(self) -> str:
        return "TRUE_TERM" if self.value else "FALSE_TERM"


TRUE_TERM = BoolTerm(True)
FALSE_TERM = BoolTerm(False)


class BlankNode(tuple[str]):
    """A blank node of one result document, by its label: a one-element tuple, hashed in C, equal only
    to a blank node of the same label."""

    __slots__ = ()

    def __new__(cls, label: str) -> BlankNode:
        return tuple.__new__(cls, (label,))

    @property
    def label(self) -> str:
        return self[0]

    def __repr__(self) -> str:
        return f"_:{self[0]}"


Term = str | int | Decimal | BoolTerm | BlankNode | None
"""A normalised cell: value string, integer, truncated decimal, boolean, blank node, or None (unbound)."""


def text_term(text: str) -> Term:
    """Text under the `value` literal match: a canonical numeral is its number, else the text (injective)."""
    if text[:1] not in _NUMERAL_START:  # most texts (labels, IRIs) are decided here
        return text
    numeral = CANONICAL_NUMERAL.fullmatch(text)
    if numeral is None:
        return text
    if numeral.group(1) is None:
        return Decimal(text)
    try:
        return int(text)
    except ValueError:  # more digits than int() accepts from text
        return text


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


def literal_term(
    value: str, datatype: str | None, literal_match: LiteralMatch = DEFAULT_LITERAL_MATCH
) -> Term:
    """The term of a cell's text `value` under its `datatype` (None: none); see `normalize_cell`."""
    converter = CONVERTERS.get(datatype) if datatype is not None else None
    if converter is not None:
        return converter(value)
    return text_term(value) if literal_match == "value" else value


def text_column(values: list[str], literal_match: LiteralMatch) -> tuple[Term, ...]:
    """The terms of a column of texts without a datatype; if even the smallest text sorts after "9",
    none is a numeral."""
    if literal_match == "value" and min(values, default=_AFTER_NUMERALS)[:1] <= "9":
        return tuple(map(text_term, values))
    return tuple(values)


def normalize_cell(cell: object, literal_match: LiteralMatch = DEFAULT_LITERAL_MATCH) -> Term:
    """Normalise one binding object of SPARQL results JSON; raises ValueError when malformed.

    Every text cell is read by `text_term`, whatever its kind, so equality stays transitive."""
    if not isinstance(cell, dict):
        raise ValueError(f"a binding must be an object, got {type(cell).__name__}")
    value = cell.get("value")
    if not isinstance(value, str):
        if cell.get("type") == "triple" and isinstance(value, dict):
            return json.dumps(value, sort_keys=True)
        raise ValueError("a binding has no text 'value'")
    if cell.get("type") == "bnode":
        return BlankNode(value)
    datatype = cell.get("datatype")
    if datatype is not None and not isinstance(datatype, str):
        raise ValueError("a binding's 'datatype' must be an IRI (text)")
    return literal_term(value, datatype, literal_match)


def may_hold_blank_nodes(text: str) -> bool:
    """False when SPARQL results text surely binds no blank node: it never spells `bnode`, not even
    through a `\\u` escape."""
    return "bnode" in text or "\\u" in text


def display_term(term: Term) -> str | int | float | bool | None:
    """A JSON-friendly form of a term for failure reports (a blank node as `_:label`)."""
    if isinstance(term, BlankNode):
        return repr(term)
    if isinstance(term, BoolTerm):
        return term.value
    if isinstance(term, Decimal):
        return float(term)
    return term
