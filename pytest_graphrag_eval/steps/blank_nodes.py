"""Rows equal up to blank-node renaming: the SPARQL results equivalence, in one place.

Blank nodes are coloured by refinement (1-dimensional Weisfeiler-Leman), then paired within colours
by a search bounded by WORK_BOUND row visits; past it the answer is `UNDECIDED`, counted as not equal
and said so in failure reports (docs/steps.md).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence

from pytest_graphrag_eval.formats.terms import BlankNode, Term

WORK_BOUND = 2_000_000
"""Row visits (rows times refinement rounds) one comparison may spend searching for a renaming."""

Row = tuple[Term, ...]


class Equivalence(enum.Enum):
    EQUAL = "equal up to blank-node renaming"
    DIFFERENT = "different"
    UNDECIDED = "undecided: the blank-node search reached its bound"


class _Marker:
    """What every blank node becomes in a collapsed column: one value, never equal to a real term."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_:*"


BLANK = _Marker()


def collapsed(column: Sequence[Term]) -> tuple[Hashable, ...]:
    """The column with every blank node replaced by one marker: what any renaming leaves unchanged,
    so the column search can prune on it."""
    return tuple([BLANK if type(term) is BlankNode else term for term in column])


def equivalent_rows(
    reference: Sequence[Row],
    actual: Sequence[Row],
    *,
    ordered: bool,
    distinct: bool,
    bound: int = WORK_BOUND,
) -> Equivalence:
    """Whether one blank-node renaming makes the rows agree: as sequences (`ordered`), as sets
    (`distinct`) or as multisets."""
    if ordered:
        return _sequence_equivalence(reference, actual)
    return _Search(reference, actual, distinct=distinct, bound=bound).run()


def pairing(
    reference: Sequence[Row], actual: Sequence[Row], *, ordered: bool, distinct: bool
) -> dict[BlankNode, BlankNode]:
    """One renaming of the reference's blank nodes onto the actual's (the first the equivalence search
    tries), for counting shared rows when the results differ; a blank node without partner shares no row."""
    if ordered:
        found: dict[BlankNode, BlankNode] = {}
        taken: set[BlankNode] = set()
        for left, right in zip(reference, actual, strict=False):
            for a, b in zip(left, right, strict=False):
                if type(a) is BlankNode and type(b) is BlankNode and a not in found and b not in taken:
                    found[a] = b
                    taken.add(b)
        return found
    return _Search(reference, actual, distinct=distinct, bound=WORK_BOUND, strict=False).first_pairing()


def renamed(rows: Iterable[Row], renaming: Mapping[BlankNode, BlankNode]) -> list[Row]:
    """The rows with each blank node replaced by its partner; one without a partner becomes a value
    equal to nothing on the other side (a label shared by chance must not pair it)."""
    unpaired: dict[BlankNode, _Unpaired] = {}

    def partner(term: BlankNode) -> Term | _Unpaired:
        found = renaming.get(term)
        return found if found is not None else unpaired.setdefault(term, _Unpaired())

    return [tuple([partner(term) if type(term) is BlankNode else term for term in row]) for row in rows]  # type: ignore[misc]


class _Unpaired:
    """A reference blank node with no partner: equal only to itself."""

    __slots__ = ()


def _sequence_equivalence(reference: Sequence[Row], actual: Sequence[Row]) -> Equivalence:
    if len(reference) != len(actual):
        return Equivalence.DIFFERENT
    forward: dict[BlankNode, BlankNode] = {}
    backward: dict[BlankNode, BlankNode] = {}
    for left, right in zip(reference, actual, strict=True):
        if len(left) != len(right):
            return Equivalence.DIFFERENT
        for a, b in zip(left, right, strict=True):
            if type(a) is BlankNode and type(b) is BlankNode:
                if forward.setdefault(a, b) != b or backward.setdefault(b, a) != a:
                    return Equivalence.DIFFERENT
            elif type(a) is BlankNode or type(b) is BlankNode or a != b:
                return Equivalence.DIFFERENT
    return Equivalence.EQUAL


_BlankRow = tuple[Row, int, int, tuple[int, ...], list[tuple[int, tuple[int, ...]]]]


