"""The example project's grid agent, speaking each framework's own format (test support).

`GridAgent` plans its tool calls from the question; here its `Trace` is replaced by one that
also emits what an agent built on each framework would hold after the run, made with the
real libraries: OpenAI SDK `ChatCompletion`s and tool messages, Responses API items and a
`Response`, LangChain `AIMessage`/`ToolMessage`s, and OpenTelemetry spans from an SDK tracer
following the GenAI semantic conventions. The model's token usage is the agent's simulated one,
so a faithful adapter gives back exactly the agent's own response dict.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

from grid_agent import GridAgent, load_store  # noqa: E402
from grid_agent.trace import AgentError, Trace  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from openai.types.responses import Response, ResponseFunctionToolCall  # noqa: E402
from opentelemetry.trace import Status, StatusCode, Tracer  # noqa: E402

FORMATS = ("openai-messages", "openai-responses", "langchain-messages", "otel")


class FrameworkTrace(Trace):
    """A `Trace` that also records the run in one framework's objects."""

    def __init__(self, question_id: str, question_text: str) -> None:
        super().__init__(question_id, question_text)
        self.items: list[Any] = []

    def call(self, name: str, args: dict[str, Any], tool: Callable[[], str]) -> str:
        try:
            return super().call(name, args, tool)
        finally:
            self.emit_call(self.steps[-1])

    def emit_call(self, step: dict[str, Any]) -> None:
        raise NotImplementedError

    def finish(self, answer: str) -> dict[str, Any]:
        """The agent's own response; subclasses add the final model turn to their items."""
        return self.response(answer, 0.0)


class ChatTrace(FrameworkTrace):
    def __init__(self, question_id: str, question_text: str) -> None:
        super().__init__(question_id, question_text)
        self.items = [{"role": "user", "content": question_text}]

    def emit_call(self, step: dict[str, Any]) -> None:
        call = {
            "id": step["id"],
            "type": "function",
            "function": {"name": step["name"], "arguments": json.dumps(step["args"])},
        }
        self.items.append(_completion(None, [call], None))
        self.items.append(
            {"role": "tool", "tool_call_id": step["id"], "content": step.get("output", step.get("error"))}
        )

    def finish(self, answer: str) -> dict[str, Any]:
        response = super().finish(answer)
        usage = {
            "prompt_tokens": response["input_tokens"],
            "completion_tokens": response["output_tokens"],
            "total_tokens": response["total_tokens"],
        }
        self.items.append(_completion(answer, None, usage))
        return response


def _completion(content: str | None, tool_calls: list[dict[str, Any]] | None, usage: Any) -> ChatCompletion:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-grid",
            "object": "chat.completion",
            "created": 0,
            "model": "grid-agent",
            "choices": [
                {"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}
            ],
            "usage": usage,
        }
    )


class ResponsesTrace(FrameworkTrace):
    def __init__(self, question_id: str, question_text: str) -> None:
        super().__init__(question_id, question_text)
        self.items = [{"role": "user", "content": question_text}]

    def emit_call(self, step: dict[str, Any]) -> None:
        self.items.append(
            ResponseFunctionToolCall(
                type="function_call",
                call_id=step["id"],
                name=step["name"],
                arguments=json.dumps(step["args"]),
            )
        )
        self.items.append(
            {
                "type": "function_call_output",
                "call_id": step["id"],
                "output": step.get("output", step.get("error")),
            }
        )

    def finish(self, answer: str) -> dict[str, Any]:
        response = super().finish(answer)
        self.items.append(
            Response.model_validate(
                {
                    "id": "resp-grid",
                    "object": "response",
                    "created_at": 0,
                    "model": "grid-agent",
                    "output": [
                        {
                            "type": "message",
                            "id": "msg-grid",
                            "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": answer, "annotations": []}],
                        }
                    ],
                    "parallel_tool_calls": True,
                    "tool_choice": "auto",
                    "tools": [],
                    "usage": {
                        "input_tokens": response["input_tokens"],
                        "output_tokens": response["output_tokens"],
                        "total_tokens": response["total_tokens"],
                        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                        "output_tokens_details": {"reasoning_tokens": 0},
                    },
                }
            )
        )
        return response


