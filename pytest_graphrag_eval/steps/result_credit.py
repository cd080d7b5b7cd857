"""Per-question partial credit: `steps_result_precision`, `steps_result_recall`, `steps_result_f1`.

Result-bearing reference steps in scope are paired one-to-one with same-named actual steps for the
largest summed F1; an unreadable graph output is reported, never just a quiet 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pytest_graphrag_eval.corpus.reference_steps import (
    SPARQL_RESULTS_MEDIA_TYPE,
    graph_expectation,
    media_type,
    sparql_expectation,
)
from pytest_graphrag_eval.formats.rdf_graphs import RdfGraphError, is_rdf_media_type
from pytest_graphrag_eval.formats.sparql_results import MemoizedParser, ResultsParser, SparqlResultsError
from pytest_graphrag_eval.steps.assignment import max_weight_assignment
from pytest_graphrag_eval.steps.graph_compare import actual_graph, graph_difference
from pytest_graphrag_eval.steps.groups import StepMatch
from pytest_graphrag_eval.steps.result_overlap import NONE, Overlap, counted_overlap, sparql_overlap

_RESOLUTION = 10**9


class ResultCredit(NamedTuple):
    """Mean precision, recall and F1 over the result-bearing reference steps, and unreadable outputs."""

    precision: float
    recall: float
    f1: float
    unreadable: tuple[str, ...]


def is_result_step(step: Mapping[str, Any]) -> bool:
    """A reference step whose output is a result set: SPARQL results JSON or an RDF graph."""
    media = media_type(step)
    return media == SPARQL_RESULTS_MEDIA_TYPE or is_rdf_media_type(media)


FULL_CREDIT = ResultCredit(1.0, 1.0, 1.0, ())


def result_credit(
    reference_steps: Sequence[Sequence[Mapping[str, Any]]],
    actual_steps: Sequence[Mapping[str, Any]],
    scope: str = "last_group",
    parse: ResultsParser | None = None,
    matches: Sequence[StepMatch] = (),
) -> ResultCredit | None:
    """Partial credit of one question, None without result-bearing steps in scope; full without a
    comparison when the steps score's `matches` cover every SPARQL step and no graph step is in scope."""
    first = len(reference_steps) - 1 if scope == "last_group" else 0
    located = [
        (group_index, index, step)
        for group_index in range(first, len(reference_steps))
        for index, step in enumerate(reference_steps[group_index])
        if is_result_step(step)
    ]
    if not located:
        return None
    matched = {(match.group_index, match.reference_index) for match in matches if match.score == 1}
    if all(
        (group_index, index) in matched and media_type(step) == SPARQL_RESULTS_MEDIA_TYPE
        for group_index, index, step in located
    ):
        return FULL_CREDIT
    references = [step for _, _, step in located]
    parse = parse or MemoizedParser()
    steps = [step if isinstance(step, Mapping) else {} for step in actual_steps]
    unreadable: list[str] = []
    overlaps = [
        [_pair_overlap(reference, index, actual, parse, unreadable) for index, actual in enumerate(steps)]
        for reference in references
    ]
    weights = [[round(overlap.f1 * _RESOLUTION) for overlap in row] for row in overlaps]
    assignment = max_weight_assignment(weights)
    chosen = [overlaps[row][assignment[row]] if row in assignment else NONE for row in range(len(references))]
    count = len(chosen)  # means as `statistics.fmean` computes them, without its per-call checks
    return ResultCredit(
        precision=math.fsum([overlap.precision for overlap in chosen]) / count,
        recall=math.fsum([overlap.recall for overlap in chosen]) / count,
        f1=math.fsum([overlap.f1 for overlap in chosen]) / count,
        unreadable=tuple(dict.fromkeys(unreadable)),
    )


def _pair_overlap(
    reference: Mapping[str, Any],
    index: int,
    actual: Mapping[str, Any],
    parse: ResultsParser,
    unreadable: list[str],
) -> Overlap:
    if actual.get("status") != "success" or actual.get("name") != reference.get("name"):
        return NONE
    if media_type(reference) == SPARQL_RESULTS_MEDIA_TYPE:
        expected = sparql_expectation(reference, parse)
        try:
            table = parse(actual.get("output"), expected.literal_match)
        except SparqlResultsError:
            return NONE
        return sparql_overlap(expected, table, parse)
    try:
        graph = actual_graph(reference, actual)
    except RdfGraphError as error:
        text = str(error)
        unreadable.append(f"{_step_label(actual, index)}: its output is {text[:1].lower()}{text[1:]}")
        return NONE
    difference = graph_difference(graph_expectation(reference), graph)
    return counted_overlap(difference.reference_triples, difference.actual_triples, difference.shared_triples)


def _step_label(step: Mapping[str, Any], index: int) -> str:
    step_id = step.get("id")
    named = f"actual step {step_id!r} " if step_id is not None else "actual step "
    return f"{named}(actual_steps[{index}], {step.get('name')})"
