"""What a scorer may ask of an LLM judge, as a protocol.

Scorers, eRAG and the scorer factory type their judge as `Judge` rather than
`JudgeClient`, so they do not import the OpenAI SDK to be type-checked and a
test or a user may pass any object with these two calls. `JudgeClient` is the
implementation; each call returns its own tokens and cost with the reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import ChatResult, EmbeddingResult


class Judge(Protocol):
    """Chat completions and embeddings from an OpenAI-compatible endpoint."""

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