class LangChainTrace(FrameworkTrace):
    def __init__(self, question_id: str, question_text: str) -> None:
        super().__init__(question_id, question_text)
        self.items = [HumanMessage(question_text)]

    def emit_call(self, step: dict[str, Any]) -> None:
        self.items.append(
            AIMessage("", tool_calls=[{"name": step["name"], "args": step["args"], "id": step["id"]}])
        )
        failed = step["status"] == "error"
        self.items.append(
            ToolMessage(
                step["error"] if failed else step["output"],
                tool_call_id=step["id"],
                status="error" if failed else "success",
            )
        )

    def finish(self, answer: str) -> dict[str, Any]:
        response = super().finish(answer)
        usage = {key: response[key] for key in ("input_tokens", "output_tokens", "total_tokens")}
        self.items.append(AIMessage(answer, usage_metadata=usage))
        return response


class OtelTrace(FrameworkTrace):
    """Spans in the GenAI conventions: one `execute_tool` span per call, one `chat` span answering."""

    tracer: Tracer

    def call(self, name: str, args: dict[str, Any], tool: Callable[[], str]) -> str:
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        with self.tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                return Trace.call(self, name, args, tool)
            finally:
                step = self.steps[-1]
                span.set_attribute("gen_ai.tool.call.id", step["id"])
                span.set_attribute("gen_ai.tool.call.arguments", json.dumps(step["args"]))
                if step["status"] == "error":
                    span.set_status(Status(StatusCode.ERROR, step["error"]))
                else:
                    span.set_attribute("gen_ai.tool.call.result", step["output"])

    def finish(self, answer: str) -> dict[str, Any]:
        response = super().finish(answer)
        output = [
            {"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}
        ]
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": response["input_tokens"],
            "gen_ai.usage.output_tokens": response["output_tokens"],
            "gen_ai.output.messages": json.dumps(output),
        }
        with self.tracer.start_as_current_span("chat grid-agent", attributes=attributes):
            pass
        return response


TRACES: dict[str, type[FrameworkTrace]] = {
    "openai-messages": ChatTrace,
    "openai-responses": ResponsesTrace,
    "langchain-messages": LangChainTrace,
}


class FrameworkAgent:
    """The grid agent, answering in one framework's format."""

    def __init__(self, agent: GridAgent, trace_type: type[FrameworkTrace]) -> None:
        self.agent = agent
        self.trace_type = trace_type

    def run(self, question_id: str, question_text: str) -> tuple[Any, dict[str, Any]]:
        """(what the framework holds after the run, the agent's own response); AgentError when it gives up."""
        trace = self.trace_type(question_id, question_text)
        answer = self.agent.plan(question_text)(trace)
        return trace.items, trace.finish(answer)


class OtelAgent:
    """The grid agent traced with an opentelemetry-sdk tracer, one `invoke_agent` span per run."""

    def __init__(self, agent: GridAgent, tracer: Tracer, *, question_attribute: str | None) -> None:
        self.agent = agent
        self.tracer = tracer
        self.question_attribute = question_attribute

    def run(self, question_id: str, question_text: str) -> None:
        """Answer one question; its spans go to the tracer's exporter. Raises AgentError like the agent."""
        trace = type("BoundOtelTrace", (OtelTrace,), {"tracer": self.tracer})(question_id, question_text)
        user = [{"role": "user", "parts": [{"type": "text", "content": question_text}]}]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": json.dumps(user),
        }
        if self.question_attribute:
            attributes[self.question_attribute] = question_id
        with self.tracer.start_as_current_span(
            "invoke_agent grid", attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                trace.finish(self.agent.plan(question_text)(trace))
            except AgentError as error:
                span.set_status(Status(StatusCode.ERROR, str(error)))
                raise


@contextmanager
def memory_tracer() -> Iterator[tuple[Tracer, Any]]:
    """An SDK tracer whose finished spans land in an `InMemorySpanExporter`."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "grid-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield provider.get_tracer("grid-agent"), exporter
    finally:
        provider.shutdown()


def otlp_json(spans: Any) -> str:
    """The spans as OTLP/JSON, through opentelemetry's own OTLP encoder and protobuf's JSON mapping."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return MessageToJson(encode_spans(spans))


def grid_agent() -> GridAgent:
    return GridAgent(load_store())
