"""LangChain / LangGraph messages (objects or any of their dict forms) to a response dict.

`invalid_tool_calls` (arguments the model wrote that did not parse) are failed steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.adapters.access import field, is_sequence, kind_name
from pytest_graphrag_eval.adapters.tool_calls import (
    ToolCallLog,
    response_dict,
    sum_usage,
    text_of,
    tool_error,
)
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

# ("user", "text") tuples, the short form LangGraph accepts as input.
TUPLE_ROLES = {"user": "human", "assistant": "ai"}
# Class names of the serialised constructor form, by the `type` their messages carry.
CLASS_TYPES = {
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "HumanMessage": "human",
    "SystemMessage": "system",
}


def from_langchain_messages(
    messages: Any, *, elapsed_sec: float | None = None, location: SourceLocation | None = None
) -> dict[str, Any]:
    """The response dict for one agent run given as LangChain messages or a LangGraph state."""
    location = location or SourceLocation()
    if isinstance(messages, Mapping) and "messages" in messages:
        messages = messages["messages"]
    if not is_sequence(messages):
        raise ResponseError(f"must be a list of messages, got {kind_name(messages)}", location, "messages")
    log = ToolCallLog(location)
    totals: dict[str, int] = {}
    answer: str | None = None
    for index, item in enumerate(messages):
        where = f"messages[{index}]"
        kind, message = _unwrap(item)
        if kind is None:
            raise ResponseError(
                f"is not a LangChain message (no type): got {kind_name(item)}", location, f"{where}.type"
            )
        if kind in ("ai", "AIMessageChunk"):
            sum_usage(totals, field(message, "usage_metadata"))
            for number, call in enumerate(field(message, "tool_calls", [])):
                call_where = f"{where}.tool_calls[{number}]"
                log.call(field(call, "name"), field(call, "args"), field(call, "id"), call_where)
            for number, call in enumerate(field(message, "invalid_tool_calls", [])):
                call_where = f"{where}.invalid_tool_calls[{number}]"
                log.call(field(call, "name"), field(call, "args"), field(call, "id"), call_where)
                log.result(field(call, "id", call_where), None, call_where, tool_error(field(call, "error")))
            # A turn that calls tools is not the last one: its text is narration, not the answer.
            calls = field(message, "tool_calls") or field(message, "invalid_tool_calls")
            answer = None if calls else text_of(field(message, "content"))
        elif kind == "tool":
            log.tool_message(message, "tool_call_id", "content", where)
    return response_dict(log.steps(), answer, totals, elapsed_sec, location)


def _unwrap(item: Any) -> tuple[str | None, Any]:
    """The message type and the object holding the message's fields, for every accepted form."""
    if isinstance(item, Mapping):
        if isinstance(item.get("data"), Mapping):  # messages_to_dict
            return item.get("type"), item["data"]
        if item.get("lc") is not None and isinstance(item.get("kwargs"), Mapping):  # dumpd
            class_path = item.get("id")
            class_name = class_path[-1] if is_sequence(class_path) and class_path else None
            return CLASS_TYPES.get(str(class_name)), item["kwargs"]
        return item.get("type"), item
    if is_sequence(item) and len(item) == 2 and all(isinstance(part, str) for part in item):
        return TUPLE_ROLES.get(item[0], item[0]), {"content": item[1]}
    return field(item, "type"), item
