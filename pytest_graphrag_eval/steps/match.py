"""Match score of one reference step against one actual step (the rules: docs/steps.md).

An actual output that cannot be read scores 0; nothing about an agent's output raises.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pytest_graphrag_eval.corpus.reference_steps import (
    DATA_POINTS_STEP,
    IRI_DISCOVERY_STEP,
    JSON_MEDIA_TYPE,
    RETRIEVAL_STEP,
    SPARQL_RESULTS_MEDIA_TYPE,
    TIME_SERIES_STEP,
    cutoff,
    media_type,
    reference_iri,
    relevant_ids,
    sparql_expectation,
)
from pytest_graphrag_eval.formats.documents import parse_documents
from pytest_graphrag_eval.formats.rdf_graphs import is_rdf_media_type
from pytest_graphrag_eval.formats.sparql_results import (
    ResultsParser,
    SparqlResultsError,
    parse_sparql_results,
    uri_values,
)
from pytest_graphrag_eval.steps.graph_compare import graph_output_score
from pytest_graphrag_eval.steps.sparql_compare import shared_results_match
from pytest_graphrag_eval.steps.timeseries import data_points_score, time_series_score

IRI_SOURCE_STEPS = ("autocomplete_search", "sparql_query")


def step_match_score(
    reference_step: Mapping[str, object],
    actual_step: Mapping[str, object],
    parse: ResultsParser = parse_sparql_results,
) -> float:
    """Score in [0, 1]; the reference step must be valid (see `reference_step_problem`), else ValueError."""
    if actual_step.get("status") != "success":
        return 0.0
    name = reference_step.get("name")
    if name == IRI_DISCOVERY_STEP:
        return iri_discovery_score(reference_step, actual_step)
    if actual_step.get("name") != name:
        return 0.0
    if name == TIME_SERIES_STEP:
        return time_series_score(reference_step, actual_step)
    if name == DATA_POINTS_STEP:
        return data_points_score(reference_step, actual_step)
    media = media_type(reference_step)
    output = actual_step.get("output")
    if media == SPARQL_RESULTS_MEDIA_TYPE:
        return sparql_output_score(reference_step, output, parse)
    if is_rdf_media_type(media):
        return graph_output_score(reference_step, actual_step)
    if media == JSON_MEDIA_TYPE:
        return float(json_outputs_equal(reference_step.get("output"), output))
    if name == RETRIEVAL_STEP:
        return retrieval_step_recall(reference_step, actual_step)
    return float(json_values_equal(reference_step.get("output"), output))


def sparql_output_score(
    reference_step: Mapping[str, object], actual_output: object, parse: ResultsParser = parse_sparql_results
) -> float:
    """1.0 when the actual output matches the SPARQL reference step, else 0.0."""
    expected = sparql_expectation(reference_step, parse)
    try:
        actual = parse(actual_output, expected.literal_match)
    except SparqlResultsError:
        return 0.0
    matched = shared_results_match(
        parse,
        expected.table,
        actual,
        expected.required_columns,
        ordered=expected.ordered,
        ignore_duplicates=expected.ignore_duplicates,
    )
    return float(matched)


def json_outputs_equal(reference_output: object, actual_output: object) -> bool:
    """Equal JSON values; either side may be JSON text or an already-parsed value."""
    try:
        actual = json.loads(actual_output) if isinstance(actual_output, str) else actual_output
        expected = json.loads(reference_output) if isinstance(reference_output, str) else reference_output
    except (ValueError, RecursionError):
        return False
    return json_values_equal(expected, actual)


def json_values_equal(left: object, right: object) -> bool:
    """Deep equality where booleans never equal numbers (Python's True == 1 does not apply)."""
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
            if a is not b:
                return False
        elif _scalar_kind(a) is not None and _scalar_kind(a) == _scalar_kind(b):
            if a != b:
                return False
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        else:
            return False
    return True


def _scalar_kind(value: object) -> str | None:
    if isinstance(value, (int, float)):
        return "number"
    return "text" if isinstance(value, str) else None


def retrieval_step_recall(reference_step: Mapping[str, object], actual_step: Mapping[str, object]) -> float:
    """Relevant documents among the first k retrieved, over min(k, number relevant) (rule 7)."""
    relevant = set(relevant_ids(reference_step))
    k = _valid_cutoff(actual_step) or cutoff(reference_step)
    try:
        retrieved = [document.id for document in parse_documents(actual_step.get("output"))]
    except ValueError:
        return 0.0
    if k is None:
        return len(relevant.intersection(retrieved)) / len(relevant)
    return len(relevant.intersection(retrieved[:k])) / min(k, len(relevant))


def _valid_cutoff(step: Mapping[str, object]) -> int | None:
    """The agent's own `args.k`; an unusable value is ignored rather than failing the question."""
    try:
        return cutoff(step)
    except ValueError:
        return None


def iri_discovery_score(reference_step: Mapping[str, object], actual_step: Mapping[str, object]) -> float:
    """1.0 when the actual step found the reference step's IRI (see rule 1)."""
    iri = reference_iri(reference_step)
    output = actual_step.get("output")
    name = actual_step.get("name")
    if name == IRI_DISCOVERY_STEP:
        return float(isinstance(output, str) and output.strip().strip("<>").strip() == iri)
    if name not in IRI_SOURCE_STEPS:
        return 0.0
    try:
        return float(iri in uri_values(output))
    except SparqlResultsError:
        # A CONSTRUCT/DESCRIBE answer (Turtle, N-Triples) writes IRIs as <iri>.
        return float(name == "sparql_query" and isinstance(output, str) and f"<{iri}>" in output)
