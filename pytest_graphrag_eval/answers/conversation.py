"""One judged exchange: ask for a JSON reply, check it, retry once with feedback.

A second bad reply or a failed call is a `JudgeFailure`, reported as the metric's `*_error`; every
call's usage goes into `usage`, rejected ones and refusals too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pytest_graphrag_eval.llm import LLMError
from pytest_graphrag_eval.llm.judge import Judge, Usage
from pytest_graphrag_eval.llm.replies import InvalidReply

T = TypeVar("T")

RETRY_MESSAGE = (
    "Your previous reply could not be used: {problem}. "
    "Reply again with only the JSON object described in the instructions."
)


class JudgeFailure(Exception):
    """The judge could not produce a usable verdict; the message is user-facing."""


def response_format(name: str, properties: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """The chat `response_format` for an object with exactly `properties` (`json_object` for endpoints
    without schema support); replies are checked by our validators either way."""
    if mode == "json_object":
        return {"type": "json_object"}
    schema = {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


async def ask_json(
    client: Judge,
    messages: Sequence[Mapping[str, str]],
    parse: Callable[[str], T],
    *,
    usage: Usage,
    model: str | None,
    response_format: Mapping[str, Any],
    temperature: float = 0.0,
    cache_key_extra: str = "",
) -> T:
    """Send `messages`, return `parse(reply)`; one corrective retry on an invalid reply."""
    options = {
        "model": model,
        "response_format": dict(response_format),
        "temperature": temperature,
        "cache_key_extra": cache_key_extra,
    }
    conversation = [dict(message) for message in messages]
    reply = await _chat(client, conversation, options, usage)
    try:
        return parse(reply)
    except InvalidReply as problem:
        conversation += [
            {"role": "assistant", "content": reply},
            {"role": "user", "content": RETRY_MESSAGE.format(problem=problem)},
        ]
    reply = await _chat(client, conversation, options, usage)
    try:
        return parse(reply)
    except InvalidReply as problem:
        raise JudgeFailure(f"invalid judge reply after one retry: {problem}") from None


async def _chat(client: Judge, messages: list[dict[str, str]], options: dict[str, Any], usage: Usage) -> str:
    try:
        result = await client.chat(messages, **options)
    except LLMError as error:
        usage.add_failure(error)
        raise JudgeFailure(f"judge call failed: {error}") from None
    usage.add_result(result)
    return result.text or ""
