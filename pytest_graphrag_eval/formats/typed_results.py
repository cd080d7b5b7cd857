"""SELECT results decoded straight into typed cells, when msgspec is installed.

The head's variables are read from the text's opening (where writers put it), then every binding
is decoded into a row type made for them (a field each, no dict per row) in one pass that checks the
head, skipping what the comparison never reads. Anything else is declined (None) and parsed by
`parse_sparql_results`, so a table made here equals the generic path's and every message is its own.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
from collections.abc import Callable
from typing import Any

from pytest_graphrag_eval.formats.terms import BlankNode, LiteralMatch, Term, literal_term, text_column

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

    class _Rows(msgspec.Struct, gc=False):
        bindings: list[msgspec.Raw]  # each row checked as JSON, none built

    class _RowsOnly(msgspec.Struct, gc=False):
        results: _Rows

    _ROWS_DECODER: Any = msgspec.json.Decoder(_RowsOnly)
    _VARIABLES_DECODER: Any = msgspec.json.Decoder(list[str])
    _DECLINED: tuple[type[BaseException], ...] = (msgspec.DecodeError, UnicodeError, RecursionError)
else:
    _ROWS_DECODER = _VARIABLES_DECODER = None
    _DECLINED = ()


# The head where JSON writers put it, first: its variables read here spare msgspec a pass over the text.
_OPENING_HEAD = re.compile(r'\{\s*"head"\s*:\s*\{\s*"vars"\s*:\s*(\[[^\]]*\])\s*\}')


@functools.lru_cache(maxsize=256)
def _rows_decoder(variables: tuple[str, ...]) -> tuple[Any, list[Callable[[Any], Any]]]:
    """A decoder of SELECT results into rows with a field per variable (absent: None; a `null` cell
    declines), and each field's getter; made once per set of variables."""
    names = {f"v{index}": variable for index, variable in enumerate(variables)}  # any text, as a field
    row = msgspec.defstruct("Row", [(field, _Cell, None) for field in names], rename=names, gc=False)
    results = msgspec.defstruct("Results", [("bindings", list[row])], gc=False)  # type: ignore[valid-type]
    fields: list[Any] = [("head", _Head), ("results", results), ("boolean", Any, msgspec.UNSET)]
    decoder = msgspec.json.Decoder(msgspec.defstruct("Select", fields, gc=False))
    return decoder, [operator.attrgetter(field) for field in names]


def typed_table(
    text: str, literal_match: LiteralMatch
) -> tuple[tuple[str, ...], tuple[tuple[Term, ...], ...], int, bool] | None:
    """`(variables, columns, row count, whether a cell is a blank node)` of SELECT results text of
    the common shape, else None."""
    if _ROWS_DECODER is None:
        return None
    opening = _OPENING_HEAD.match(text)
    select = _select(text, opening.group(1)) if opening else None
    if select is None:  # the head elsewhere, or overridden by a later one: read first (rows as empty rows)
        with contextlib.suppress(*_DECLINED):
            select = _select(text, _rows_decoder(())[0].decode(text).head.vars)
    if select is None:
        return None
    variables, rows, getters = select
    made = [_column(list(map(getter, rows)), literal_match) for getter in getters]
    return variables, tuple(column for column, _ in made), len(rows), any(blank for _, blank in made)


def _select(text: str, head: str | list[str]) -> tuple[tuple[str, ...], list[Any], list[Any]] | None:
    """Variables, rows and getters of SELECT results naming `head`'s variables (JSON or a list) once each."""
    try:
        variables = tuple(_VARIABLES_DECODER.decode(head) if isinstance(head, str) else head)
        if len(set(variables)) != len(variables):
            return None
        decoder, getters = _rows_decoder(variables)
        select = decoder.decode(text)
    except _DECLINED:
        return None
    if select.boolean is not msgspec.UNSET or tuple(select.head.vars) != variables:
        return None
    return variables, select.results.bindings, getters


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
