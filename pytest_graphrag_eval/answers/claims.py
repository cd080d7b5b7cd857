"""Claim counts and the recall / precision / F1 both correctness judges compute from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.llm.replies import InvalidReply, integer_field, parse_object, text_field

CORRECTNESS_KEYS = (
    "answer_reference_claims_count",
    "answer_actual_claims_count",
    "answer_matching_claims_count",
    "answer_correctness_reason",
    "answer_recall",
    "answer_precision",
    "answer_f1",
)


@dataclass(frozen=True)
class ClaimCounts:
    """How many claims each answer has and how many of them match; both counts are >= 1 (the judge's
    reply is checked by `parse_claim_counts`, the lexical judge counts at least one claim a side)."""

    reference: int
    actual: int
    matching: int
    reason: str

    @property
    def recall(self) -> float:
        return self.matching / self.reference

    @property
    def precision(self) -> float:
        return self.matching / self.actual

    @property
    def f1(self) -> float:
        """Harmonic mean of recall and precision; 0 when both are 0."""
        total = self.recall + self.precision
        return 2 * self.recall * self.precision / total if total else 0.0

    def as_keys(self) -> dict[str, Any]:
        values = (
            self.reference,
            self.actual,
            self.matching,
            self.reason,
            self.recall,
            self.precision,
            self.f1,
        )
        return dict(zip(CORRECTNESS_KEYS, values, strict=True))


def parse_claim_counts(text: str) -> ClaimCounts:
    """Check an LLM correctness reply; out-of-range or inconsistent counts are rejected."""
    data = parse_object(text)
    reference = integer_field(data, "reference_claims_count", minimum=1)
    actual = integer_field(data, "actual_claims_count", minimum=1)
    matching = integer_field(data, "matching_claims_count", minimum=0)
    for other_key, other in (("reference_claims_count", reference), ("actual_claims_count", actual)):
        if matching > other:
            raise InvalidReply(f"matching_claims_count ({matching}) cannot exceed {other_key} ({other})")
    return ClaimCounts(reference, actual, matching, text_field(data, "reason"))
