"""The contract between the evaluation loop and the scorers.

A scorer looks at one question and its response and returns a flat dict of
result keys (the seed's output keys, or new ones). It reports what it could
not compute as `<metric>_error`, never as a low score. Scorers are async so
LLM-backed ones can run concurrently; deterministic ones simply return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question


@dataclass
class ScoringContext:
    """What scorers may use besides the question and response.

    `judge` is the shared LLM client (None when no LLM is configured);
    `options` carries scorer-specific settings from the one settings object.
    """

    steps_scope: str = "last_group"
    judge: Any = None
    options: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Scorer(Protocol):
    """One metric family; `name` labels it in reports and errors."""

    name: str

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        """Return result keys for this question; never raise for bad agent output."""
        ...
