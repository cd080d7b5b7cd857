"""RDF graphs from CONSTRUCT/DESCRIBE step outputs, in a form that compares up to blank-node renaming. A graph
is a multiset of canonical minimum self-contained graphs (MSGs, as in RDFSync): two graphs are isomorphic
exactly when the multisets are equal, and a difference in one place never relabels the blank nodes of the rest
of the graph, as canonicalizing the whole graph would."""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.errors import install_extra_hint

RDF_MEDIA_TYPES: Mapping[str, str] = {
    "application/n-triples": "N-Triples",
    "text/turtle": "Turtle",
    "application/ld+json": "JSON-LD",
    "application/rdf+xml": "RDF/XML",
}
"""The media types of graph outputs (CONSTRUCT, DESCRIBE) and the syntax each names."""
INSTALL_HINT = install_extra_hint("rdf")
_CACHE_SIZE = 64
MAX_INTERCHANGEABLE_GROUP = 100
"""RDFC-1.0 takes seconds beyond about 200 linked blank nodes (pyoxigraph 0.5)."""


class RdfGraphError(ValueError):
    """The text is not an RDF graph in the stated syntax."""


class RdfSupportMissing(RdfGraphError):
    """pyoxigraph, which parses and canonicalizes RDF, is not installed."""


@dataclass(frozen=True)
class RdfGraph:
    """`parts` maps each MSG's key (its canonical N-Triples lines, blank nodes `_:b0`, `_:b1`, ... within
    the part) to its count."""

    parts: Mapping[str, int]

    @functools.cached_property
    def triple_count(self) -> int:
        return sum(len(part_triples(key)) * count for key, count in self.parts.items())


def part_triples(key: str) -> list[str]:
    """The N-Triples lines of one part (without the final ` .`)."""
    return key.split("\n")


def is_rdf_media_type(media_type: object) -> bool:
    return isinstance(media_type, str) and media_type in RDF_MEDIA_TYPES


def parse_rdf_graph(text: Any, media_type: str) -> RdfGraph:
    """The graph an output text holds in `media_type`'s syntax; raises RdfGraphError. Cached: a group
    compares each reference step with every actual step."""
    if not isinstance(text, str):
        raise RdfGraphError(f"a {RDF_MEDIA_TYPES[media_type]} output must be text, got {type(text).__name__}")
    return _parse_cached(text, media_type)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parse_cached(text: str, media_type: str) -> RdfGraph:
    pyoxigraph = _pyoxigraph()
    syntax = RDF_MEDIA_TYPES[media_type]
    try:
        quads = list(
            pyoxigraph.parse(
                text, format=pyoxigraph.RdfFormat.from_media_type(media_type), without_named_graphs=True
            )
        )
    except (SyntaxError, ValueError) as error:  # ValueError: an IRI or language tag the parser rejects
        raise RdfGraphError(f"not valid {syntax}: {_short(error)}") from None
    return RdfGraph(Counter(_canonical_parts(quads, pyoxigraph)))


def _pyoxigraph() -> Any:
    try:
        import pyoxigraph
    except ImportError:
        raise RdfSupportMissing(
            f"comparing CONSTRUCT/DESCRIBE outputs as RDF graphs needs pyoxigraph: {INSTALL_HINT}"
        ) from None
    return pyoxigraph


def _canonical_parts(quads: Sequence[Any], pyoxigraph: Any) -> Iterable[str]:
    """One canonical key per MSG: ground triples once each (a graph is a set), blank-node groups as found."""
    ground: set[str] = set()
    stated: set[str] = set()  # a triple stated twice is in the graph once, and must count once
    linked = _BlankNodeGroups()
    for quad in quads:
        triple = quad.triple
        blanks = [
            term.value for term in (triple.subject, triple.object) if isinstance(term, pyoxigraph.BlankNode)
        ]
        if not blanks:
            ground.add(str(triple))
        elif (text := str(triple)) not in stated:
            stated.add(text)
            linked.add(blanks, triple)
    yield from ground
    for triples in linked.groups():
        yield _canonical_group(triples, pyoxigraph)


