"""The step-matching table of one question, with the row diff of each unmatched SPARQL step: the
failure report's data, kept structured for the page's tables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypeGuard

from pytest_graphrag_eval.formats.sparql_results import (
    MemoizedParser,
    ResultsParser,
    SparqlResultsError,
    parse_sparql_results,
)
from pytest_graphrag_eval.formats.terms import display_term
from pytest_graphrag_eval.report.step_explanations import (
    SPARQL_JSON,
    explain_step_mismatch,
    mismatch_distance,
)
from pytest_graphrag_eval.steps.sparql_explain import explain_sparql_mismatch

ARG_LIMIT = 3000
OUTPUT_LIMIT = 1200
DIFF_ROW_LIMIT = 10


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def as_text(value: object) -> str:
    """Step args and outputs may be any JSON value; the page shows text."""
    if type(value) is str or isinstance(value, str):  # the exact type first: most values are text
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def clipped_text(value: object, limit: int) -> str:
    """`clip(as_text(value), limit)`, with short text (most args and outputs) returned in one test."""
    if type(value) is str and len(value) <= limit:
        return value
    return clip(as_text(value), limit)


def step_table(result: Mapping[str, object], steps_scope: str) -> dict[str, object] | None:
    """Reference steps (with their match explanation) and actual steps of one result; short text
    fields, nearly all, are kept without a call."""
    groups = result.get("reference_steps")
    if not isinstance(groups, list) or not groups:
        return None
    listed = result.get("actual_steps")
    actual = [step for step in listed if is_mapping(step)] if isinstance(listed, list) else []
    every_group_scored = steps_scope != "last_group"
    last_group = len(groups) - 1
    answered = result.get("status", "success") == "success"
    reference_rows = []
    matched_by: dict[str, str] = {}
    for group_index, group in enumerate(groups):
        if not isinstance(group, list):
            continue
        scored = every_group_scored or group_index == last_group
        for step_index, step in enumerate(group):
            if not is_mapping(step):
                continue
            label = f"[{group_index}][{step_index}]"
            name, matches = step.get("name"), step.get("matches")
            if matches is not None:
                matches = matches if type(matches) is str else as_text(matches)
                matched_by[matches] = label
            row: dict[str, object] = {
                "label": label,
                "name": name if type(name) is str else as_text(name),
                "args": _args(step.get("args")),
                "scored": scored,
                "matches": matches,
            }
            if matches is None and scored and answered:
                row["mismatch"] = explain_unmatched(step, actual)
            reference_rows.append(row)
    actual_rows = tuple([_actual_row(step, matched_by) for step in actual])
    return {"scope": steps_scope, "reference": tuple(reference_rows), "actual": actual_rows}


def is_mapping(value: object) -> TypeGuard[Mapping[str, object]]:
    """`isinstance(value, Mapping)`, with JSON's dicts told apart without the slower ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def _actual_row(step: Mapping[str, object], matched_by: Mapping[str, str]) -> dict[str, object]:
    step_id, name, status = step.get("id", ""), step.get("name"), step.get("status", "success")
    if type(step_id) is not str:
        step_id = as_text(step_id)
    return {
        "id": step_id,
        "name": name if type(name) is str else as_text(name),
        "status": status if type(status) is str else as_text(status),
        "args": _args(step.get("args")),
        "output": clipped_text(step.get("output", ""), OUTPUT_LIMIT),
        "matched_by": matched_by.get(step_id),
    }


def explain_unmatched(
    reference_step: Mapping[str, object], actual: Sequence[Mapping[str, object]]
) -> dict[str, object]:
    """The row diff against the closest actual SPARQL result, or the terminal's explanation lines."""
    name = reference_step.get("name")
    candidates = [
        step for step in actual if step.get("name") == name and step.get("status", "success") == "success"
    ]
    if reference_step.get("output_media_type") != SPARQL_JSON or not candidates:
        return {"lines": explain_step_mismatch(reference_step, actual)}
    parse = MemoizedParser()  # the diff and the tables read the same outputs: each is parsed once
    explained = [
        (step, explain_sparql_mismatch(reference_step, step.get("output"), limit=DIFF_ROW_LIMIT, parse=parse))
        for step in candidates
    ]
    step, closest = min(explained, key=lambda pair: mismatch_distance(pair[1]))
    return {
        "closest": as_text(step.get("id", "")),
        **closest,
        "reference_table": result_table(reference_step.get("output"), parse),
        "actual_table": result_table(step.get("output"), parse),
    }


def result_table(output: object, parse: ResultsParser = parse_sparql_results) -> dict[str, object] | None:
    """The first rows of a SPARQL SELECT result, so a reader can compare values the diff cannot pair."""
    try:
        table = parse(output)
    except SparqlResultsError:
        return None
    if table.is_ask:
        return None
    rows = [[display_term(term) for term in row] for row in table.rows[:DIFF_ROW_LIMIT]]
    return {"columns": list(table.variables), "rows": rows, "total": table.row_count}


def _args(args: object) -> tuple[tuple[str, str], ...]:
    if args is None:
        return ()
    if not is_mapping(args):
        return (("args", clipped_text(args, ARG_LIMIT)),)
    return tuple(
        [
            (
                key if type(key) is str else str(key),
                value if type(value) is str and len(value) <= ARG_LIMIT else clipped_text(value, ARG_LIMIT),
            )
            for key, value in args.items()
        ]
    )
