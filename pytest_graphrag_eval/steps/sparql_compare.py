"""Does an actual SPARQL result carry the reference result's required columns?

A required column maps only to actual columns with an equal value collection (its signature), so
the remaining depth-first search is tiny and cost about linear in rows. Blank nodes are collapsed
for signatures and a complete mapping must pass `blank_nodes.equivalent_rows`.
"""

from __future__ import annotations

import enum
import itertools
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence

from pytest_graphrag_eval.formats.sparql_results import MemoizedParser, ResultsParser, SparqlTable
from pytest_graphrag_eval.steps.blank_nodes import Equivalence, collapsed, equivalent_rows

Column = tuple[Hashable, ...]
"""A column of terms, or of their integer codes (see `encode_column`)."""
Row = tuple[Hashable, ...]
RowsCollection = list[Row] | set[Row] | Counter[Row]
"""Projected rows as a mode compares them: a sequence, a set or a multiset."""


class RowMode(enum.Enum):
    """How the projected rows of two results are compared."""

    SEQUENCE = "ordered"
    SET = "unordered"
    MULTISET = "unordered, duplicates count"


def row_mode(ordered: bool, ignore_duplicates: bool) -> RowMode:
    if ordered:
        return RowMode.SEQUENCE
    return RowMode.SET if ignore_duplicates else RowMode.MULTISET


def rows_collection(columns: Sequence[Column], row_count: int, mode: RowMode) -> RowsCollection:
    """The projected rows as the collection the mode compares (list, set or Counter)."""
    rows: Iterable[Row] = zip(*columns, strict=True) if columns else [()] * row_count
    if mode is RowMode.SEQUENCE:
        return list(rows)
    if mode is RowMode.SET:
        return set(rows)
    return Counter(rows)


def column_signature(column: Column, mode: RowMode) -> Hashable:
    """The value collection a mapped column pair must share in this mode."""
    if mode is RowMode.SEQUENCE:
        return column
    if mode is RowMode.SET:
        return frozenset(column)
    return frozenset(Counter(column).items())


def results_match(
    reference: SparqlTable,
    actual: SparqlTable,
    required_columns: Sequence[str],
    *,
    ordered: bool = False,
    ignore_duplicates: bool = True,
) -> bool:
    """True when `actual` matches `reference` on `required_columns`; empty results match only when both
    are empty and `actual` has enough variables."""
    if reference.is_ask or actual.is_ask:
        return reference.boolean == actual.boolean
    if actual is reference and _distinct_variables_of(required_columns, reference):
        return True  # one output text, one parsed table (MemoizedParser): every mode agrees
    if len(required_columns) > len(actual.variables):
        return False
    if reference.row_count == 0 or actual.row_count == 0:
        return reference.row_count == actual.row_count
    if not required_columns:
        return True  # nothing to compare: any rows will do
    mode = row_mode(ordered, ignore_duplicates)
    if reference.blank_nodes or actual.blank_nodes:
        return find_column_mapping(reference, actual, required_columns, mode) is not None
    if len(required_columns) > 1 and _agree_by_name(reference, actual, required_columns, mode):
        return True  # the agent kept the reference's variable names; else any mapping is searched
    return find_column_mapping(reference, actual, required_columns, mode) is not None


def _agree_by_name(
    reference: SparqlTable, actual: SparqlTable, required_columns: Sequence[str], mode: RowMode
) -> bool:
    """Whether same-named columns make the rows agree: a mapping the search would accept, tried first
    since agents usually keep the query's names."""
    if not _distinct_variables_of(required_columns, actual):
        return False
    projected = rows_collection([actual.column(name) for name in required_columns], actual.row_count, mode)
    expected = rows_collection(
        [reference.column(name) for name in required_columns], reference.row_count, mode
    )
    return projected == expected


def _distinct_variables_of(columns: Sequence[str], table: SparqlTable) -> bool:
    return len(set(columns)) == len(columns) and set(columns) <= set(table.variables)