class _BlankNodeGroups:
    """Union-find over blank-node labels, collecting the triples of each connected group."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.triples: list[tuple[str, Any]] = []

    def find(self, label: str) -> str:
        root = self.parent.setdefault(label, label)
        while root != self.parent[root]:
            root = self.parent[root]
        while label != root:  # path compression
            self.parent[label], label = root, self.parent[label]
        return root

    def add(self, labels: Sequence[str], triple: Any) -> None:
        roots = [self.find(label) for label in labels]
        for root in roots[1:]:
            self.parent[root] = roots[0]
        self.triples.append((labels[0], triple))

    def groups(self) -> Iterable[list[Any]]:
        """The triples of each group."""
        by_root: dict[str, list[Any]] = {}
        for label, triple in self.triples:
            by_root.setdefault(self.find(label), []).append(triple)
        return by_root.values()


def _canonical_group(triples: list[Any], pyoxigraph: Any) -> str:
    """The canonical N-Triples of one blank-node group. Colour refinement tells the blank nodes apart in
    almost every real graph; only interchangeable ones need RDFC-1.0, whose cost grows steeply."""
    colors = _refined_colors(triples, pyoxigraph)
    if len(set(colors.values())) == len(colors):
        labels = {node: f"_:b{rank}" for rank, node in enumerate(sorted(colors, key=colors.__getitem__))}
        lines = {_line(triple, lambda node: labels[node.value], pyoxigraph) for triple in triples}
        return "\n".join(sorted(lines))
    if len(colors) > MAX_INTERCHANGEABLE_GROUP:
        raise RdfGraphError(
            f"{len(colors)} blank nodes linked to each other include interchangeable ones; "
            f"graphs with such groups of more than {MAX_INTERCHANGEABLE_GROUP} blank nodes are not compared"
        )
    dataset = pyoxigraph.Dataset([pyoxigraph.Quad(t.subject, t.predicate, t.object) for t in triples])
    dataset.canonicalize(pyoxigraph.CanonicalizationAlgorithm.RDFC_1_0)
    lines = {
        _line(quad.triple, lambda node: "_:b" + node.value.removeprefix("c14n"), pyoxigraph)
        for quad in dataset
    }
    return "\n".join(sorted(lines))


def _refined_colors(triples: list[Any], pyoxigraph: Any) -> dict[str, str]:
    """A colour per blank node (a hash, equal across runs, of its neighbourhood), refined until no more
    nodes split apart."""
    edges: dict[str, list[tuple[str, str, str]]] = {}
    for triple in triples:
        predicate = str(triple.predicate)
        ends = ((triple.subject, ">", triple.object), (triple.object, "<", triple.subject))
        for node, direction, other in ends:
            if not isinstance(node, pyoxigraph.BlankNode):
                continue
            # A blank neighbour is written as its colour (looked up by label), a ground one as itself.
            entry = (
                (direction, predicate, other.value)
                if isinstance(other, pyoxigraph.BlankNode)
                else (direction + "=", predicate, str(other))
            )
            edges.setdefault(node.value, []).append(entry)
    colors = dict.fromkeys(edges, "")
    distinct = 1
    while True:
        refined = {node: _refined_color(colors, node, node_edges) for node, node_edges in edges.items()}
        count = len(set(refined.values()))
        if count == distinct:
            return refined
        colors, distinct = refined, count


def _refined_color(colors: Mapping[str, str], node: str, edges: Iterable[tuple[str, str, str]]) -> str:
    neighbourhood = sorted(
        f"{direction} {predicate} {other if direction.endswith('=') else colors[other]}"
        for direction, predicate, other in edges
    )
    return hashlib.sha256("\n".join([colors[node], *neighbourhood]).encode()).hexdigest()


def _line(triple: Any, blank_label: Any, pyoxigraph: Any) -> str:
    terms = (triple.subject, triple.predicate, triple.object)
    return " ".join(
        blank_label(term) if isinstance(term, pyoxigraph.BlankNode) else str(term) for term in terms
    )


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:200] or type(error).__name__
