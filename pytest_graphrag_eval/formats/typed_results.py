"""SELECT results decoded straight into typed cells, when msgspec is installed.

msgspec decodes the common shape, skipping what the comparison never reads, in about two thirds of a
generic parse's time. Anything else is declined (None) and parsed by `parse_sparql_results`, so a
table made here equals the generic path's and every error message is still its own.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pytest_graphrag_eval.formats.terms import (
    BlankNode,
    LiteralMatch,
    Term,
    literal_term,
    may_hold_blank_nodes,
    text_column,
)

try:
    import msgspec
except ImportError:  # without the optional dependency every text takes the generic path
    msgspec = None  # type: ignore[assignment]

CellT = TypeVar("CellT")

if msgspec is not None:
    # gc=False: these objects hold no cycles and live only while a table is made.

    class _Cell(msgspec.Struct, gc=False):
        value: str
        datatype: str | None = None
        # Any other type (a blank node) declines this decoder at C speed, for the one below.
        type: Literal["uri", "literal", "typed-literal"] = "literal"

    class _TypedCell(msgspec.Struct, gc=False):  # for text that may bind blank nodes
        value: str
        datatype: str | None = None
        type: str | None = None

    class _Head(msgspec.Struct, gc=False):
        vars: list[str]

    class _Results(msgspec.Struct, Generic[CellT], gc=False):
        bindings: list[dict[str, CellT]]

    class _Select(msgspec.Struct, Generic[CellT], gc=False):
        head: _Head
        results: _Results[CellT]
        boolean: Any = msgspec.UNSET  # present: an ASK result, which the generic path reads

    class _Rows(msgspec.Struct, gc=False):
        bindings: list[msgspec.Raw]  # each row checked as JSON, none built

    class _RowsOnly(msgspec.Struct, gc=False):
        results: _Rows

    _DECODER: Any = msgspec.json.Decoder(_Select[_Cell])
    _TYPED_DECODER: Any = msgspec.json.Decoder(_Select[_TypedCell])
    _ROWS_DECODER: Any = msgspec.json.Decoder(_RowsOnly)
    _DECLINED: tuple[type[BaseException], ...] = (msgspec.DecodeError, UnicodeError, RecursionError)
else:
    _DECODER = _TYPED_DECODER = _ROWS_DECODER = None
    _DECLINED = ()


def typed_table(
    text: str, literal_match: LiteralMatch
) -> tuple[tuple[str, ...], tuple[tuple[Term, ...], ...], int, bool] | None:
    """`(variables, columns, row count, whether a cell is a blank node)` of SELECT results text of
    the common shape, else None.

    The first decoder accepts only IRI and literal cells (checked as it decodes); text it declines
    that may bind blank nodes is decoded again reading each cell's `type` (a `BlankNode`)."""
    if _DECODER is None:
        return None
    blank_nodes = False
    try:
        decoded = _DECODER.decode(text)
    except _DECLINED:
        if not may_hold_blank_nodes(text):
            return None
        blank_nodes = True
        try:
            decoded = _TYPED_DECODER.decode(text)
        except _DECLINED:
            return None
    variables = decoded.head.vars
    if decoded.boolean is not msgspec.UNSET or len(set(variables)) != len(variables):
        return None
    bindings = decoded.results.bindings
    column = _typed_column if blank_nodes else _column
    columns = tuple(column(bindings, variable, literal_match) for variable in variables)
    holds_blank = blank_nodes and any(type(term) is BlankNode for values in columns for term in values)
    return tuple(variables), columns, len(bindings), holds_blank


def _column(bindings: list[dict[str, Any]], variable: str, literal_match: LiteralMatch) -> tuple[Term, ...]:
    cells = [binding.get(variable) for binding in bindings]
    values: list[str] = []
    append = values.append
    for cell in cells:
        if cell is None or cell.datatype is not None:
            break
        append(cell.value)
    else:
        return text_column(values, literal_match)
    return tuple(
        None if cell is None else literal_term(cell.value, cell.datatype, literal_match) for cell in cells
    )


def _typed_column(
    bindings: list[dict[str, Any]], variable: str, literal_match: LiteralMatch
) -> tuple[Term, ...]:
    cells = [binding.get(variable) for binding in bindings]
    return tuple(
        None
        if cell is None
        else BlankNode(cell.value)
        if cell.type == "bnode"
        else literal_term(cell.value, cell.datatype, literal_match)
        for cell in cells
    )


def typed_row_count(text: str) -> int | None:
    """How many rows `results.bindings` lists (the aggregates ask only whether an output is empty);
    None leaves the text to the generic parse."""
    if _ROWS_DECODER is None:
        return None
    try:
        return len(_ROWS_DECODER.decode(text).results.bindings)
    except _DECLINED:
        return None
