"""Judge tokens and cost of one question, summed over its judge calls.

Kept apart from the metric keys so every metric can report what it spent even
when it failed, and the answer scorer can add up all of a question's calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

USAGE_KEYS = ("answer_eval_input_tokens", "answer_eval_output_tokens", "answer_eval_cost")


@dataclass
class Usage:
    """Tokens and USD cost of some judge calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add_result(self, result: Any) -> None:
        """Add a ChatResult or EmbeddingResult (embeddings have no output tokens)."""
        self.input_tokens += int(result.input_tokens or 0)
        self.output_tokens += int(getattr(result, "output_tokens", 0) or 0)
        self.cost_usd += float(result.cost_usd or 0.0)

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd

    def as_keys(self) -> dict[str, Any]:
        """The `answer_eval_*` result keys."""
        return dict(zip(USAGE_KEYS, (self.input_tokens, self.output_tokens, self.cost_usd), strict=True))
