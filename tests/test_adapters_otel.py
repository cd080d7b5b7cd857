"""OpenTelemetry specifics on real SDK spans: OpenInference tool spans, token counts of nested
spans, the recorder under concurrent questions, and OTLP/JSON as the spec writes it (hex ids,
one export per line)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from trace_agents import memory_tracer, otlp_json

from pytest_graphrag_eval import (
    ConfigurationError,
    OtelRecorder,
    ResponseError,
    from_otel_spans,
    from_otlp_json,
    to_response,
)
from pytest_graphrag_eval.adapters import QUESTION_ID_ATTRIBUTE

SPARQL = '{"head": {"vars": ["s"]}, "results": {"bindings": []}}'


def openinference_run(tracer: Any) -> None:
    """An agent traced the OpenInference way: AGENT span, LLM spans with token counts, TOOL spans."""
    with tracer.start_as_current_span(
        "agent", attributes={"openinference.span.kind": "AGENT", "input.value": "Q?"}
    ) as agent:
        with tracer.start_as_current_span(
            "llm",
            attributes={
                "openinference.span.kind": "LLM",
                "llm.token_count.prompt": 10,
                "llm.token_count.completion": 3,
                "llm.token_count.total": 13,
            },
        ):
            pass
        tool = {
            "openinference.span.kind": "TOOL",
            "tool.name": "sparql_query",
            "input.value": '{"query": "SELECT"}',
        }
        with tracer.start_as_current_span("sparql_query", attributes={**tool, "output.value": SPARQL}):
            pass
        with tracer.start_as_current_span("sparql_query", attributes=tool) as failed:
            failed.set_status(Status(StatusCode.ERROR, "timeout after 30 s"))
        llm = {
            "openinference.span.kind": "LLM",
            "llm.token_count.prompt": 20,
            "llm.token_count.completion": 5,
            "llm.token_count.total": 25,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "No substations.",
        }
        with tracer.start_as_current_span("llm", attributes=llm):
            pass
        agent.set_attribute("output.value", "No substations match.")


def test_openinference_spans() -> None:
    with memory_tracer() as (tracer, exporter):
        openinference_run(tracer)
        response = from_otel_spans(exporter.get_finished_spans())
    elapsed = response.pop("elapsed_sec")
    assert elapsed >= 0
    steps = response.pop("actual_steps")
    assert [step["status"] for step in steps] == ["success", "error"]
    assert steps[0]["output"] == SPARQL and steps[0]["args"] == {"query": "SELECT"}
    assert steps[1]["error"] == "timeout after 30 s"
    # the agent span ends last: its output is the answer; the LLM spans' counts are summed once
    assert response == {
        "actual_answer": "No substations match.",
        "input_tokens": 30,
        "output_tokens": 8,
        "total_tokens": 38,
    }


def test_usage_of_an_agent_span_repeating_its_model_calls_is_not_counted_twice() -> None:
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "NO1"}]}]
    usage = {
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 2,
        "gen_ai.output.messages": json.dumps(answer),
    }
    with memory_tracer() as (tracer, exporter):
        agent = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.usage.input_tokens": 14,
            "gen_ai.usage.output_tokens": 4,
        }
        with tracer.start_as_current_span("invoke_agent", attributes=agent):
            for _ in range(2):
                with tracer.start_as_current_span(
                    "chat", attributes={"gen_ai.operation.name": "chat", **usage}
                ):
                    pass
        response = from_otel_spans(exporter.get_finished_spans())
    assert (response["input_tokens"], response["output_tokens"], response["total_tokens"]) == (14, 4, 18)
    assert response["actual_answer"] == "NO1"


def test_otlp_json_with_hex_ids_and_one_export_per_line() -> None:
    """The OTLP spec's JSON (hex ids, int64 as text) as a collector's file exporter writes it."""
    with memory_tracer() as (tracer, exporter):
        openinference_run(tracer)
        spans = exporter.get_finished_spans()
    lines = []
    for span in spans:  # one export request per span, as batches arrive
        document = json.loads(otlp_json([span]))
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for item in scope["spans"]:
                    item["traceId"] = format(span.context.trace_id, "032x")
                    item["spanId"] = format(span.context.span_id, "016x")
                    if span.parent is not None:
                        item["parentSpanId"] = format(span.parent.span_id, "016x")
        lines.append(json.dumps(document))
    responses = from_otlp_json("\n".join(lines) + "\n")
    assert list(responses) == ["Q?"], "no id attribute: keyed by the agent span's input"
    expected = from_otel_spans(spans)
    assert responses["Q?"] == expected


def test_recorder_keeps_concurrent_questions_apart() -> None:
    provider = TracerProvider()
    recorder = OtelRecorder(provider)
    tracer = provider.get_tracer("agent")

    class Question:
        def __init__(self, question_id: str) -> None:
            self.question_id = question_id

    async def agent(name: str) -> None:
        for step in range(3):
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"{name}-{step}",
            }
            with tracer.start_as_current_span("execute_tool", attributes=attributes) as span:
                await asyncio.sleep(0)  # the other question's spans start and end meanwhile
                span.set_attribute("gen_ai.tool.call.result", f"{name} result {step}")

    async def both() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(
                *(recorder.arespond(Question(name), lambda name=name: agent(name)) for name in ("a", "b"))
            )
        )

    first, second = asyncio.run(both())
    assert [step["id"] for step in first["actual_steps"]] == ["a-0", "a-1", "a-2"]
    assert [step["id"] for step in second["actual_steps"]] == ["b-0", "b-1", "b-2"]
    assert all(step["status"] == "success" for step in first["actual_steps"] + second["actual_steps"])
    with pytest.raises(ResponseError, match="has no GenAI or OpenInference spans"):
        recorder.respond(Question("c"), lambda: None)  # an agent that traced nothing is not scored as empty


def test_recorder_sets_the_question_attribute_and_needs_an_sdk_provider() -> None:
    with pytest.raises(ConfigurationError, match="needs an opentelemetry-sdk TracerProvider"):
        OtelRecorder(object())
    assert QUESTION_ID_ATTRIBUTE == "graphrag.question_id"


def test_to_response_reads_a_langgraph_state_and_a_responses_object() -> None:
    state = {"messages": [{"type": "human", "content": "Q?"}, {"type": "ai", "content": "A."}]}
    assert to_response(state) == {"actual_answer": "A.", "actual_steps": []}


def test_the_adapters_import_none_of_the_libraries_they_read() -> None:
    """Reading an OTLP file and message lists needs neither opentelemetry, langchain nor openai."""
    code = (
        "import sys, json\n"
        "from pytest_graphrag_eval import from_openai_messages, from_langchain_messages, from_otlp_json\n"
        "from_openai_messages([{'role': 'assistant', 'content': 'A.'}])\n"
        "from_langchain_messages([{'type': 'ai', 'content': 'A.'}])\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True).stdout
    )
    assert not {"openai", "langchain_core", "opentelemetry", "httpx"} & set(loaded)


def test_recorder_without_the_sdk_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if opentelemetry-sdk were absent
    with pytest.raises(ConfigurationError, match=r"pip install -e '[^']*pytest-graphrag-eval\[traces\]'"):
        OtelRecorder()
