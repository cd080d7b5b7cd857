"""Match score of one reference step against one actual step.

Only a successful actual step (`status: success`) can match. The first rule
that applies decides the score:

1. `output_media_type: application/sparql-results+json` - SPARQL result
   comparison, 0 or 1 (sparql_compare.py); the names must be equal.
2. `output_media_type: application/json` - 1 when both outputs parse to the
   same JSON value (true is not 1; 1 equals 1.0); the names must be equal.
3. reference step `retrieval` - recall@k of the relevant ids (the reference
   output's documents) among the actual step's retrieved ids; k is the
   reference step's `args.k`, else the actual step's, else every retrieved id.
4. reference step `iri_discovery` - 1 when its IRI is bound as an IRI in the
   results of an actual `autocomplete_search` or `sparql_query` step, or an
   actual `iri_discovery` step outputs exactly that IRI.
5. otherwise 1 when the names and output texts are exactly equal.

An actual output that cannot be read (not JSON, not SPARQL results, not a
document list) scores 0; nothing about an agent's output raises.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import (
    IRI_DISCOVERY_STEP,
    JSON_MEDIA_TYPE,
    RETRIEVAL_STEP,
    SPARQL_RESULTS_MEDIA_TYPE,
    cutoff,
    media_type,
    reference_iri,
    relevant_ids,
    sparql_expectation,
)
from pytest_graphrag_eval.formats.documents import parse_retrieved_ids
from pytest_graphrag_eval.formats.sparql_results import (
    ResultsParser,
    SparqlResultsError,
    parse_sparql_results,
    uri_values,
)
from pytest_graphrag_eval.metrics.ranking import recall_at_k
from pytest_graphrag_eval.steps.sparql_compare import results_match

IRI_SOURCE_STEPS = ("autocomplete_search", "sparql_query")


def step_match_score(
    reference_step: Mapping[str, Any],
    actual_step: Mapping[str, Any],
    parse: ResultsParser = parse_sparql_results,
) -> float:
    """Score in [0, 1]; only recall@k of retrieval steps takes values between 0 and 1.

    The reference step must be valid (see `reference_step_problem`); an invalid
    one raises ValueError. `parse` reads SPARQL results (pass a `memoized_parser()`
    when scoring many pairs).
    """
    if actual_step.get("status") != "success":
        return 0.0
    name = reference_step.get("name")
    media = media_type(reference_step)
    if media is None and name == IRI_DISCOVERY_STEP:
        return iri_discovery_score(reference_step, actual_step)
    if actual_step.get("name") != name:
        return 0.0
    output = actual_step.get("output")
    if media == SPARQL_RESULTS_MEDIA_TYPE:
        return sparql_output_score(reference_step, output, parse)
    if media == JSON_MEDIA_TYPE:
        return float(json_outputs_equal(reference_step.get("output"), output))
    if name == RETRIEVAL_STEP:
        return retrieval_recall(reference_step, actual_step)
    return float(isinstance(output, str) and output == reference_step.get("output"))


def sparql_output_score(
    reference_step: Mapping[str, Any], actual_output: Any, parse: ResultsParser = parse_sparql_results
) -> float:
    """1.0 when the actual output matches the SPARQL reference step, else 0.0."""
    expected = sparql_expectation(reference_step, parse)
    try:
        actual = parse(actual_output)
    except SparqlResultsError:
        return 0.0
    matched = results_match(
        expected.table,
        actual,
        expected.required_columns,
        ordered=expected.ordered,
        ignore_duplicates=expected.ignore_duplicates,
    )
    return float(matched)


def json_outputs_equal(reference_output: Any, actual_output: Any) -> bool:
    """Equal JSON values; the actual output must be JSON text, the reference may be parsed already."""
    if not isinstance(actual_output, str):
        return False
    try:
        actual = json.loads(actual_output)
        expected = json.loads(reference_output) if isinstance(reference_output, str) else reference_output
    except (ValueError, RecursionError):
        return False
    return json_values_equal(expected, actual)


def json_values_equal(left: Any, right: Any) -> bool:
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


def _scalar_kind(value: Any) -> str | None:
    if isinstance(value, (int, float)):
        return "number"
    return "text" if isinstance(value, str) else None


def retrieval_recall(reference_step: Mapping[str, Any], actual_step: Mapping[str, Any]) -> float:
    """recall@k of the reference's relevant documents among the actual retrieved ids."""
    relevant = relevant_ids(reference_step)
    k = cutoff(reference_step)
    if k is None:
        try:
            k = cutoff(actual_step)
        except ValueError:  # the agent's own k is only a fallback; a bad one is ignored
            k = None
    try:
        retrieved = parse_retrieved_ids(actual_step.get("output"))
    except ValueError:
        return 0.0
    return recall_at_k(relevant, retrieved, k)


def iri_discovery_score(reference_step: Mapping[str, Any], actual_step: Mapping[str, Any]) -> float:
    """1.0 when the actual step found the reference step's IRI (see rule 4)."""
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
        return 0.0
