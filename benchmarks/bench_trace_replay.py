"""Benchmark: loading a replay file of agent traces against loading the plain responses it converts to.

Builds N synthetic agent runs (three tool calls each, SPARQL JSON outputs of 20 rows, a final
answer, token counts) and writes them three ways: plain response JSONL (what `--graphrag-record`
writes), JSONL of OpenAI Chat Completions message lists, and an OTLP/JSON trace export made by
opentelemetry's own OTLP encoder from spans of an SDK tracer. Each file is loaded with
`load_responses` (format detected, as `--graphrag-responses` does); the script checks that all
three give the same responses (elapsed times aside) and prints the median load time of each, with
its ratio to the plain file, and the file sizes.

    python benchmarks/bench_trace_replay.py            # N = 2,000, 5 runs each
    python benchmarks/bench_trace_replay.py --quick    # N = 50, 1 run: only checks that it works
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from timing import announce_quick, median_seconds

from pytest_graphrag_eval import load_responses

TOOLS_PER_RUN = 3
ROWS_PER_OUTPUT = 20


def sparql_output(run: int, call: int) -> str:
    bindings = [
        {
            "s": {"type": "uri", "value": f"urn:x:{run}:{call}:{row}"},
            "name": {"type": "literal", "value": f"N{row}"},
        }
        for row in range(ROWS_PER_OUTPUT)
    ]
    return json.dumps({"head": {"vars": ["s", "name"]}, "results": {"bindings": bindings}}, indent=2)


def runs(count: int) -> list[dict[str, Any]]:
    """The agent runs as plain responses (the reference every format must convert back to)."""
    return [
        {
            "question_id": f"q{run}",
            "actual_answer": f"Answer {run}.",
            "actual_steps": [
                {
                    "name": "sparql_query",
                    "args": {"query": f"SELECT ?s ?name WHERE {{ ?s :p {call} }} # {run}"},
                    "id": f"call_{run}_{call}",
                    "status": "success",
                    "output": sparql_output(run, call),
                }
                for call in range(TOOLS_PER_RUN)
            ],
            "input_tokens": 1000 + run,
            "output_tokens": 50,
            "total_tokens": 1050 + run,
        }
        for run in range(count)
    ]


def chat_messages(response: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Question {response['question_id']}?"}]
    for step in response["actual_steps"]:
        call = {
            "id": step["id"],
            "type": "function",
            "function": {"name": step["name"], "arguments": json.dumps(step["args"])},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": step["id"], "content": step["output"]})
    usage = {key: response[key] for key in ("input_tokens", "output_tokens", "total_tokens")}
    messages.append({"role": "assistant", "content": response["actual_answer"]})
    return [
        *messages[:-1],
        {
            "object": "chat.completion",
            "choices": [{"message": messages[-1]}],
            "usage": {
                "prompt_tokens": usage["input_tokens"],
                "completion_tokens": usage["output_tokens"],
                "total_tokens": usage["total_tokens"],
            },
        },
    ]


def otlp_export(responses: list[dict[str, Any]]) -> str:
    """The runs as GenAI-convention spans of an SDK tracer, encoded by opentelemetry's OTLP encoder."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    for response in responses:
        agent = {"gen_ai.operation.name": "invoke_agent", "graphrag.question_id": response["question_id"]}
        with tracer.start_as_current_span("invoke_agent", attributes=agent):
            for step in response["actual_steps"]:
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": step["name"],
                    "gen_ai.tool.call.id": step["id"],
                    "gen_ai.tool.call.arguments": json.dumps(step["args"]),
                    "gen_ai.tool.call.result": step["output"],
                }
                with tracer.start_as_current_span("execute_tool", attributes=tool):
                    pass
            output = [
                {"role": "assistant", "parts": [{"type": "text", "content": response["actual_answer"]}]}
            ]
            chat = {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": response["input_tokens"],
                "gen_ai.usage.output_tokens": response["output_tokens"],
                "gen_ai.output.messages": json.dumps(output),
            }
            with tracer.start_as_current_span("chat", attributes=chat):
                pass
    text: str = MessageToJson(encode_spans(exporter.get_finished_spans()))
    provider.shutdown()
    return text


def without_elapsed(responses: dict[str, Any]) -> dict[str, Any]:
    return {key: {k: v for k, v in value.items() if k != "elapsed_sec"} for key, value in responses.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 50, one run: only checks that it works")
    args = parser.parse_args()
    announce_quick(args.quick)
    count, repeats = (50, 1) if args.quick else (2000, 5)
    responses = runs(count)
    with tempfile.TemporaryDirectory() as folder:
        files = {
            "plain responses JSONL": Path(folder) / "responses.jsonl",
            "OpenAI message lists JSONL": Path(folder) / "messages.jsonl",
            "OTLP/JSON (otel encoder)": Path(folder) / "traces.json",
        }
        files["plain responses JSONL"].write_text(
            "".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8"
        )
        files["OpenAI message lists JSONL"].write_text(
            "".join(
                json.dumps({"question_id": r["question_id"], "messages": chat_messages(r)}) + "\n"
                for r in responses
            ),
            encoding="utf-8",
        )
        files["OTLP/JSON (otel encoder)"].write_text(otlp_export(responses), encoding="utf-8")
        expected = without_elapsed(load_responses(files["plain responses JSONL"]))
        for name, path in files.items():
            if without_elapsed(load_responses(path)) != expected:
                print(f"FAIL: {name} does not load to the same responses", file=sys.stderr)
                return 1
        print(f"{count} agent runs, {TOOLS_PER_RUN} tool calls each; median of {repeats} load(s)")
        baseline = None
        for name, path in files.items():
            seconds = median_seconds(partial(load_responses, path), repeats)
            baseline = baseline or seconds
            size = path.stat().st_size / 1e6
            print(f"  {name:28} {seconds * 1000:9.1f} ms  {seconds / baseline:5.2f}x  {size:7.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
