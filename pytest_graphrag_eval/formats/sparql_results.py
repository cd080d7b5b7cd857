"""SPARQL 1.1 results JSON parsed into a typed, column-wise table.

Step outputs are untrusted: anything that is not SELECT or ASK results JSON
(DESCRIBE/CONSTRUCT text, HTML error pages, truncated JSON) raises
`SparqlResultsError`, a ValueError the comparison turns into a score of 0.
Columns are stored as tuples of normalised terms (see terms.py) because the
comparison works column by column.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.formats.terms import Term, normalize_cell


class SparqlResultsError(ValueError):
    """The text is not SPARQL results JSON (or is malformed)."""


@dataclass(frozen=True)
class SparqlTable:
    """A SELECT result (variables, columns) or an ASK result (`boolean` set, no variables)."""

    variables: tuple[str, ...]
    columns: tuple[tuple[Term, ...], ...]
    row_count: int
    boolean: bool | None = None

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


def load_results_json(output: Any) -> dict[str, Any]:
    """The results object from text (or an already-parsed mapping)."""
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except (ValueError, RecursionError) as error:
            raise SparqlResultsError(f"not valid JSON ({_short(error)})") from None
    if not isinstance(output, Mapping):
        raise SparqlResultsError(f"SPARQL results must be a JSON object, got {type(output).__name__}")
    return dict(output)


def parse_sparql_results(output: Any) -> SparqlTable:
    """Parse SELECT or ASK results JSON; raises SparqlResultsError on anything else."""
    data = load_results_json(output)
    if "boolean" in data:
        if not isinstance(data["boolean"], bool):
            raise SparqlResultsError("ASK result 'boolean' must be true or false")
        return SparqlTable(variables=(), columns=(), row_count=0, boolean=data["boolean"])
    variables = _variables(data.get("head"))
    bindings = _bindings(data.get("results"))
    columns: list[list[Term]] = [[] for _ in variables]
    for index, binding in enumerate(bindings):
        if not isinstance(binding, dict):
            raise SparqlResultsError(f"binding #{index + 1} must be an object")
        try:
            for column, variable in zip(columns, variables, strict=True):
                cell = binding.get(variable)
                column.append(None if cell is None else normalize_cell(cell))
        except ValueError as error:
            raise SparqlResultsError(f"binding #{index + 1}: {error}") from None
    return SparqlTable(
        variables=variables, columns=tuple(tuple(column) for column in columns), row_count=len(bindings)
    )


ResultsParser = Callable[[Any], SparqlTable]


def memoized_parser() -> ResultsParser:
    """`parse_sparql_results` that parses each output text once (errors included).

    Made per scoring run: a group compares every reference step with every
    actual step, and a large output should not be parsed once per pair.
    """
    seen: dict[str, SparqlTable | str] = {}

    def parse(output: Any) -> SparqlTable:
        if not isinstance(output, str):
            return parse_sparql_results(output)
        if output not in seen:
            try:
                seen[output] = parse_sparql_results(output)
            except SparqlResultsError as error:
                seen[output] = str(error)
        result = seen[output]
        if isinstance(result, str):
            raise SparqlResultsError(result)
        return result

    return parse


def uri_values(output: Any) -> set[str]:
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


def _variables(head: Any) -> tuple[str, ...]:
    if not isinstance(head, Mapping):
        raise SparqlResultsError("missing 'head' object (not SELECT or ASK results)")
    variables = head.get("vars")
    if not isinstance(variables, list) or not all(isinstance(name, str) for name in variables):
        raise SparqlResultsError("'head.vars' must be a list of variable names")
    if len(set(variables)) != len(variables):
        raise SparqlResultsError("'head.vars' names a variable twice")
    return tuple(variables)


def _bindings(results: Any) -> list[Any]:
    bindings = results.get("bindings") if isinstance(results, Mapping) else None
    if not isinstance(bindings, list):
        raise SparqlResultsError("missing 'results.bindings' list")
    return bindings


def _short(error: BaseException) -> str:
    return str(error)[:120] or type(error).__name__