def shared_results_match(
    parse: ResultsParser,
    reference: SparqlTable,
    actual: SparqlTable,
    required_columns: Sequence[str],
    *,
    ordered: bool = False,
    ignore_duplicates: bool = True,
) -> bool:
    """`results_match`, computed once per pair of tables for every caller sharing `parse` (the memo
    holds the tables, so the ids in its keys stay theirs)."""
    if not isinstance(parse, MemoizedParser):
        return results_match(
            reference, actual, required_columns, ordered=ordered, ignore_duplicates=ignore_duplicates
        )
    key = (id(reference), id(actual), tuple(required_columns), ordered, ignore_duplicates)
    known = parse.comparisons.get(key)
    if known is None:
        matched = results_match(
            reference, actual, required_columns, ordered=ordered, ignore_duplicates=ignore_duplicates
        )
        known = parse.comparisons[key] = (reference, actual, matched)
    return bool(known[2])


def find_column_mapping(
    reference: SparqlTable,
    actual: SparqlTable,
    required_columns: Sequence[str],
    mode: RowMode,
    outcomes: list[Equivalence] | None = None,
) -> dict[str, str] | None:
    """A mapping {required column: actual variable} under which the rows agree, or None; `outcomes`
    collects how each complete blank-node mapping came out."""
    if len(required_columns) > len(actual.variables):
        return None
    if mode is not RowMode.SET and reference.row_count != actual.row_count:
        return None
    if reference.blank_nodes or actual.blank_nodes:
        return _blank_node_mapping(reference, actual, required_columns, mode, outcomes)
    if len(required_columns) == 1:
        # One column: its rows agree exactly when the signatures do, and each term is hashed once
        # either way; the numbering and the search below would only add their own bookkeeping.
        [name] = required_columns
        signature = column_signature(reference.column(name), mode)
        return next(
            (
                {name: variable}
                for variable, column in zip(actual.variables, actual.columns, strict=True)
                if column_signature(column, mode) == signature
            ),
            None,
        )
    originals = [reference.column(name) for name in required_columns]
    # Terms are equal exactly when their numbers are: the signatures are compared before numbering,
    # which only pays off for the search, so results that cannot match are never numbered.
    candidates = signature_candidates(originals, actual.columns, mode)
    if any(not options for options in candidates):
        return None
    codes: dict[Hashable, int] = {}
    fresh = itertools.count()
    reference_columns = [encode_column(column, codes, fresh) for column in originals]
    actual_columns = [encode_column(column, codes, fresh) for column in actual.columns]
    order = sorted(range(len(required_columns)), key=lambda index: len(candidates[index]))
    search = _MappingSearch(
        [reference_columns[index] for index in order],
        [candidates[index] for index in order],
        actual_columns,
        reference.row_count,
        mode,
    )
    found = search.run()
    if found is None:
        return None
    return {required_columns[order[depth]]: actual.variables[column] for depth, column in enumerate(found)}


def _blank_node_mapping(
    reference: SparqlTable,
    actual: SparqlTable,
    required_columns: Sequence[str],
    mode: RowMode,
    outcomes: list[Equivalence] | None,
) -> dict[str, str] | None:
    """`find_column_mapping` for tables holding blank nodes: the search runs on collapsed columns and
    each complete mapping must also pass the renaming check."""
    originals = [reference.column(name) for name in required_columns]
    codes: dict[Hashable, int] = {}
    fresh = itertools.count()
    reference_columns = [encode_column(collapsed(column), codes, fresh) for column in originals]
    actual_columns = [encode_column(collapsed(column), codes, fresh) for column in actual.columns]
    candidates = signature_candidates(reference_columns, actual_columns, mode)
    if any(not options for options in candidates):
        return None
    order = sorted(range(len(required_columns)), key=lambda index: len(candidates[index]))
    reference_rows = list(zip(*(originals[index] for index in order), strict=True))

    def renaming_exists(chosen: list[int]) -> bool:
        actual_rows = list(zip(*(actual.columns[index] for index in chosen), strict=True))
        outcome = equivalent_rows(
            reference_rows, actual_rows, ordered=mode is RowMode.SEQUENCE, distinct=mode is RowMode.SET
        )
        if outcomes is not None:
            outcomes.append(outcome)
        return outcome is Equivalence.EQUAL

    search = _MappingSearch(
        [reference_columns[index] for index in order],
        [candidates[index] for index in order],
        actual_columns,
        reference.row_count,
        mode,
        accept=renaming_exists,
        alike=actual.columns,
    )
    found = search.run()
    if found is None:
        return None
    return {required_columns[order[depth]]: actual.variables[column] for depth, column in enumerate(found)}


