"""What a scorer may ask of an LLM judge (a protocol), and what its calls cost.

Typing against `Judge` keeps the OpenAI SDK out of scorers' imports and lets tests pass any object.
Each reply carries its own tokens and cost, summed into the scored question's `Usage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pytest_graphrag_eval.llm.errors import CallRefused
from pytest_graphrag_eval.report_model import REFUSAL_KEY, Refusal

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import ChatResult, EmbeddingResult
    from pytest_graphrag_eval.llm.settings import LLMSettings


class Judge(Protocol):
    """Chat and embeddings from an OpenAI-compatible endpoint; `settings` gives models and limits."""

    @property
    def settings(self) -> LLMSettings: ...

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        model: str | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = 0.0,
        cache_key_extra: str = "",
    ) -> ChatResult:
        """One chat completion; distinct `cache_key_extra` values give independent samples."""
        ...

    async def embed(self, texts: list[str], *, model: str | None = None) -> EmbeddingResult:
        """One vector per text, in order."""
        ...


@dataclass
class Usage:
    """Tokens and USD cost of some judge calls, and why any of them was refused."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    refusals: set[Refusal] = field(default_factory=set)

    def add_result(self, result: ChatResult | EmbeddingResult) -> None:
        """Add one reply's usage (embeddings have no output tokens)."""
        self.input_tokens += int(result.input_tokens or 0)
        self.output_tokens += int(getattr(result, "output_tokens", 0) or 0)
        self.cost_usd += float(result.cost_usd or 0.0)

    def add_failure(self, error: BaseException) -> None:
        """Note a failed call's refusal, if the run refused it (any other failure adds nothing)."""
        if isinstance(error, CallRefused):
            self.refusals.add(error.reason)

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd
        self.refusals |= other.refusals

    def refusal_keys(self) -> dict[str, str]:
        """`{"judge_refusal": reason}` for the most telling refusal, empty when none was refused."""
        refusal = most_telling(self.refusals)
        return {} if refusal is None else {REFUSAL_KEY: refusal.value}

    def as_keys(self, names: Sequence[str]) -> dict[str, Any]:
        """Result keys for input tokens, output tokens and cost, under `names` in that order."""
        return dict(zip(names, (self.input_tokens, self.output_tokens, self.cost_usd), strict=True))


def most_telling(refusals: Iterable[str]) -> Refusal | None:
    """The first `Refusal`, in its declared order (budget, cache miss, batch), among `refusals`."""
    present = set(refusals)
    return next((refusal for refusal in Refusal if refusal in present), None)
