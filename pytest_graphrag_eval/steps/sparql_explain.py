"""Why an actual SPARQL result does not match a reference step: data for failure reports (blank
nodes as `_:label`, rows left over under partial credit's renaming)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import sparql_expectation
from pytest_graphrag_eval.formats.sparql_results import (
    ResultsParser,
    SparqlResultsError,
    SparqlTable,
    parse_sparql_results,
)
from pytest_graphrag_eval.formats.terms import Term, display_term
from pytest_graphrag_eval.steps.blank_nodes import Equivalence, collapsed, pairing, renamed
from pytest_graphrag_eval.steps.sparql_compare import (
    RowMode,
    find_column_mapping,
    row_mode,
    signature_candidates,
)

DEFAULT_LIMIT = 10
_JSON_BOOL: dict[bool | None, str] = {True: "true", False: "false"}


@dataclass(frozen=True)
class Sides:
    """What a reason calls the two results: a reference and the agent's actual result, or, when a
    reference is checked against the graph, its stored output and the fresh result of its query."""

    reference: str = "reference"
    actual: str = "actual"
    variable: str = "actual variable"


AGENT_RESULT = Sides()
FRESH_RESULT = Sides("stored", "fresh", "variable of the fresh result")


def explain_sparql_mismatch(
    reference_step: Mapping[str, Any],
    actual_output: Any,
    *,
    limit: int = DEFAULT_LIMIT,
    sides: Sides = AGENT_RESULT,
    parse: ResultsParser = parse_sparql_results,
) -> dict[str, Any]:
    """Compare one actual output with a SPARQL reference step and say what differs, JSON-friendly.

    Never raises for a bad actual output: an invalid reference or unparseable output gives only
    `matched: false` and `reason`. Row lists hold at most `limit` rows, `*_total` the full counts;
    `parse` lets a caller showing the outputs again parse each once.
    """
    try:
        expected = sparql_expectation(reference_step, parse)
    except ValueError as error:
        return {"matched": False, "reason": f"the reference step is invalid: {error}"}
    try:
        actual = parse(actual_output, expected.literal_match)
    except SparqlResultsError as error:
        return {"matched": False, "reason": f"the {sides.actual} output is not SPARQL results JSON: {error}"}
    if expected.table.is_ask or actual.is_ask:
        return _explain_ask(expected.table, actual)
    mode = row_mode(expected.ordered, expected.ignore_duplicates)
    return _Explanation(expected.table, actual, expected.required_columns, mode, limit, sides).build()


def _explain_ask(reference: SparqlTable, actual: SparqlTable) -> dict[str, Any]:
    matched = reference.boolean == actual.boolean
    if matched:
        reason = "the ASK results agree"
    elif reference.is_ask and actual.is_ask:
        reason = f"expected ASK result {_JSON_BOOL[reference.boolean]}, got {_JSON_BOOL[actual.boolean]}"
    elif reference.is_ask:
        reason = "expected an ASK result (a boolean), got a SELECT result"
    else:
        reason = "expected a SELECT result, got an ASK result (a boolean)"
    return {
        "matched": matched,
        "reason": reason,
        "reference_boolean": reference.boolean,
        "actual_boolean": actual.boolean,
    }


class _Explanation:
    def __init__(
        self,
        reference: SparqlTable,
        actual: SparqlTable,
        required: Sequence[str],
        mode: RowMode,
        limit: int,
        sides: Sides = AGENT_RESULT,
    ):
        self.sides = sides
        self.reference = reference
        self.actual = actual
        self.required = list(required)
        self.mode = mode
        self.limit = limit
        self.reference_columns = [reference.column(name) for name in required]
        self.blank = reference.blank_nodes or actual.blank_nodes
        # What column pairing reads: blank nodes as alike (their labels mean nothing across results).
        self.reference_alike: list[tuple[Any, ...]] = [
            collapsed(column) if self.blank else column for column in self.reference_columns
        ]
        self.actual_alike: list[tuple[Any, ...]] = [
            collapsed(column) if self.blank else column for column in actual.columns
        ]
        # Per required column, the actual columns with its values: once for the reason and the mapping.
        self.candidates = signature_candidates(self.reference_alike, self.actual_alike, mode)
        self.outcomes: list[Equivalence] = []

    def build(self) -> dict[str, Any]:
        mapping, reason = self._mapping_and_reason()
        agreed = "the rows agree up to blank-node renaming" if self.blank else "the rows agree"
        result: dict[str, Any] = {
            "matched": reason is None,
            "reason": reason or agreed,
            "mode": self.mode.value,
            "required_columns": self.required,
            "actual_variables": list(self.actual.variables),
            "column_mapping": {
                self.required[ref]: self.actual.variables[act] for ref, act in mapping.items()
            },
            "unmapped_columns": [
                name for index, name in enumerate(self.required) if index not in mapping and reason
            ],
            "reference_row_count": self.reference.row_count,
            "actual_row_count": self.actual.row_count,
        }
        result.update(self._row_differences(mapping) if reason else self._row_lists([], [], []))
        if reason and len(mapping) == len(self.required):
            result["reason"] = _row_difference_reason(result) or reason
        return result

    def _mapping_and_reason(self) -> tuple[dict[int, int], str | None]:
        reference, actual, required = self.reference, self.actual, self.required
        if len(required) > len(actual.variables):
            return self._best_mapping(), (
                f"{len(required)} required columns need distinct variables, "
                f"but the {self.sides.actual} result has only {len(actual.variables)}"
            )
        if reference.row_count == 0 or actual.row_count == 0:
            if reference.row_count == actual.row_count:
                return {}, None
            empty = self.sides.reference if reference.row_count == 0 else self.sides.actual
            return self._best_mapping(), f"the {empty} result is empty and the other is not"
        lonely = [name for name, options in zip(required, self.candidates, strict=True) if not options]
        if lonely:  # the column search would find no mapping: it need not run
            suffix = {RowMode.SEQUENCE: " in order", RowMode.SET: ""}.get(self.mode, " with the same counts")
            names = ", ".join(lonely)
            reason = f"no {self.sides.variable} has the same values{suffix} as required column(s) {names}"
            return self._best_mapping(), reason
        found = find_column_mapping(reference, actual, required, self.mode, self.outcomes)
        if found is not None:
            by_name = {name: index for index, name in enumerate(actual.variables)}
            return {index: by_name[found[name]] for index, name in enumerate(required)}, None
        return self._best_mapping(), self._failure_reason()

    def _failure_reason(self) -> str:
        if Equivalence.UNDECIDED in self.outcomes:
            return (
                "the blank nodes are too many alike ones to search every renaming (the search stopped at "
                "its bound); the results are counted as different"
            )
        if self.mode is not RowMode.SET and self.reference.row_count != self.actual.row_count:
            return f"expected {self.reference.row_count} rows, got {self.actual.row_count}"
        if self.blank:
            return (
                "every required column has a matching variable, but no one-to-one mapping and blank-node "
                "renaming make the rows agree"
            )
        return "every required column has a matching variable, but no one-to-one mapping makes the rows agree"

    def _best_mapping(self) -> dict[int, int]:
        """Pair columns with equal signatures first, then by Jaccard overlap of their value sets."""
        actual_sets = [set(column) for column in self.actual_alike]
        ranked: list[tuple[bool, float, int, int]] = []
        for ref_index, column in enumerate(self.reference_alike):
            values = set(column)
            for act_index, other in enumerate(actual_sets):
                shared = len(values & other)
                if shared:
                    overlap = shared / len(values | other)
                    ranked.append((act_index in self.candidates[ref_index], overlap, -ref_index, -act_index))
        pairs: dict[int, int] = {}
        for _, _, ref_key, act_key in sorted(ranked, reverse=True):
            if -ref_key not in pairs and -act_key not in pairs.values():
                pairs[-ref_key] = -act_key
        return pairs

    def _row_differences(self, mapping: dict[int, int]) -> dict[str, Any]:
        reference_rows = list(zip(*self.reference_columns, strict=True))
        if not mapping:
            return self._row_lists(reference_rows, list(self.actual.variables), self.actual.rows)
        ref_indices = sorted(mapping)
        act_indices = [mapping[index] for index in ref_indices]
        reference_keys = [tuple(row[index] for index in ref_indices) for row in reference_rows]
        actual_keys = list(zip(*(self.actual.columns[index] for index in act_indices), strict=True))
        if self.blank:  # reference blank nodes renamed to their partners, unpaired ones matching nothing
            ordered, distinct = self.mode is RowMode.SEQUENCE, self.mode is RowMode.SET
            reference_keys = renamed(
                reference_keys, pairing(reference_keys, actual_keys, ordered=ordered, distinct=distinct)
            )
        multiset = self.mode is not RowMode.SET
        missing = _unmatched(reference_rows, reference_keys, actual_keys, multiset)
        extra = _unmatched(actual_keys, actual_keys, reference_keys, multiset)
        names = [self.actual.variables[index] for index in act_indices]
        result = self._row_lists(missing, names, extra)
        if self.mode is RowMode.SEQUENCE and not missing and not extra:
            pairs = zip(reference_keys, actual_keys, strict=True)
            result["first_differing_row"] = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
        return result

    def _row_lists(
        self,
        missing: Sequence[tuple[Term, ...]],
        actual_names: list[str],
        extra: Sequence[tuple[Term, ...]],
    ) -> dict[str, Any]:
        return {
            "missing_rows": [_row_dict(self.required, row) for row in missing[: self.limit]],
            "missing_rows_total": len(missing),
            "extra_rows": [_row_dict(actual_names, row) for row in extra[: self.limit]],
            "extra_rows_total": len(extra),
        }


def _row_difference_reason(result: Mapping[str, Any]) -> str | None:
    """With every required column mapped, the rows themselves say best what differs."""
    missing, extra = result["missing_rows_total"], result["extra_rows_total"]
    if not missing and not extra:
        return None
    parts = [f"{count} {label} row(s)" for count, label in ((missing, "missing"), (extra, "extra")) if count]
    return f"under the closest column mapping: {' and '.join(parts)}"


def _unmatched(
    rows: Sequence[tuple[Term, ...]], keys: Sequence[Any], other_keys: Sequence[Any], multiset: bool
) -> list[tuple[Term, ...]]:
    """Rows whose key the other side lacks (each other-side row used once when `multiset`)."""
    available: Counter[Any] = Counter(other_keys)
    unmatched: list[tuple[Term, ...]] = []
    for row, key in zip(rows, keys, strict=True):
        if available[key] > 0:
            if multiset:
                available[key] -= 1
        else:
            unmatched.append(row)
    return unmatched


def _row_dict(names: Sequence[str], row: Sequence[Term]) -> dict[str, Any]:
    return {name: display_term(term) for name, term in zip(names, row, strict=True)}
