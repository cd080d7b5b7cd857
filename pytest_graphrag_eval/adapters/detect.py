"""Which adapter reads an agent's output: told by name, or recognised from its shape."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_graphrag_eval.adapters.access import field, is_sequence, kind_name
from pytest_graphrag_eval.adapters.langchain import from_langchain_messages
from pytest_graphrag_eval.adapters.openai_chat import from_openai_messages
from pytest_graphrag_eval.adapters.openai_responses import from_openai_responses
from pytest_graphrag_eval.adapters.otel import from_otel_spans
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

MESSAGE_ADAPTERS: dict[str, Callable[..., dict[str, Any]]] = {
    "openai-messages": from_openai_messages,
    "openai-responses": from_openai_responses,
    "langchain-messages": from_langchain_messages,
}
RESPONSES_ITEM_TYPES = frozenset({"function_call", "function_call_output", "reasoning"})
LANGCHAIN_TYPES = frozenset({"ai", "human", "tool", "system", "AIMessageChunk"})


def message_format(messages: Any, location: SourceLocation | None = None) -> str:
    """`openai-responses`, `langchain-messages` or `openai-messages`, from the items' own fields."""
    location = location or SourceLocation()
    if isinstance(messages, Mapping) and "messages" in messages:  # a LangGraph state
        return "langchain-messages"
    if not is_sequence(messages):
        raise ResponseError(f"must be a list of messages, got {kind_name(messages)}", location, "messages")
    for item in messages:
        kind = field(item, "type")
        if kind in RESPONSES_ITEM_TYPES or field(item, "object") == "response":
            return "openai-responses"
        if kind in LANGCHAIN_TYPES or (isinstance(item, Mapping) and ("lc" in item or "data" in item)):
            return "langchain-messages"
    if any(field(item, "role") is not None or field(item, "choices") is not None for item in messages):
        return "openai-messages"
    raise ResponseError(
        "cannot tell the message format (no item has a role, a LangChain type or a Responses API type); "
        "name it: openai-messages, openai-responses or langchain-messages",
        location,
        "messages",
    )


def to_response(output: Any, *, elapsed_sec: float | None = None) -> dict[str, Any]:
    """The response dict of whatever the agent produced (messages of any supported format, or spans),
    for `pytest_graphrag_respond`: `return to_response(agent.invoke(...))`."""
    if is_sequence(output) and output and hasattr(output[0], "context") and hasattr(output[0], "attributes"):
        response = from_otel_spans(output)
        if elapsed_sec is not None:
            response["elapsed_sec"] = elapsed_sec
        return response
    if not is_sequence(output) and field(output, "output") is not None:  # one Responses API `Response`
        output = [output]
    return MESSAGE_ADAPTERS[message_format(output)](output, elapsed_sec=elapsed_sec)
