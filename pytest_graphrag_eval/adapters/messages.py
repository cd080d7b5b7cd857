"""Agent message lists to response dicts: OpenAI Chat Completions messages, Responses API items and
LangChain / LangGraph messages (objects or any of their dict forms), told by name or by their shape.

Tool calls and their results are paired by call id; a result naming a call never made is an error of the
whole input. No format has an error flag for tool results: a tool message or `function_call_output` with
`"status": "error"` (as LangChain writes it) counts as a failed call; LangChain's `invalid_tool_calls`
(arguments the model wrote that did not parse) are failed steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.adapters.access import field, is_sequence, kind_name
from pytest_graphrag_eval.adapters.otel import from_otel_spans
from pytest_graphrag_eval.adapters.tool_calls import NO_RESULT, parse_arguments, response_dict, tool_error
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")
CHAT_USAGE_NAMES = ("prompt_tokens", "completion_tokens", "total_tokens")
RESPONSES_ITEM_TYPES = frozenset({"function_call", "function_call_output", "reasoning"})
LANGCHAIN_TYPES = frozenset({"ai", "human", "tool", "system", "AIMessageChunk"})
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
                f"a tool result for call id {key!r} has no matching tool call before it", self.location, where
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
        content = field(message, content_key)
        output = content if isinstance(content, str) else text_of(content)
        error = tool_error(output) if field(message, "status") == "error" else None
        self.result(field(message, id_key), output, f"{where}.{id_key}", error)

    def steps(self) -> list[dict[str, object]]:
        """The `actual_steps` list: every call in order, unanswered ones as error steps."""
        for step in self._steps.values():
            if "status" not in step:
                step.update(status="error", error=NO_RESULT)
        return list(self._steps.values())


def text_of(content: object) -> str | None:
    """The text of message content: a string as is (byte for byte), text parts joined; only text parts
    carry the answer."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        parts = [part if isinstance(part, str) else field(part, "text") for part in content]
        texts = [text for text in parts if isinstance(text, str)]
        return "".join(texts) if texts else None
    return None


def sum_usage(totals: dict[str, int], usage: object, names: Sequence[str] = USAGE_KEYS) -> None:
    """Add one usage record's (input, output, total) counts, named per format, into `totals`."""
    for target, name in zip(USAGE_KEYS, names, strict=True):
        value = field(usage, name)
        if isinstance(value, int) and not isinstance(value, bool):
            totals[target] = totals.get(target, 0) + value


def _started_log(
    values: Any, name: str, location: SourceLocation, usage: Any = None, names: Sequence[str] = USAGE_KEYS
) -> tuple[ToolCallLog, dict[str, int]]:
    """A log for the calls in `values` (a list of `name`, else an error) and the totals of the `usage`
    records given beside them."""
    if not is_sequence(values):
        raise ResponseError(f"must be a list of {name}, got {kind_name(values)}", location, name)
    totals: dict[str, int] = {}
    for record in usage if is_sequence(usage) else [usage]:
        sum_usage(totals, record, names)
    return ToolCallLog(location), totals


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
    log, totals = _started_log(messages, "messages", location, usage, CHAT_USAGE_NAMES)
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


def from_openai_responses(
    items: Any, *, usage: Any = None, elapsed_sec: float | None = None, location: SourceLocation | None = None
) -> dict[str, Any]:
    """The response dict for one agent run given as Responses API items (or `Response` objects)."""
    location = location or SourceLocation()
    if not is_sequence(items) and field(items, "output") is not None:
        items = [items]
    log, totals = _started_log(items, "items", location, usage)
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


def from_langchain_messages(
    messages: Any, *, elapsed_sec: float | None = None, location: SourceLocation | None = None
) -> dict[str, Any]:
    """The response dict for one agent run given as LangChain messages or a LangGraph state."""
    location = location or SourceLocation()
    if isinstance(messages, Mapping) and "messages" in messages:
        messages = messages["messages"]
    log, totals = _started_log(messages, "messages", location)
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


MESSAGE_ADAPTERS: dict[str, Callable[..., dict[str, Any]]] = {
    "openai-messages": from_openai_messages,
    "openai-responses": from_openai_responses,
    "langchain-messages": from_langchain_messages,
}


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