class _Search:
    """Colour refinement and a bounded individualisation search over the rows holding blank nodes."""

    def __init__(
        self,
        reference: Sequence[Row],
        actual: Sequence[Row],
        *,
        distinct: bool,
        bound: int,
        strict: bool = True,
    ):
        self.work = bound
        self.strict = strict  # False: refine even when the sides cannot agree (a pairing for counting)
        self.interned: dict[Hashable, int] = {}
        self.nodes: list[BlankNode] = []
        self.split = 0  # nodes[:split] are the reference's
        # Per side, the rows holding blank nodes: (row, count, shape of its ground part, its blank
        # nodes in order, each distinct one with the positions it takes).
        self.rows: list[list[tuple[Row, int, int, tuple[int, ...], list[tuple[int, tuple[int, ...]]]]]] = [
            [],
            [],
        ]
        self.agree = self._read(reference, actual, distinct)

    def _read(self, reference: Sequence[Row], actual: Sequence[Row], distinct: bool) -> bool:
        """Number the blank nodes; False when the rows cannot agree under any renaming."""
        ground: list[Counter[Row]] = [Counter(), Counter()]
        shapes: list[Counter[int]] = [Counter(), Counter()]
        for side, rows in enumerate((reference, actual)):
            counts = Counter(dict.fromkeys(rows, 1)) if distinct else Counter(rows)
            numbers: dict[BlankNode, int] = {}
            for row, count in counts.items():
                blanks = [(index, term) for index, term in enumerate(row) if type(term) is BlankNode]
                if not blanks:
                    ground[side][row] = count
                    continue
                shape = self._intern((count, collapsed(row)))
                shapes[side][shape] += count
                order = tuple(numbers.setdefault(term, len(self.nodes) + len(numbers)) for _, term in blanks)
                incidences: dict[int, list[int]] = {}
                for (index, _), node in zip(blanks, order, strict=True):
                    incidences.setdefault(node, []).append(index)
                self.rows[side].append(
                    (row, count, shape, order, [(node, tuple(at)) for node, at in incidences.items()])
                )
            self.nodes.extend(numbers)
            if side == 0:
                self.split = len(self.nodes)
        return ground[0] == ground[1] and shapes[0] == shapes[1]

    def run(self) -> Equivalence:
        if not self.agree:
            return Equivalence.DIFFERENT
        colours = self.refine([0] * len(self.nodes))
        if colours is None:
            return Equivalence.DIFFERENT if self.work > 0 else Equivalence.UNDECIDED
        return self._search(colours)

    def first_pairing(self) -> dict[BlankNode, BlankNode]:
        """The first renaming `run` tries: blank nodes of the same colour, in label order."""
        colours = self.refine([0] * len(self.nodes))
        return self._pair_by_colour(colours) if colours is not None else {}

    def refine(self, colours: list[int]) -> list[int] | None:
        """Colours refined until stable; None when the two sides' colour counts differ (no renaming)
        or the work bound is reached."""
        classes = len(set(colours))
        intern = self._intern
        while True:
            signatures: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in colours]
            for rows in self.rows:
                self.work -= len(rows)
                for _, _, shape, order, incidences in rows:
                    seen = intern((shape, tuple([colours[node] for node in order])))
                    for node, positions in incidences:
                        signatures[node].append((seen, positions))
            refined = [
                intern((colour, tuple(sorted(signature))))
                for colour, signature in zip(colours, signatures, strict=True)
            ]
            if self.work <= 0:
                return None
            if self.strict and Counter(refined[: self.split]) != Counter(refined[self.split :]):
                return None
            count = len(set(refined))
            if count == classes:
                return refined
            colours, classes = refined, count

    def _intern(self, key: Hashable) -> int:
        return self.interned.setdefault(key, len(self.interned))

    def _classes(self, colours: list[int]) -> dict[int, tuple[list[int], list[int]]]:
        """Per colour, (reference nodes, actual nodes), each in label order."""
        by_colour: dict[int, tuple[list[int], list[int]]] = {}
        for node, colour in enumerate(colours):
            by_colour.setdefault(colour, ([], []))[node >= self.split].append(node)
        for left, right in by_colour.values():
            left.sort(key=lambda node: self.nodes[node].label)
            right.sort(key=lambda node: self.nodes[node].label)
        return by_colour

    def _pair_by_colour(self, colours: list[int]) -> dict[BlankNode, BlankNode]:
        return {
            self.nodes[left]: self.nodes[right]
            for lefts, rights in self._classes(colours).values()
            for left, right in zip(lefts, rights, strict=False)
        }

    def _agrees(self, renaming: Mapping[BlankNode, BlankNode]) -> bool:
        reference, actual = self.rows
        self.work -= len(reference)
        rows = renamed((entry[0] for entry in reference), renaming)
        mapped = dict(zip(rows, (entry[1] for entry in reference), strict=True))
        return mapped == {entry[0]: entry[1] for entry in actual}

    def _search(self, colours: list[int]) -> Equivalence:
        if self._agrees(self._pair_by_colour(colours)):
            return Equivalence.EQUAL
        ambiguous = [sides for sides in self._classes(colours).values() if len(sides[0]) > 1]
        if not ambiguous:
            return Equivalence.DIFFERENT  # every blank node had one possible partner, and they disagree
        lefts, rights = min(ambiguous, key=lambda sides: len(sides[0]))
        fresh = self._intern(("fixed", len(self.interned)))
        for partner in rights:
            if self.work <= 0:
                return Equivalence.UNDECIDED
            attempt = list(colours)
            attempt[lefts[0]] = attempt[partner] = fresh
            refined = self.refine(attempt)
            if refined is None:
                if self.work <= 0:
                    return Equivalence.UNDECIDED
                continue
            outcome = self._search(refined)
            if outcome is not Equivalence.DIFFERENT:
                return outcome
        return Equivalence.DIFFERENT
