"""SPARQL 1.1 results JSON parsed into a typed, column-wise table.

Anything but SELECT or ASK results raises `SparqlResultsError`, which scores 0. Terms depend on the
literal match, so tables compare only under the same one; text that cannot spell `bnode` holds no
blank node and takes the fast paths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.terms import (
    DEFAULT_LITERAL_MATCH,
    BlankNode,
    LiteralMatch,
    Term,
    may_hold_blank_nodes,
    normalize_cell,
    text_column,
    text_term,
)
from pytest_graphrag_eval.formats.typed_results import typed_table


class SparqlResultsError(ValueError):
    """The text is not SPARQL results JSON (or is malformed)."""


class SparqlTable(NamedTuple):
    """A SELECT result (variables, columns) or an ASK result (`boolean` set, no variables)."""

    variables: tuple[str, ...]
    columns: tuple[tuple[Term, ...], ...]
    row_count: int
    boolean: bool | None = None
    blank_nodes: bool = False

    @property
    def is_ask(self) -> bool:
        return self.boolean is not None

    @property
    def rows(self) -> tuple[tuple[Term, ...], ...]:
        """Rows as tuples of terms, in result order."""
        if not self.columns:
            return ((),) * self.row_count
        return tuple(zip(*self.columns, strict=True))

    def column(self, variable: str) -> tuple[Term, ...]:
        return self.columns[self.variables.index(variable)]


def load_results_json(output: object) -> dict[str, object]:
    """The results object from text (or an already-parsed mapping)."""
    if isinstance(output, str):
        try:
            output = json_text.loads(output)
        except (ValueError, RecursionError) as error:
            raise SparqlResultsError(f"not valid JSON ({_short(error)})") from None
    if not isinstance(output, Mapping):
        raise SparqlResultsError(f"SPARQL results must be a JSON object, got {type(output).__name__}")
    return output if type(output) is dict else dict(output)  # read, never changed: no copy of a dict


def parse_sparql_results(output: object, literal_match: LiteralMatch = DEFAULT_LITERAL_MATCH) -> SparqlTable:
    """Parse SELECT or ASK results JSON; raises SparqlResultsError on anything else (the common shape is
    decoded by typed_results.py when msgspec is installed, with the same result)."""
    if isinstance(output, str):
        typed = typed_table(output, literal_match)
        if typed is not None:
            return SparqlTable(*typed[:3], blank_nodes=typed[3])
        data = load_results_json(output)
        return results_table(data, literal_match, blank_nodes=may_hold_blank_nodes(output))
    return results_table(load_results_json(output), literal_match)


def results_table(
    data: Mapping[str, object],
    literal_match: LiteralMatch = DEFAULT_LITERAL_MATCH,
    *,
    blank_nodes: bool = True,
) -> SparqlTable:
    """The table of a SELECT or ASK results object already read from JSON; raises SparqlResultsError.
    `blank_nodes=False` promises no cell is a blank node."""
    if "boolean" in data:
        if not isinstance(data["boolean"], bool):
            raise SparqlResultsError("ASK result 'boolean' must be true or false")
        return SparqlTable(variables=(), columns=(), row_count=0, boolean=data["boolean"])
    variables = _variables(data.get("head"))
    bindings = _bindings(data.get("results"))
    if not set(map(type, bindings)) <= {dict}:  # a C-level pass first; the loop only to name the culprit
        for index, binding in enumerate(bindings):
            if not isinstance(binding, dict):
                raise SparqlResultsError(f"binding #{index + 1} must be an object")
    columns = _columns(variables, bindings, literal_match, blank_nodes)
    return SparqlTable(
        variables=variables,
        columns=columns,
        row_count=len(bindings),
        blank_nodes=blank_nodes and _holds_blank_node(columns),
    )


def _holds_blank_node(columns: Iterable[tuple[Term, ...]]) -> bool:
    return any(type(term) is BlankNode for column in columns for term in column)


def _columns(
    variables: tuple[str, ...], bindings: list[dict[str, Any]], literal_match: LiteralMatch, blank_nodes: bool
) -> tuple[tuple[Term, ...], ...]:
    """The bindings as columns of terms, with fast paths for the commonest cell, since this loop would
    otherwise dominate large results; raises SparqlResultsError naming the first bad binding."""
    text: Callable[[str], Term] = text_term if literal_match == "value" else str
    try:
        if blank_nodes:  # every cell read with its type
            return tuple(
                tuple([_term(binding.get(variable), literal_match) for binding in bindings])
                for variable in variables
            )
        return tuple(
            _plain_column(bindings, variable, literal_match)
            or _column(bindings, variable, text, literal_match)
            for variable in variables
        )
    except ValueError:
        for index, binding in enumerate(bindings):  # row by row, for the message only
            for variable in variables:
                try:
                    _term(binding.get(variable), literal_match)
                except ValueError as error:
                    raise SparqlResultsError(f"binding #{index + 1}: {error}") from None
        raise


def _plain_column(
    bindings: list[dict[str, Any]], variable: str, literal_match: LiteralMatch
) -> tuple[Term, ...] | None:
    """The column when every cell is a value without a datatype (most columns), else None; one loop
    beats C-level passes at every size (Python 3.11)."""
    values: list[str] = []
    append = values.append
    for binding in bindings:
        cell = binding.get(variable)
        if type(cell) is not dict or "datatype" in cell:
            return None
        value = cell.get("value")
        if type(value) is not str:
            return None
        append(value)
    return text_column(values, literal_match)


def _column(
    bindings: list[dict[str, Any]], variable: str, text: Callable[[str], Term], literal_match: LiteralMatch
) -> tuple[Term, ...]:
    return tuple(
        [
            text(cell["value"])
            if type(cell := binding.get(variable)) is dict
            and "datatype" not in cell
            and type(cell.get("value")) is str
            else _term(cell, literal_match)
            for binding in bindings
        ]
    )


def _term(cell: object, literal_match: LiteralMatch) -> Term:
    return None if cell is None else normalize_cell(cell, literal_match)


class ResultsParser(Protocol):
    """Reads SPARQL results JSON under a literal match (`parse_sparql_results` or a `MemoizedParser`)."""

    def __call__(
        self, output: object, literal_match: LiteralMatch = DEFAULT_LITERAL_MATCH
    ) -> SparqlTable: ...


class SharedTables(dict[str, SparqlTable | str]):
    """The tables (or why there is none) of the reference outputs any question of one corpus read, by
    text, and the last text read: a corpus lists a question's variants together, and comparing a long
    text with the last one spares hashing it."""

    last: tuple[str, SparqlTable | str] | None = None  # one attribute dict per corpus


class MemoizedParser:
    """`parse_sparql_results` that parses each output text once per literal match (errors included).

    Made per question, starting from the reference reading's tables and readings, so a large output is
    parsed once, not once per step pair; `shared` is a longer-lived memo of the default literal match.
    Texts are met by identity, then compared with the few known ones: hashing a long output would
    cost a pass over it, where texts of unequal lengths differ at once.
    """

    def __init__(
        self,
        known: Mapping[str, SparqlTable] | None = None,
        readings: dict[int, tuple[Any, Any]] | None = None,
        shared: SharedTables | None = None,
    ):
        # id of a text met -> (an equal text, the first met, and its table or error)
        self._seen: dict[int, tuple[str, SparqlTable | str]] = {}
        self._seen_strict: dict[int, tuple[str, SparqlTable | str]] = {}
        self._known = known or {}
        self._shared = shared
        # Comparisons of this parser's tables, shared by every scorer using it (steps/sparql_compare.py).
        self.comparisons: dict[Any, Any] = {}
        # Reference steps read under this parser (id -> (step, its reading)), for the same reason:
        # the step is kept beside its reading so that its id stays its own while the memo lives.
        self.readings: dict[int, tuple[Any, Any]] = {} if readings is None else readings

    def __call__(self, output: object, literal_match: LiteralMatch = DEFAULT_LITERAL_MATCH) -> SparqlTable:
        if not isinstance(output, str):
            return parse_sparql_results(output, literal_match)
        seen = self._seen if literal_match == DEFAULT_LITERAL_MATCH else self._seen_strict
        met = seen.get(id(output))
        if met is None or (met[0] is not output and met[0] != output):  # an id reused by another text
            met = seen[id(output)] = self._read(output, literal_match)
        if isinstance(met[1], str):
            raise SparqlResultsError(met[1])
        return met[1]

    def _read(self, output: str, literal_match: LiteralMatch) -> tuple[str, SparqlTable | str]:
        """An equal text met before (known or shared) and its table or error, else `output` parsed."""
        shared = None
        if literal_match == DEFAULT_LITERAL_MATCH:
            for text, table in self._known.items():
                if text == output:
                    return text, table
            shared = self._shared
        if shared is not None and shared.last is not None and shared.last[0] == output:
            return shared.last
        result = shared.get(output) if shared is not None else None
        if result is None:
            try:
                result = parse_sparql_results(output, literal_match)
            except SparqlResultsError as error:
                result = str(error)
        if shared is not None:
            shared[output] = result
            shared.last = (output, result)
        return output, result

    def parsed(self, output: object) -> SparqlTable | None:
        """The table this parser already made of `output` (either literal match), else None; never parses."""
        for seen in (self._seen, self._seen_strict):
            met = seen.get(id(output))
            if met is not None and met[0] == output and isinstance(met[1], SparqlTable):
                return met[1]
        return None

    def tables(self) -> dict[str, SparqlTable]:
        """Every output text parsed so far under the default literal match that is valid SPARQL results
        (each the first met of its text, whose hash is known)."""
        return {text: table for text, table in self._seen.values() if isinstance(table, SparqlTable)}


class SelectRowCounts:
    """The row counts of the SELECT outputs scoring parsed, by text identity, so the aggregates need not
    parse them again; each text is kept, so its id cannot be reused. ASK tables are not noted."""

    def __init__(self) -> None:
        # Two dicts of texts and numbers, not one of pairs: the collector does not track them.
        self._texts: dict[int, str] = {}
        self._counts: dict[int, int] = {}

    def note(self, outputs: Iterable[Any], parser: MemoizedParser) -> None:
        """Note the row count of each of `outputs` that `parser` read as a SELECT result."""
        for output in outputs:
            table = parser.parsed(output)
            if table is not None and not table.is_ask:
                self._texts[id(output)] = output
                self._counts[id(output)] = table.row_count

    def rows(self, output: object) -> int | None:
        """The noted row count of this very text object, else None."""
        return self._counts[id(output)] if self._texts.get(id(output)) is output else None


def uri_values(output: object) -> set[str]:
    """Every value bound as an IRI (type `uri`) anywhere in SELECT results JSON."""
    data = load_results_json(output)
    bindings = _bindings(data.get("results"))
    values: set[str] = set()
    for binding in bindings:
        if not isinstance(binding, dict):
            raise SparqlResultsError("each binding must be an object")
        for cell in binding.values():
            if isinstance(cell, dict) and cell.get("type") == "uri" and isinstance(cell.get("value"), str):
                values.add(cell["value"])
    return values


def _variables(head: object) -> tuple[str, ...]:
    if not isinstance(head, Mapping):
        raise SparqlResultsError("missing 'head' object (not SELECT or ASK results)")
    variables = head.get("vars")
    if not isinstance(variables, list) or not all(isinstance(name, str) for name in variables):
        raise SparqlResultsError("'head.vars' must be a list of variable names")
    if len(set(variables)) != len(variables):
        raise SparqlResultsError("'head.vars' names a variable twice")
    return tuple(variables)


def _bindings(results: object) -> list[Any]:
    bindings = results.get("bindings") if isinstance(results, Mapping) else None
    if not isinstance(bindings, list):
        raise SparqlResultsError("missing 'results.bindings' list")
    return bindings


def _short(error: BaseException) -> str:
    return str(error)[:120] or type(error).__name__
