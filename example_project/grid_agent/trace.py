"""The agent's record of one answer: tool calls as `actual_steps`, and the response dict.

Step ids are derived from the question id, the call's position, name and
arguments, so re-running the agent reproduces them exactly (an LLM agent's
ids would be random; deterministic ones keep recordings diffable).

Token counts are simulated: the agent has no LLM, so it counts whitespace
separated words. `input_tokens` is what an LLM would have read (the question
and every tool output), `output_tokens` what it would have written (the tool
arguments and the final answer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from .store import QueryError


class AgentError(Exception):
    """The agent gives up on a question; the message becomes the error response."""


def word_count(text: str) -> int:
    return len(text.split())


class Trace:
    """Runs tool calls for one question and remembers them in the seed's step format."""

    def __init__(self, question_id: str, question_text: str) -> None:
        self.question_id = question_id
        self.question_text = question_text
        self.steps: list[dict[str, Any]] = []

    def call(self, name: str, args: dict[str, Any], tool: Callable[[], str]) -> str:
        """Run `tool`, record the step, return its output; a rejected query ends the answer."""
        encoded_args = json.dumps(args, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(
            f"{self.question_id}|{len(self.steps)}|{name}|{encoded_args}".encode()
        ).hexdigest()
        step: dict[str, Any] = {"name": name, "args": args, "id": f"call_{digest[:24]}"}
        self.steps.append(step)
        try:
            output = tool()
        except QueryError as error:
            step.update(status="error", error=str(error))
            raise AgentError(f"{name} failed: {error}") from None
        step.update(status="success", output=output)
        return output

    def response(self, answer: str, elapsed_sec: float) -> dict[str, Any]:
        """The success response: the seed's target format."""
        read = self.question_text + "".join(" " + step.get("output", "") for step in self.steps)
        written = answer + "".join(" " + json.dumps(step["args"], ensure_ascii=False) for step in self.steps)
        input_tokens, output_tokens = word_count(read), word_count(written)
        return {
            "question_id": self.question_id,
            "actual_answer": answer,
            "actual_steps": self.steps,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "elapsed_sec": elapsed_sec,
        }
