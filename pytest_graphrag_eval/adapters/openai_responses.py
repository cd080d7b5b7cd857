"""OpenAI Responses API items to a response dict.

The API has no error flag for tool results: a `function_call_output` with `"status": "error"`
counts as a failed call.
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


def from_openai_responses(
    items: Any,
    *,
    usage: Any = None,
    elapsed_sec: float | None = None,
    location: SourceLocation | None = None,
) -> dict[str, Any]:
    """The response dict for one agent run given as Responses API items (or `Response` objects)."""
    location = location or SourceLocation()
    if not is_sequence(items) and field(items, "output") is not None:
        items = [items]
    if not is_sequence(items):
        raise ResponseError(f"must be a list of items, got {kind_name(items)}", location, "items")
    log = ToolCallLog(location)
    totals: dict[str, int] = {}
    for usage_record in usage if is_sequence(usage) else [usage]:
        sum_usage(totals, usage_record)
    answer: str | None = None
    for index, item in enumerate(items):
        where = f"items[{index}]"
        output = field(item, "output")
        if field(item, "object") == "response" or (is_sequence(output) and field(item, "type") is None):
            sum_usage(totals, field(item, "usage"))
            expanded = [(f"{where}.output[{number}]", part) for number, part in enumerate(output or [])]
        else:
            expanded = [(where, item)]
        for item_where, part in expanded:
            answer = _read_item(part, item_where, log, location, answer)
    return response_dict(log.steps(), answer, totals, elapsed_sec, location)


def _read_item(
    item: Any, where: str, log: ToolCallLog, location: SourceLocation, answer: str | None
) -> str | None:
    """Record one item; return the answer so far (the last assistant text)."""
    kind = field(item, "type")
    role = field(item, "role")
    if kind is None and role is None:
        raise ResponseError(
            f"is not a Responses API item (no type or role): got {kind_name(item)}", location, f"{where}.type"
        )
    if kind == "function_call":
        log.call(field(item, "name"), field(item, "arguments"), field(item, "call_id"), where)
        return None  # the run went on: an earlier text was not the final answer
    elif kind == "function_call_output":
        log.tool_message(item, "call_id", "output", where)
    elif role == "assistant" and kind in (None, "message"):
        text = text_of(field(item, "content"))
        if text is not None:
            return text
    return answer
