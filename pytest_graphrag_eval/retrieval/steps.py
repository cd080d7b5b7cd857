"""Finding the retrieval steps of a question and of a response.

The actual one is the last `retrieval` step that did not fail: an agent that retries retrieval is
judged on the documents it finally got.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import RETRIEVAL_STEP


def reference_retrieval_step(
    reference_steps: Sequence[Sequence[Mapping[str, Any]]] | None,
) -> Mapping[str, Any] | None:
    """The last reference step named `retrieval`, or None when the question has none."""
    steps = [step for group in reference_steps or [] for step in group if step.get("name") == RETRIEVAL_STEP]
    return steps[-1] if steps else None


def actual_retrieval_step(response: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The response's last `retrieval` step whose status is not `error`, or None."""
    for step in reversed(response.get("actual_steps") or []):
        if isinstance(step, Mapping) and step.get("name") == RETRIEVAL_STEP and step.get("status") != "error":
            return step
    return None
