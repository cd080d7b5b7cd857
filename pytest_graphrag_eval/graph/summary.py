"""The run-level view of reference checks: the report's `references` section, the stale counts the
`stale_references` gate reads, and the terminal lines listing stale questions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_graphrag_eval.graph.corpus_update import OutputUpdate

STALE_REFERENCES = "stale_references"
_SHOWN_ROWS = 2


def question_references(result: Mapping[str, object]) -> Mapping[str, Any] | None:
    """The reference check a result carries (`graph.references`), if any."""
    graph = result.get("graph")
    references = graph.get("references") if isinstance(graph, Mapping) else None
    return references if isinstance(references, Mapping) else None


def references_section(
    results: Sequence[Mapping[str, object]], graph: Mapping[str, object] | None
) -> dict[str, Any]:
    """The JSON report's `references` section: the graph, counts, and each stale or failing question."""
    checked = [refs for result in results if (refs := question_references(result)) is not None]
    stale = [refs for refs in checked if refs.get("stale")]
    failing = [
        refs for refs in checked if any(step.get("status") == "error" for step in refs.get("steps", []))
    ]
    return {
        "graph": dict(graph or {}),
        "questions_checked": len(checked),
        "steps_checked": sum(len(refs.get("steps", [])) for refs in checked),
        STALE_REFERENCES: len(stale),
        "failed_queries": sum(
            1 for refs in checked for step in refs.get("steps", []) if step.get("status") == "error"
        ),
        "stale": [dict(refs) for refs in stale],
        "errors": [dict(refs) for refs in failing],
    }


def add_stale_counts(aggregates: dict[str, Any], results: Sequence[Mapping[str, object]]) -> None:
    """Put `stale_references` (questions with a stale or missing reference output) into the micro and
    per-template aggregates, where gates read plain counts; only when references were checked."""
    if not any(question_references(result) is not None for result in results):
        return
    per_template: dict[str, int] = {}
    for result in results:
        refs = question_references(result)
        key = str(result.get("template_id"))
        per_template[key] = per_template.get(key, 0) + int(bool(refs and refs.get("stale")))
    if isinstance(aggregates.get("micro"), dict):
        aggregates["micro"][STALE_REFERENCES] = sum(per_template.values())
    for template_id, stats in (aggregates.get("per_template") or {}).items():
        if isinstance(stats, dict):
            stats[STALE_REFERENCES] = per_template.get(str(template_id), 0)


def stale_lines(section: Mapping[str, Any]) -> list[str]:
    """Terminal lines: one per stale question with what changed, one per failing reference query."""
    lines = []
    for refs in section.get("stale", []):
        for step in refs.get("steps", []):
            if step.get("status") in ("stale", "missing"):
                lines.append(f"  STALE  {refs.get('question_id')} {step.get('step')}: {describe_step(step)}")
    for refs in section.get("errors", []):
        for step in refs.get("steps", []):
            if step.get("status") == "error":
                lines.append(f"  ERROR  {refs.get('question_id')} {step.get('step')}: {step.get('error')}")
    return lines


def describe_step(step: Mapping[str, Any]) -> str:
    """What changed in one stale reference step, in a few words."""
    if step.get("status") == "missing":
        return "no stored output (the fresh result can fill it: --graphrag-update-references)"
    changes = step.get("changes") or {}
    if "ask_flipped" in changes:
        flip = changes["ask_flipped"]
        return f"ASK flipped from {str(flip.get('stored')).lower()} to {str(flip.get('fresh')).lower()}"
    if "rows_added_total" in changes:
        parts = []
        for label, key in (("added", "rows_added"), ("removed", "rows_removed")):
            total = changes.get(f"{key}_total", 0)
            if total:
                shown = "; ".join(_row_text(row) for row in changes.get(key, [])[:_SHOWN_ROWS])
                more = ", ..." if total > _SHOWN_ROWS else ""
                parts.append(f"{total} row{'s' if total != 1 else ''} {label} ({shown}{more})")
        return ", ".join(parts) or str(changes.get("reason") or "the rows differ")
    if "triples_added_total" in changes:
        return f"{changes['triples_added_total']} triple(s) added, {changes['triples_removed_total']} removed"
    if changes.get("stored_output") == "invalid":
        return "the stored output is not valid for its step"
    return str(changes.get("reason") or "the stored output differs from the fresh result")


def _row_text(row: object) -> str:
    if isinstance(row, Mapping):
        return ", ".join(f"{key}={value}" for key, value in row.items())
    return str(row)


def output_updates(results: Sequence[Mapping[str, object]]) -> dict[str, list[OutputUpdate]]:
    """The output updates the stale and missing steps ask for, by corpus file (as the nodeid names it)."""
    # Imported here: the corpus updater reads YAML, which no report needs.
    from pytest_graphrag_eval.graph.corpus_update import OutputUpdate

    by_file: dict[str, list[OutputUpdate]] = {}
    for result in results:
        refs = question_references(result)
        if not refs or not refs.get("stale"):
            continue
        file = str(result.get("nodeid", "")).split("::")[0]
        for step in refs.get("steps", []):
            if step.get("status") not in ("stale", "missing") or not isinstance(step.get("output"), str):
                continue
            group, index = _position(str(step.get("step")))
            by_file.setdefault(file, []).append(
                OutputUpdate(
                    str(result["question_id"]), group, index, step["output"], step.get("output_media_type")
                )
            )
    return by_file


def _position(where: str) -> tuple[int, int]:
    """`reference_steps[1][0]` -> (1, 0)."""
    inner = where[where.index("[") + 1 : -1]
    group, index = inner.split("][")
    return int(group), int(index)
