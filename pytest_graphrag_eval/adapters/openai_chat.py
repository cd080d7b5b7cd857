"""OpenAI Chat Completions messages to a response dict.

The format has no error flag for tool results: a tool message with `"status": "error"` (as
LangChain writes it) counts as a failed call.
"""

from __future__ import annotations

from typing import Any

from pytest_graphrag_eval.adapters.access import field, is_sequence, kind_name
from pytest_graphrag_eval.adapters.tool_calls import (
    ToolCallLog,
    response_dict,
    sum_usage,
    text_of,
)
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

CHAT_USAGE_NAMES = ("prompt_tokens", "completion_tokens", "total_tokens")


def from_openai_messages(
    messages: Any,
    *,
    usage: Any = None,
    elapsed_sec: float | None = None,
    location: SourceLocation | None = None,
) -> dict[str, Any]:
    """The response dict for one agent run given as Chat Completions messages; `ChatCompletion`s in the
    list add their usage, `usage` gives it for a list of plain messages."""
    location = location or SourceLocation()
    if not is_sequence(messages):
        raise ResponseError(f"must be a list of messages, got {kind_name(messages)}", location, "messages")
    log = ToolCallLog(location)
    totals: dict[str, int] = {}
    for usage_record in usage if is_sequence(usage) else [usage]:
        sum_usage(totals, usage_record, CHAT_USAGE_NAMES)
    answer: str | None = None
    for index, item in enumerate(messages):
        where = f"messages[{index}]"
        message = item
        choices = field(item, "choices")
        if choices is not None:  # a ChatCompletion: its first choice's message, and its usage
            sum_usage(totals, field(item, "usage"), CHAT_USAGE_NAMES)
            if not is_sequence(choices) or not choices:
                raise ResponseError("a chat completion without choices", location, f"{where}.choices")
            message = field(choices[0], "message")
        role = field(message, "role")
        if role is None:
            raise ResponseError(
                f"is not a chat message (no role): got {kind_name(message)}", location, f"{where}.role"
            )
        if role == "assistant":
            for number, tool_call in enumerate(field(message, "tool_calls", [])):
                function = field(tool_call, "function", {})
                call_where = f"{where}.tool_calls[{number}]"
                log.call(
                    field(function, "name"), field(function, "arguments"), field(tool_call, "id"), call_where
                )
            # A turn that calls tools is not the last one: its text is narration, not the answer.
            answer = None if field(message, "tool_calls") else text_of(field(message, "content"))
        elif role == "tool":
            log.tool_message(message, "tool_call_id", "content", where)
    return response_dict(log.steps(), answer, totals, elapsed_sec, location)
