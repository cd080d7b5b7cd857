"""A question's reference answer read from its answer step's SPARQL results text, in one pass.

With msgspec (the `speed` extra) the text is decoded into the few cells the answer reads, every other
cell skipped at C speed: a fifth of a whole parse's time. Text that decoder declines (another shape, a
value that is not text) is read by the generic parse, which gives the same answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.generate.placeholders import Pieces, Term
from pytest_graphrag_eval.generate.templates import AnswerRule

try:
    import msgspec
except ImportError:  # the standard library alone
    msgspec = None  # type: ignore[assignment]

if msgspec is not None:

    class _Cell(msgspec.Struct, gc=False):
        value: str

    class _Head(msgspec.Struct, gc=False):
        vars: list[str]


Row = dict[str, Term]


class AnswerReader:
    """Reads an answer rule's answer: the labels of a column joined, the number of rows, or a pattern
    filled from the one row (and the candidate's values)."""

    def __init__(self, rule: AnswerRule):
        self.rule = rule
        self.pattern = Pieces.of(rule.pattern)
        self.names = (
            (rule.column,) if rule.kind == "labels" else self.pattern.names if rule.kind == "value" else ()
        )
        self._decoder = _decoder(self.names) if msgspec is not None else None

    def read(self, text: str | None, known: Mapping[str, str]) -> tuple[list[str], int, str | None]:
        """The columns, the number of rows and the answer (None: no value to read it from) of a SPARQL
        results JSON text (None: the step gave another kind of result, which has no rows)."""
        if text is None:
            return [], 0, self._answer(0, [], None, known)
        if self._decoder is not None:
            try:
                document = self._decoder.decode(text)
            except (msgspec.DecodeError, UnicodeError, RecursionError):
                pass
            else:
                rows = document.results.bindings
                labels = [cell.value for row in rows if (cell := row.n0) is not None] if self.names else []
                first = None
                if len(rows) == 1:
                    named = zip(self.names, msgspec.structs.astuple(rows[0]), strict=True)
                    first = {name: cell.value for name, cell in named if cell is not None}
                return document.head.vars, len(rows), self._answer(len(rows), labels, first, known)
        columns, terms = rows_of(text)
        cells = [{name: str(row[name]["value"]) for name in self.names if name in row} for row in terms]
        labels = [row[self.names[0]] for row in cells if self.names[0] in row] if self.names else []
        return columns, len(cells), self._answer(len(cells), labels, cells[0] if cells else None, known)

    def _answer(
        self, rows: int, labels: list[str], first: Mapping[str, str] | None, known: Mapping[str, str]
    ) -> str | None:
        kind = self.rule.kind
        if kind == "count":
            return str(rows)
        if kind == "labels":
            return self.rule.separator.join(labels) if labels or not rows else None  # no rows: empty answer
        if rows != 1 or first is None:
            return None
        values = {**known, **first}
        if any(name not in values for name in self.pattern.names):
            return None
        return self.pattern.form.format_map(values)


def rows_of(output: str) -> tuple[list[str], list[Row]]:
    """The variables and rows of a SPARQL results JSON text (none for ASK); every term part is text
    (pyoxigraph's writer), so no number is read."""
    document: JSONValue = json_text.loads_shape(output)
    if not isinstance(document, dict):
        return [], []
    head, results = document.get("head"), document.get("results")
    names = head.get("vars") if isinstance(head, dict) else None
    bindings = results.get("bindings") if isinstance(results, dict) else None
    columns = [str(name) for name in names] if isinstance(names, list) else []
    rows = [row for row in bindings if isinstance(row, dict)] if isinstance(bindings, list) else []
    return columns, rows  # type: ignore[return-value]  # a row's values are terms (JSON objects)


def _decoder(names: tuple[str, ...]) -> Any:
    """A decoder of results text into rows holding only the cells of `names` (fields n0, n1, ...)."""
    fields = [(f"n{index}", _Cell | None, None) for index in range(len(names))]
    rename = {f"n{index}": name for index, name in enumerate(names)}
    row = msgspec.defstruct("Row", fields, rename=rename, gc=False)
    results = msgspec.defstruct("Results", [("bindings", list[row])], gc=False)  # type: ignore[valid-type]
    document = msgspec.defstruct("Document", [("head", _Head), ("results", results)], gc=False)
    return msgspec.json.Decoder(document)
