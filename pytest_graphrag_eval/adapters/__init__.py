"""Agent traces to response dicts: OpenAI messages and Responses items, LangChain messages, OTel spans.

So no one writes the converter by hand; nothing here imports openai, langchain-core or
opentelemetry: their objects are read by their fields, their JSON forms accepted too.
"""

from pytest_graphrag_eval.adapters.messages import (
    from_langchain_messages,
    from_openai_messages,
    from_openai_responses,
    message_format,
    to_response,
)
from pytest_graphrag_eval.adapters.otel import (
    QUESTION_ID_ATTRIBUTE,
    OtelRecorder,
    from_otel_spans,
    from_otlp_json,
)
from pytest_graphrag_eval.adapters.tool_calls import NO_RESULT

__all__ = [
    "NO_RESULT",
    "QUESTION_ID_ATTRIBUTE",
    "OtelRecorder",
    "from_langchain_messages",
    "from_openai_messages",
    "from_openai_responses",
    "from_otel_spans",
    "from_otlp_json",
    "message_format",
    "to_response",
]
