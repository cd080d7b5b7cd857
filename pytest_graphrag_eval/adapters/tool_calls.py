"""Tool calls and their results, paired by call id into the step format every adapter returns.

A call that never got a result is an error step, so it can never count as a success; a result
naming a call never made is an error of the whole input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_graphrag_eval.adapters.access import field as read
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

NO_RESULT = "the trace has no result for this tool call (the agent stopped or the result was lost)"
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


class ToolCallLog:
    """The calls of one agent run in call order, as steps that each take their result once it arrives."""

    def __init__(self, location: SourceLocation) -> None:
        self.location = location
        self._steps: dict[str, dict[str, object]] = {}

    def call(self, name: object, arguments: object, call_id: object, where: str) -> None:
        """Record a call; `arguments` may be the JSON text the model wrote or an already parsed value."""
        if not isinstance(name, str) or not name:
            raise ResponseError("a tool call has no tool name", self.location, f"{where}.name")
        key = str(call_id) if call_id not in (None, "") else where
        if key in self._steps:
            raise ResponseError(f"two tool calls share the id {key!r}", self.location, f"{where}.id")
        self._steps[key] = {"name": name, "args": parse_arguments(arguments), "id": key}

    def result(self, call_id: object, output: object, where: str, error: str | None = None) -> None:
        """Attach a call's result (or its error message) by call id."""
        key = str(call_id) if call_id is not None else None
        step = self._steps.get(key) if key is not None else None
        if step is None:
            raise ResponseError(
                f"a tool result for call id {key!r} has no matching tool call before it",
                self.location,
                where,
            )
        if "status" in step:
            raise ResponseError(f"call id {key!r} has two tool results", self.location, where)
        if error is None:
            step.update(status="success", output=output)
        else:
            step.update(status="error", error=error)
            if output is not None and output != error:
                step["output"] = output

    def tool_message(self, message: object, id_key: str, content_key: str, where: str) -> None:
        """A tool message's result; no format has an error flag, so `"status": "error"` marks a failure."""
        content = read(message, content_key)
        output = content if isinstance(content, str) else text_of(content)
        error = tool_error(output) if read(message, "status") == "error" else None
        self.result(read(message, id_key), output, f"{where}.{id_key}", error)

    def steps(self) -> list[dict[str, object]]:
        """The `actual_steps` list: every call in order, unanswered ones as error steps."""
        for step in self._steps.values():
            if "status" not in step:
                step.update(status="error", error=NO_RESULT)
        return list(self._steps.values())


def tool_error(message: object) -> str:
    return message if isinstance(message, str) and message else "the tool reported an error"


def parse_arguments(arguments: object) -> object:
    """A tool call's arguments as a JSON value; text that is not JSON stays text (what the model wrote)."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return arguments
    return {} if arguments is None else arguments


def text_of(content: object) -> str | None:
    """The text of message content: a string as is (byte for byte), text parts joined; only text parts
    carry the answer."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        parts = [part if isinstance(part, str) else read(part, "text") for part in content]
        texts = [text for text in parts if isinstance(text, str)]
        return "".join(texts) if texts else None
    return None


def sum_usage(totals: dict[str, int], usage: object, names: Sequence[str] = USAGE_KEYS) -> None:
    """Add one usage record's (input, output, total) counts, named per format, into `totals`."""
    for target, name in zip(USAGE_KEYS, names, strict=True):
        value = read(usage, name)
        if isinstance(value, int) and not isinstance(value, bool):
            totals[target] = totals.get(target, 0) + value


def response_dict(
    steps: list[dict[str, object]],
    answer: str | None,
    usage: dict[str, int],
    elapsed_sec: float | None,
    location: SourceLocation | None = None,
    input_field: str = "messages",
) -> dict[str, Any]:
    """The response dict in the replay format, with only what the trace told.

    A run with neither a tool call nor an answer is an error rather than a 0: the agent's output was
    not in what was passed.
    """
    if not steps and not answer:
        raise ResponseError(
            "holds no tool call and no assistant answer: nothing the agent did", location, input_field
        )
    response: dict[str, Any] = {"actual_answer": answer or None, "actual_steps": steps}
    if "total_tokens" not in usage and {"input_tokens", "output_tokens"} <= usage.keys():
        usage = {**usage, "total_tokens": usage["input_tokens"] + usage["output_tokens"]}
    response.update(usage)
    if elapsed_sec is not None:
        response["elapsed_sec"] = elapsed_sec
    return response