def encode_column(
    column: Sequence[Hashable], codes: dict[Hashable, int], fresh: Iterator[int]
) -> tuple[int, ...]:
    """The column with each term replaced by its number in `codes`: small ints hash at once where
    Decimals hash slowly; `fresh` is shared by one comparison's columns."""
    return tuple(map(codes.setdefault, column, fresh))


def signature_candidates(
    reference_columns: Sequence[Column], actual_columns: Sequence[Column], mode: RowMode
) -> list[list[int]]:
    """For each reference column, the indices of actual columns with an equal signature."""
    by_signature: dict[Hashable, list[int]] = {}
    for index, column in enumerate(actual_columns):
        by_signature.setdefault(column_signature(column, mode), []).append(index)
    return [list(by_signature.get(column_signature(column, mode), ())) for column in reference_columns]


class _MappingSearch:
    """Depth-first search for an injective column mapping, pruned by projected-row checks."""

    def __init__(
        self,
        reference_columns: Sequence[Column],
        candidates: list[list[int]],
        actual_columns: Sequence[Column],
        row_count: int,
        mode: RowMode,
        *,
        accept: Callable[[list[int]], bool] | None = None,
        alike: Sequence[Column] | None = None,
    ):
        self.reference_columns = reference_columns
        self.candidates = candidates
        self.actual_columns = actual_columns
        self.mode = mode
        self.row_count = row_count
        self.accept = accept
        self.column_class = _identical_column_classes(actual_columns if alike is None else alike)
        self.reference_prefixes: dict[int, RowsCollection] = {}
        # Checking a prefix only pays off once some column had a choice.
        self.first_choice = next(
            (depth for depth, options in enumerate(candidates) if len(options) > 1), len(candidates)
        )

    def run(self) -> list[int] | None:
        return self._extend([])

    def _extend(self, chosen: list[int]) -> list[int] | None:
        depth = len(chosen)
        if depth == len(self.reference_columns):
            agrees = self._prefix_agrees(chosen) and (self.accept is None or self.accept(chosen))
            return chosen if agrees else None
        tried: set[int] = set()
        for column in self.candidates[depth]:
            column_class = self.column_class[column]
            if column in chosen or column_class in tried:
                continue
            tried.add(column_class)
            attempt = [*chosen, column]
            if self.first_choice <= depth < len(self.reference_columns) - 1 and not self._prefix_agrees(
                attempt
            ):
                continue
            found = self._extend(attempt)
            if found is not None:
                return found
        return None

    def _prefix_agrees(self, chosen: list[int]) -> bool:
        depth = len(chosen)
        if depth not in self.reference_prefixes:
            self.reference_prefixes[depth] = rows_collection(
                self.reference_columns[:depth], self.row_count, self.mode
            )
        actual = rows_collection([self.actual_columns[index] for index in chosen], self.row_count, self.mode)
        return self.reference_prefixes[depth] == actual


def _identical_column_classes(columns: Sequence[Column]) -> list[int]:
    """Per column, the index of the first column with identical content (they are interchangeable)."""
    first: dict[Column, int] = {}
    return [first.setdefault(column, index) for index, column in enumerate(columns)]
