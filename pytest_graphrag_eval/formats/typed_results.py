"""SELECT results decoded straight into typed cells, when msgspec is installed.

msgspec reads the head's variables first, then decodes every binding into a row type made for those
variables (a field each, no dict per row), skipping what the comparison never reads. Anything else is
declined (None) and parsed by `parse_sparql_results`, so a table made here equals the generic path's
and every error message is still its own.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from pytest_graphrag_eval.formats.terms import (
    BlankNode,
    LiteralMatch,
    Term,
    literal_term,
    text_column,
)

try:
    import msgspec
except ImportError:  # without the optional dependency every text takes the generic path
    msgspec = None  # type: ignore[assignment]

if msgspec is not None:
    # gc=False: these objects hold no cycles and live only while a table is made.

    class _Cell(msgspec.Struct, gc=False):
        value: str
        datatype: str | None = None
        type: str | None = None

    class _Head(msgspec.Struct, gc=False):
        vars: list[str]

    class _HeadOnly(msgspec.Struct, gc=False):
        head: _Head
        boolean: Any = msgspec.UNSET  # present: an ASK result, which the generic path reads

    class _Rows(msgspec.Struct, gc=False):
        bindings: list[msgspec.Raw]  # each row checked as JSON, none built

    class _RowsOnly(msgspec.Struct, gc=False):
        results: _Rows

    _HEAD_DECODER: Any = msgspec.json.Decoder(_HeadOnly)
    _ROWS_DECODER: Any = msgspec.json.Decoder(_RowsOnly)
    _DECLINED: tuple[type[BaseException], ...] = (msgspec.DecodeError, UnicodeError, RecursionError)
else:
    _HEAD_DECODER = _ROWS_DECODER = None
    _DECLINED = ()


@functools.lru_cache(maxsize=256)
def _rows_decoder(variables: tuple[str, ...]) -> tuple[Any, list[Callable[[Any], Any]]]:
    """A decoder of `results.bindings` into rows with a field per variable (absent: None; a `null`
    cell declines), and each field's getter; made once per set of variables."""
    names = {f"v{index}": variable for index, variable in enumerate(variables)}  # any text, as a field
    row = msgspec.defstruct("Row", [(field, _Cell, None) for field in names], rename=names, gc=False)
    results = msgspec.defstruct("Results", [("bindings", list[row])], gc=False)  # type: ignore[valid-type]
    select = msgspec.defstruct("Select", [("results", results)], gc=False)
    return msgspec.json.Decoder(select), [operator.attrgetter(field) for field in names]


def typed_table(
    text: str, literal_match: LiteralMatch
) -> tuple[tuple[str, ...], tuple[tuple[Term, ...], ...], int, bool] | None:
    """`(variables, columns, row count, whether a cell is a blank node)` of SELECT results text of
    the common shape, else None."""
    if _HEAD_DECODER is None:
        return None
    try:
        head = _HEAD_DECODER.decode(text)
    except _DECLINED:
        return None
    variables = tuple(head.head.vars)
    if head.boolean is not msgspec.UNSET or len(set(variables)) != len(variables):
        return None
    decoder, getters = _rows_decoder(variables)
    try:
        rows = decoder.decode(text).results.bindings
    except _DECLINED:
        return None
    made = [_column(list(map(getter, rows)), literal_match) for getter in getters]
    return variables, tuple(column for column, _ in made), len(rows), any(blank for _, blank in made)


def _column(cells: list[Any], literal_match: LiteralMatch) -> tuple[tuple[Term, ...], bool]:
    """The column's terms, and whether one is a blank node."""
    values: list[str] = []
    append = values.append
    for cell in cells:
        if cell is None or cell.datatype is not None or cell.type == "bnode":
            break
        append(cell.value)
    else:
        return text_column(values, literal_match), False
    terms = tuple(
        None
        if cell is None
        else BlankNode(cell.value)
        if cell.type == "bnode"
        else literal_term(cell.value, cell.datatype, literal_match)
        for cell in cells
    )
    return terms, any(type(term) is BlankNode for term in terms)


def typed_row_count(text: str) -> int | None:
    """How many rows `results.bindings` lists (the aggregates ask only whether an output is empty);
    None leaves the text to the generic parse."""
    if _ROWS_DECODER is None:
        return None
    try:
        return len(_ROWS_DECODER.decode(text).results.bindings)
    except _DECLINED:
        return None
