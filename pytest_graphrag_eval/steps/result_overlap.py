"""Partial credit on result-bearing steps: precision, recall and F1 of one step's rows or triples.

Counted under the best-F1 column mapping and one blank-node renaming, in the step's row mode, so F1
is 1 exactly when `steps_score` matches. An empty actual result against a non-empty reference
scores precision 0 (docs/steps.md): a test must not reward an agent that stops answering.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import NamedTuple

from pytest_graphrag_eval.corpus.reference_steps import SparqlExpectation
from pytest_graphrag_eval.formats.sparql_results import ResultsParser, SparqlTable, parse_sparql_results
from pytest_graphrag_eval.formats.terms import Term
from pytest_graphrag_eval.steps.blank_nodes import collapsed, pairing, renamed
from pytest_graphrag_eval.steps.sparql_compare import (
    Column,
    RowMode,
    encode_column,
    row_mode,
    shared_results_match,
)

MAPPING_BUDGET = 512
"""Partial column mappings bounded per step (each costs a pass over the rows); real results need few."""


class Overlap(NamedTuple):
    """Precision, recall and F1 of one actual result against one reference result."""

    precision: float
    recall: float
    f1: float


FULL = Overlap(1.0, 1.0, 1.0)
NONE = Overlap(0.0, 0.0, 0.0)


def counted_overlap(reference: int, actual: int, shared: int) -> Overlap:
    """From sizes: both empty is full credit; one side empty is no credit (see the module docstring)."""
    if reference == 0 and actual == 0:
        return FULL
    if reference == 0 or actual == 0 or shared == 0:
        return NONE
    precision, recall = shared / actual, shared / reference
    return Overlap(precision, recall, 2 * precision * recall / (precision + recall))


def sparql_overlap(
    expected: SparqlExpectation, actual: SparqlTable, parse: ResultsParser = parse_sparql_results
) -> Overlap:
    """Rows of `actual` against a SPARQL reference step, under the column mapping with the best F1."""
    reference = expected.table
    matched = shared_results_match(
        parse,
        reference,
        actual,
        expected.required_columns,
        ordered=expected.ordered,
        ignore_duplicates=expected.ignore_duplicates,
    )
    if matched:
        return FULL
    if reference.is_ask or actual.is_ask or len(expected.required_columns) > len(actual.variables):
        return NONE
    mode = row_mode(expected.ordered, expected.ignore_duplicates)
    if not expected.required_columns or reference.row_count == 0 or actual.row_count == 0:
        return counted_overlap(reference.row_count, actual.row_count, 0)
    required = [reference.column(name) for name in expected.required_columns]
    if reference.blank_nodes or actual.blank_nodes:
        return _blank_node_overlap(required, actual.columns, mode)
    if len(required) == 1 and len(actual.columns) <= MAPPING_BUDGET:
        return one_column_overlap(required[0], actual.columns, mode)
    return _BestMapping(required, actual.columns, mode).overlap()


def one_column_overlap(
    reference_column: Sequence[Hashable], actual_columns: Sequence[Sequence[Hashable]], mode: RowMode
) -> Overlap:
    """`_BestMapping`'s answer for one required column, without its bookkeeping: each actual column
    sharing a value is a complete mapping, tried best bound first."""
    reference_values = set(reference_column)
    reference_size = len(reference_values) if mode is RowMode.SET else len(reference_column)
    options = []
    for index, column in enumerate(actual_columns):
        if reference_values.isdisjoint(column):
            continue
        if mode is RowMode.SET:
            bound = len(reference_values.intersection(column))
        else:
            bound = sum((Counter(reference_column) & Counter(column)).values())
        options.append((bound, index))
    best = NONE
    for bound, index in sorted(options, key=lambda option: (-option[0], option[1])):
        if bound == 0 or 2 * bound / (reference_size + bound) <= best.f1:
            break
        column = actual_columns[index]
        # Unordered, the shared distinct values (or values with repeats) are the shared rows.
        shared = longest_common_subsequence(reference_column, column) if mode is RowMode.SEQUENCE else bound
        found = counted_overlap(
            reference_size, len(set(column)) if mode is RowMode.SET else len(column), shared
        )
        if found.f1 > best.f1:
            best = found
    return best


def _blank_node_overlap(
    reference_columns: Sequence[tuple[Term, ...]], actual_columns: Sequence[tuple[Term, ...]], mode: RowMode
) -> Overlap:
    """The overlap under the column mapping best with blank nodes read as alike, then one renaming."""
    search = _BestMapping(
        [collapsed(column) for column in reference_columns],
        [collapsed(column) for column in actual_columns],
        mode,
    )
    search.overlap()
    if search.mapping is None:
        return NONE
    reference_rows = list(zip(*(reference_columns[index] for index in search.order), strict=True))
    actual_rows = list(zip(*(actual_columns[index] for index in search.mapping), strict=True))
    ordered, distinct = mode is RowMode.SEQUENCE, mode is RowMode.SET
    renaming = pairing(reference_rows, actual_rows, ordered=ordered, distinct=distinct)
    shared = _shared(renamed(reference_rows, renaming), actual_rows, mode)
    return counted_overlap(_size(reference_rows, mode), _size(actual_rows, mode), shared)


class _BestMapping:
    """Branch and bound over injective column mappings for the best F1, bounding each partial mapping
    by the rows a completion can share; exact unless MAPPING_BUDGET mappings were bounded."""

    def __init__(self, reference_columns: Sequence[Column], actual_columns: Sequence[Column], mode: RowMode):
        codes: dict[Hashable, int] = {}
        fresh = itertools.count()
        columns = [encode_column(column, codes, fresh) for column in reference_columns]
        self.actual_columns = [encode_column(column, codes, fresh) for column in actual_columns]
        candidates = self._candidates(columns)
        order = sorted(range(len(columns)), key=lambda index: len(candidates[index]))
        self.order = order
        self.mapping: tuple[int, ...] | None = None  # the best one found, in `order`
        self.reference_columns = [columns[index] for index in order]
        self.candidates = [candidates[index] for index in order]
        self.mode = mode
        self.reference_rows = _rows(self.reference_columns)
        self.reference_size = _size(self.reference_rows, mode)
        self.prefixes: dict[int, list[tuple[Hashable, ...]]] = {}
        self.best = NONE
        self.budget = MAPPING_BUDGET

    def overlap(self) -> Overlap:
        if all(self.candidates):
            self._extend(())
        return self.best

    def _candidates(self, reference_columns: Sequence[Column]) -> list[list[int]]:
        """Per reference column, the actual columns sharing at least one value with it."""
        actual_sets = [set(column) for column in self.actual_columns]
        return [
            [index for index, other in enumerate(actual_sets) if not other.isdisjoint(column)]
            for column in reference_columns
        ]

    def _extend(self, chosen: tuple[int, ...]) -> None:
        depth = len(chosen)
        if depth == len(self.reference_columns):
            found = self._score(chosen)
            if found.f1 > self.best.f1:
                self.best, self.mapping = found, chosen
            return
        options = []
        for column in self.candidates[depth]:
            if column in chosen:
                continue
            if self.budget <= 0:
                break
            self.budget -= 1
            options.append((self._bound((*chosen, column)), column))
        for bound, column in sorted(options, key=lambda option: (-option[0], option[1])):
            if bound == 0 or 2 * bound / (self.reference_size + bound) <= self.best.f1:
                break  # sorted by bound: no later option can do better
            self._extend((*chosen, column))

    def _bound(self, chosen: tuple[int, ...]) -> int:
        """The most rows any mapping extending `chosen` can share."""
        depth = len(chosen)
        if depth not in self.prefixes:
            self.prefixes[depth] = _rows(self.reference_columns[:depth])
        reference_prefix = self.prefixes[depth]
        actual_prefix = _rows([self.actual_columns[index] for index in chosen])
        if self.mode is RowMode.SET:
            present = set(actual_prefix)
            return len(
                {
                    row
                    for row, prefix in zip(self.reference_rows, reference_prefix, strict=True)
                    if prefix in present
                }
            )
        # Shared rows as multisets bound both the multiset overlap and the common subsequence.
        return sum((Counter(reference_prefix) & Counter(actual_prefix)).values())

    def _score(self, mapping: tuple[int, ...]) -> Overlap:
        actual_rows = _rows([self.actual_columns[index] for index in mapping])
        shared = _shared(self.reference_rows, actual_rows, self.mode)
        return counted_overlap(self.reference_size, _size(actual_rows, self.mode), shared)


def _rows(columns: Sequence[Column]) -> list[tuple[Hashable, ...]]:
    return list(zip(*columns, strict=True))


def _size(rows: Sequence[tuple[Hashable, ...]], mode: RowMode) -> int:
    return len(set(rows)) if mode is RowMode.SET else len(rows)


def _shared(
    reference: Sequence[tuple[Hashable, ...]], actual: Sequence[tuple[Hashable, ...]], mode: RowMode
) -> int:
    if mode is RowMode.SET:
        return len(set(reference) & set(actual))
    if mode is RowMode.MULTISET:
        return sum((Counter(reference) & Counter(actual)).values())
    return longest_common_subsequence(reference, actual)


def longest_common_subsequence(left: Sequence[Hashable], right: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence (Hunt-Szymanski, O(n log n) with distinct rows)."""
    positions: dict[Hashable, list[int]] = {}
    for index, item in enumerate(right):
        positions.setdefault(item, []).append(index)
    tails: list[int] = []  # tails[k]: smallest last position of an increasing run of length k + 1
    for item in left:
        for position in reversed(positions.get(item, ())):
            slot = bisect.bisect_left(tails, position)
            if slot == len(tails):
                tails.append(position)
            else:
                tails[slot] = position
    return len(tails)
