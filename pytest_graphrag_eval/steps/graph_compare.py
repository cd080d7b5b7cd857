"""CONSTRUCT and DESCRIBE outputs compared as RDF graphs, equal up to blank-node renaming, whatever
the syntax, order or prefixes (graphrag-eval compares them as strings)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import graph_expectation
from pytest_graphrag_eval.formats.rdf_graphs import (
    RdfGraph,
    RdfGraphError,
    is_rdf_media_type,
    parse_rdf_graph,
    part_triples,
)

DEFAULT_LIMIT = 10
_BLANK_LABEL = re.compile(r"(?<!\S)_:b(\d+)(?!\S)")


@dataclass(frozen=True)
class GraphDifference:
    """Triple counts of two graphs and the triples only one side has (N-Triples lines)."""

    reference_triples: int
    actual_triples: int
    shared_triples: int
    missing: tuple[str, ...]
    extra: tuple[str, ...]

    @property
    def isomorphic(self) -> bool:
        return not self.missing and not self.extra


def actual_graph(reference_step: Mapping[str, Any], actual_step: Mapping[str, Any]) -> RdfGraph:
    """The graph an actual step output holds; raises RdfGraphError when it does not parse."""
    own = actual_step.get("output_media_type")
    media = str(own if is_rdf_media_type(own) else reference_step["output_media_type"])
    return parse_rdf_graph(actual_step.get("output"), media)


def graph_output_score(reference_step: Mapping[str, Any], actual_step: Mapping[str, Any]) -> float:
    """1.0 when the actual output is the reference graph up to blank-node renaming; unreadable: 0.0."""
    try:
        actual = actual_graph(reference_step, actual_step)
    except RdfGraphError:
        return 0.0
    return float(graph_expectation(reference_step).parts == actual.parts)


def graph_difference(reference: RdfGraph, actual: RdfGraph) -> GraphDifference:
    """The reference's triples the actual graph lacks, and the actual's the reference lacks; a
    blank-node-linked group differing in one triple is listed whole on both sides."""
    expected, got = Counter(reference.parts), Counter(actual.parts)
    shared = sum(len(part_triples(key)) * count for key, count in (expected & got).items())
    return GraphDifference(
        reference_triples=reference.triple_count,
        actual_triples=actual.triple_count,
        shared_triples=shared,
        missing=_lines(expected - got, "m"),
        extra=_lines(got - expected, "x"),
    )


def explain_graph_mismatch(
    reference_step: Mapping[str, Any], actual_step: Mapping[str, Any], *, limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """Why an actual output is not the reference graph, JSON-friendly; never raises for bad agent output."""
    try:
        expected = graph_expectation(reference_step)
    except ValueError as error:
        return {"matched": False, "reason": f"the reference step is invalid: {error}"}
    try:
        actual = actual_graph(reference_step, actual_step)
    except RdfGraphError as error:
        return {"matched": False, "reason": f"the actual output is {_lowered(error)}"}
    difference = graph_difference(expected, actual)
    counts = [
        f"{len(lines)} {label} triple(s)"
        for lines, label in ((difference.missing, "missing"), (difference.extra, "extra"))
        if lines
    ]
    return {
        "matched": difference.isomorphic,
        "reason": " and ".join(counts) if counts else "the graphs are equal up to blank-node names",
        "reference_triple_count": difference.reference_triples,
        "actual_triple_count": difference.actual_triples,
        "missing_triples": list(difference.missing[:limit]),
        "missing_triples_total": len(difference.missing),
        "extra_triples": list(difference.extra[:limit]),
        "extra_triples_total": len(difference.extra),
    }


def _lines(parts: Counter[str], side: str) -> tuple[str, ...]:
    """The triples of `parts`, sorted; each group's blank nodes get labels of their own."""
    lines: list[str] = []
    group = 0
    for key in sorted(parts.elements()):
        triples = part_triples(key)
        if any(_BLANK_LABEL.search(line) for line in triples):
            group += 1
            prefix = f"_:{side}{group}b"
            triples = [_BLANK_LABEL.sub(prefix + r"\1", line) for line in triples]
        lines.extend(f"{line} ." for line in triples)
    return tuple(lines)


def _lowered(error: BaseException) -> str:
    text = str(error)
    return text[:1].lower() + text[1:]
