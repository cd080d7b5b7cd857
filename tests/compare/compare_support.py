"""Small report dicts for the comparison tests (format_version 2 results)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from pytest_graphrag_eval.compare.hashing import content_hash


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


def same_change(one: object, other: object) -> bool:
    """Two changes (a MetricChange, or a mapping of them) equal field for field, floats to rounding.

    An interval computed in a batch of scopes and one computed alone sum the same resamples in an order
    that the BLAS kernel picks by the product's shape and the processor: they agree to the last few bits,
    not always in them. Everything that is not a float (counts, the test's name) must be equal.
    """
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(same_change(one[key], other[key]) for key in one)
    if dataclasses.is_dataclass(one) and dataclasses.is_dataclass(other):
        return type(one) is type(other) and all(
            same_change(getattr(one, field.name), getattr(other, field.name))
            for field in dataclasses.fields(one)
        )
    if isinstance(one, float) and isinstance(other, float):
        return math.isclose(one, other, rel_tol=1e-12, abs_tol=1e-15) or (
            math.isnan(one) and math.isnan(other)
        )
    return one == other
