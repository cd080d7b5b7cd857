"""RetrievalScorer: the agent's retrieval step against the reference one."""

from __future__ import annotations

from typing import Any

from ..corpus import Question
from ..scoring import ScoringContext


class RetrievalScorer:
    """Scores the `retrieval` step of a question against its reference retrieval step."""

    name = "retrieval"

    async def score(self, question: Question, response: dict[str, Any], context: ScoringContext) -> dict[str, Any]:
        """Return retrieval metric keys; nothing when the question has no reference retrieval step."""
        return {}
