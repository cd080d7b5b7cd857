"""Small report dicts for the comparison tests (format_version 2 results)."""

from __future__ import annotations

from typing import Any

from pytest_graphrag_eval.compare import content_hash


def result(
    question_id: str,
    outcome: str = "passed",
    *,
    template_id: str = "t1",
    question_text: str | None = None,
    status: str = "success",
    **metrics: Any,
) -> dict[str, Any]:
    """One question's result with its content hash, as the plugin writes it."""
    data: dict[str, Any] = {
        "template_id": template_id,
        "question_id": question_id,
        "question_text": question_text or f"What about {question_id}?",
        "reference_answer": f"answer of {question_id}",
        "status": status,
        "outcome": outcome,
        **metrics,
    }
    data["content_hash"] = content_hash(data)
    return data


def report(results: list[dict[str, Any]], *, started_at: str = "2026-11-01T10:00:00Z") -> dict[str, Any]:
    return {
        "format_version": 2,
        "results": results,
        "aggregates": {},
        "gates": [],
        "metadata": {"started_at": started_at, "questions": len(results)},
    }
