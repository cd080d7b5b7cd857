"""Lines explaining why a reference step matched no actual step, diffed against the closest actual
result or graph, for failure reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import media_type, reference_iri
from pytest_graphrag_eval.formats.rdf_graphs import is_rdf_media_type
from pytest_graphrag_eval.steps.graph_compare import explain_graph_mismatch
from pytest_graphrag_eval.steps.match import step_match_score
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch
from pytest_graphrag_eval.steps.timeseries import wrong_arguments

SPARQL_JSON = "application/sparql-results+json"
IRI_SOURCES = ("autocomplete_search", "sparql_query")
ROW_LIMIT = 5  # rows or triples shown of each difference


def explain_step_mismatch(
    reference_step: Mapping[str, Any], actual_steps: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Human-readable lines; never raises on malformed actual steps."""
    name = reference_step.get("name")
    if name == "iri_discovery":
        return [_iri_lines(reference_step, actual_steps)]
    candidates = [step for step in actual_steps if step.get("name") == name]
    successful = [step for step in candidates if step.get("status", "success") == "success"]
    if not candidates:
        return [
            f"no actual step named {name!r} was executed",
            *_unmapped_name_hints(reference_step, actual_steps),
        ]
    if not successful:
        return [f"{len(candidates)} actual {name!r} step(s), none successful"]
    if name in ("retrieve_time_series", "retrieve_data_points"):
        step = successful[-1]
        wrong = wrong_arguments(reference_step, step)
        return [f"latest actual {name!r} step {step.get('id', '?')} differs in its arguments:", *wrong]
    if is_rdf_media_type(media_type(reference_step)):
        graphs = [
            (step, explain_graph_mismatch(reference_step, step, limit=ROW_LIMIT)) for step in successful
        ]
        return _closest_lines(graphs, "triple", str)
    if media_type(reference_step) != SPARQL_JSON:
        return [f"{len(successful)} successful actual {name!r} step(s), none with a matching output"]
    explained = [
        (step, explain_sparql_mismatch(reference_step, step.get("output"), limit=ROW_LIMIT))
        for step in successful
    ]
    return _closest_lines(explained, "row", lambda row: json.dumps(row, ensure_ascii=False, default=str))


def _closest_lines(
    explained: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    unit: str,
    shown: Callable[[Any], str],
) -> list[str]:
    """The closest actual step's explanation (`unit`: a SPARQL result's `row`, a graph's `triple`)."""
    step, closest = min(explained, key=lambda pair: mismatch_distance(pair[1], unit))
    lines = [f"closest actual step: {step.get('id', '?')} — {closest.get('reason', 'no reason given')}"]
    mapping = closest.get("column_mapping")
    if mapping:
        lines.append("column mapping tried: " + ", ".join(f"{ref} -> {act}" for ref, act in mapping.items()))
    if closest.get("unmapped_columns"):
        lines.append("required columns with no partner: " + ", ".join(closest["unmapped_columns"]))
    if f"reference_{unit}_count" in closest:
        reference, actual = closest[f"reference_{unit}_count"], closest.get(f"actual_{unit}_count")
        lines.append(f"{unit}s: reference {reference}, actual {actual}")
    for side in ("missing", "extra"):
        items = closest.get(f"{side}_{unit}s") or []
        if items:
            total = closest.get(f"{side}_{unit}s_total", len(items))
            lines.append(f"{side} {unit}s ({total}):")
            lines += [f"  - {shown(item)}" for item in items[:ROW_LIMIT]]
            if total > ROW_LIMIT:
                lines.append(f"  … {total - ROW_LIMIT} more")
    if closest.get("first_differing_row") is not None:
        lines.append(f"same rows in another order; first differing row: {closest['first_differing_row']}")
    return lines


def _unmapped_name_hints(
    reference_step: Mapping[str, Any], actual_steps: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Actual steps that would match under a tool-name mapping nobody configured, one line each."""
    name = reference_step.get("name")
    hints = []
    for step in actual_steps:
        agent_name = step.get("name") if isinstance(step, Mapping) else None
        if not isinstance(agent_name, str) or agent_name == name:
            continue
        try:
            matched = step_match_score(reference_step, {**step, "name": name}) > 0
        except (ValueError, TypeError):
            matched = False
        if matched:
            hints.append(
                f"actual step {step.get('id', '?')} named {agent_name!r} would match under the tool-name "
                f"mapping {agent_name} = {name}, which is not configured (--graphrag-tool-name, "
                "graphrag_tool_names in the ini file, or tool_names in the corpus settings)"
            )
    return hints


def _iri_lines(reference_step: Mapping[str, Any], actual_steps: Sequence[Mapping[str, Any]]) -> str:
    searched = sum(
        1 for step in actual_steps if step.get("name") in IRI_SOURCES and step.get("status") == "success"
    )
    try:
        iri = reference_iri(reference_step)
    except ValueError:
        iri = "(the reference IRI)"
    return f"{iri} was not found in the {searched} successful autocomplete_search / sparql_query output(s)"


def mismatch_distance(explanation: Mapping[str, Any], unit: str = "row") -> tuple[int, int]:
    """Sort key of mismatch explanations (`unit`: `row` or `triple`): a match first, then the fewest
    missing plus extra rows or triples, then bad outputs."""
    if explanation.get("matched"):
        return (0, 0)
    if f"reference_{unit}_count" not in explanation:
        return (2, 0)
    missing, extra = (int(explanation.get(f"{side}_{unit}s_total", 0)) for side in ("missing", "extra"))
    return (1, missing + extra)
