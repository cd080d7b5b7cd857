"""Bad traces and message lists: clear errors naming file, line and field, or a failed step; never
a silent empty step list scored as a plain miss."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from plugin_support import corpus, write_corpus

from pytest_graphrag_eval import (
    ResponseError,
    from_langchain_messages,
    from_openai_messages,
    from_openai_responses,
    from_otel_spans,
    from_otlp_json,
    load_responses,
    to_response,
)
from pytest_graphrag_eval.adapters import NO_RESULT


def span(
    name: str, span_id: str, attributes: dict[str, Any], parent: str | None = None, **extra: Any
) -> dict[str, Any]:
    """One OTLP/JSON span (string attributes only, as most exporters write them)."""
    return {
        "traceId": "5b8aa5a2d2c872e8321cf37308d69df2",
        "spanId": span_id,
        **({"parentSpanId": parent} if parent else {}),
        "name": name,
        "startTimeUnixNano": "1000000000",
        "endTimeUnixNano": "3000000000",
        "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()],
        **extra,
    }


def export(*spans: dict[str, Any], service: str = "agent") -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": list(spans)}]}]}


AGENT = {"gen_ai.operation.name": "invoke_agent", "graphrag.question_id": "q1"}


def test_tool_span_without_tool_name_names_the_span() -> None:
    document = export(
        span("agent", "a1", AGENT),
        span("execute_tool", "t1", {"gen_ai.operation.name": "execute_tool"}, "a1"),
    )
    with pytest.raises(
        ResponseError, match=r"span 'execute_tool' \(span id t1.*without a tool name"
    ) as error:
        from_otlp_json(document)
    assert error.value.field == "gen_ai.tool.name"


def test_unrelated_service_trace_is_not_an_agent_trace(tmp_path: Path) -> None:
    path = tmp_path / "http.json"
    http = {"http.request.method": "GET", "url.full": "https://example.org/"}
    path.write_text(json.dumps(export(span("GET /", "h1", http), service="web-frontend")), encoding="utf-8")
    with pytest.raises(
        ResponseError, match=r"http\.json.*from service web-frontend has no GenAI or OpenInference spans"
    ):
        load_responses(path)


def test_tool_span_without_result_is_a_failed_step_not_a_success() -> None:
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "sparql_query",
        "gen_ai.tool.call.id": "c1",
    }
    response = from_otlp_json(export(span("agent", "a1", AGENT), span("execute_tool", "t1", tool, "a1")))[
        "q1"
    ]
    assert response["actual_steps"] == [
        {"name": "sparql_query", "args": {}, "id": "c1", "status": "error", "error": NO_RESULT}
    ]


def test_failed_tool_span_keeps_its_status_message() -> None:
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "sparql_query",
        "input.value": '{"query": "SELEC"}',
    }
    failed = span(
        "sparql", "t1", tool, "a1", status={"code": "STATUS_CODE_ERROR", "message": "syntax error at 1:1"}
    )
    response = from_otlp_json(export(span("agent", "a1", AGENT), failed))["q1"]
    assert response["actual_steps"] == [
        {
            "name": "sparql_query",
            "args": {"query": "SELEC"},
            "id": "t1",
            "status": "error",
            "error": "syntax error at 1:1",
        }
    ]


def test_trace_naming_no_question_is_an_error() -> None:
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "gen_ai.tool.call.result": "x"}
    with pytest.raises(ResponseError, match=r"names no question.*'graphrag\.question_id'"):
        from_otlp_json(
            export(
                span("agent", "a1", {"gen_ai.operation.name": "invoke_agent"}), span("tool", "t1", tool, "a1")
            )
        )


def test_spans_of_several_traces_are_not_one_run() -> None:
    first = span("agent", "a1", AGENT)
    second = {**span("agent", "a2", AGENT), "traceId": "0af7651916cd43dd8448eb211c80319c"}
    with pytest.raises(ResponseError, match="spans of 2 traces"):
        from_otel_spans([first, second])


def test_invalid_otlp_json_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(export(span("agent", "a1", AGENT))) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ResponseError, match=r"traces\.jsonl:2: invalid JSON line"):
        load_responses(path, "otlp")


HUGE = "1" + "0" * 5000  # past CPython's 4,300 digits, int() and json.loads raise a plain ValueError


def test_numbers_past_pythons_bounds_in_a_trace_are_an_error_or_data_never_a_traceback(
    tmp_path: Path,
) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(export(span("agent", "a1", AGENT))) + f'\n{{"n": {HUGE}}}\n', encoding="utf-8")
    with pytest.raises(
        ResponseError, match=r"traces\.jsonl:2: invalid JSON line: a number of more than 4300"
    ):
        load_responses(path, "otlp")
    call = {"id": "c1", "type": "function", "function": {"name": "sparql", "arguments": f'{{"n": {HUGE}}}'}}
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ]
    assert from_openai_messages(messages)["actual_steps"][0]["args"] == f'{{"n": {HUGE}}}'  # as written
    answer = {"openinference.span.kind": "LLM", "graphrag.question_id": "q1"}
    answer |= {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "A",
    }
    odd_index = {f"llm.output_messages.{HUGE}.message.role": "assistant"}
    endless = {"startTimeUnixNano": float("inf")}
    response = from_otlp_json(export(span("llm", "l1", answer | odd_index, **endless)))["q1"]
    assert response["actual_answer"] == "A" and "elapsed_sec" not in response


def test_tool_message_without_its_call_is_an_error() -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "call_9", "content": "{}"}]
    with pytest.raises(ResponseError, match="call id 'call_9' has no matching tool call") as error:
        from_openai_messages(messages)
    assert error.value.field == "messages[1].tool_call_id"


def test_output_without_its_call_in_responses_items_and_langchain() -> None:
    with pytest.raises(ResponseError, match="no matching tool call"):
        from_openai_responses([{"type": "function_call_output", "call_id": "c1", "output": "x"}])
    with pytest.raises(ResponseError, match="no matching tool call"):
        from_langchain_messages([{"type": "tool", "content": "x", "tool_call_id": "c1"}])


def test_calls_without_results_are_flagged_in_every_message_format() -> None:
    chat = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
        }
    ]
    items = [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]
    langchain = [{"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {}, "id": "c1"}]}]
    for response in (
        from_openai_messages(chat),
        from_openai_responses(items),
        from_langchain_messages(langchain),
    ):
        assert response["actual_steps"] == [
            {"name": "f", "args": {}, "id": "c1", "status": "error", "error": NO_RESULT}
        ]
        assert response["actual_answer"] is None


def test_message_list_that_is_not_a_list_names_file_line_and_question(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    good = {"question_id": "q1", "messages": [{"role": "assistant", "content": "ok"}]}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"question_id": "q2", "messages": "hello"}) + "\n")
    with pytest.raises(
        ResponseError, match=r"runs\.jsonl:2, question 'q2', field 'messages': must be a list"
    ):
        load_responses(path)


def test_message_line_without_messages_or_with_unknown_items(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(
        json.dumps({"question_id": "q1", "messages": [{"role": "assistant", "content": "ok"}]})
        + "\n"
        + json.dumps({"question_id": "q2"})
        + "\n"
    )
    with pytest.raises(ResponseError, match=r"runs\.jsonl:2, question 'q2', field 'messages': is missing"):
        load_responses(path)
    path.write_text(json.dumps({"question_id": "q1", "messages": [{"text": "?"}]}) + "\n")
    with pytest.raises(ResponseError, match=r"runs\.jsonl:1.*cannot tell the message format"):
        load_responses(path)
    with pytest.raises(ResponseError, match=r"runs\.jsonl:1.*field 'messages\[0\]\.role'"):
        load_responses(path, "openai-messages")


def test_unknown_format_name_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("{}\n")
    with pytest.raises(ResponseError, match="unknown responses format 'otel'"):
        load_responses(path, "otel")


def test_to_response_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ResponseError, match="must be a list of messages, got text"):
        to_response("the answer")


def test_plugin_reports_a_bad_trace_file_as_a_usage_error(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    (pytester.path / "traces.json").write_text(
        json.dumps(export(span("GET /", "h1", {"http.route": "/"}), service="web"))
    )
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "traces.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*traces.json*from service web has no GenAI or OpenInference spans*"])
    assert "Traceback" not in result.stderr.str()


def test_plugin_rejects_an_unknown_format_option(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    (pytester.path / "r.jsonl").write_text("")
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "r.jsonl",
        "--graphrag-responses-format",
        "otel",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--graphrag-responses-format (ini *) must be one of auto, responses, otlp*got 'otel'"]
    )


def test_a_run_with_no_tool_call_and_no_answer_is_an_error_not_an_empty_response() -> None:
    only_user = [{"role": "user", "content": "Which substations?"}]
    with pytest.raises(ResponseError, match="no tool call and no assistant answer"):
        from_openai_messages(only_user)
    with pytest.raises(ResponseError, match="no tool call and no assistant answer"):
        from_langchain_messages({"messages": []})
    with pytest.raises(ResponseError, match="no tool call and no assistant answer"):
        from_openai_responses([])


def test_narration_of_a_turn_that_calls_tools_is_not_the_answer() -> None:
    call = {"id": "c1", "function": {"name": "sparql_query", "arguments": "{}"}}
    messages = [{"role": "assistant", "content": "Let me query the graph.", "tool_calls": [call]}]
    response = from_openai_messages(messages)
    assert response["actual_answer"] is None
    assert response["actual_steps"][0]["error"] == NO_RESULT


def test_otlp_format_on_a_responses_file_says_resource_spans_is_missing(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    (pytester.path / "r.jsonl").write_text(json.dumps({"question_id": "q1", "actual_answer": "x"}) + "\n")
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "r.jsonl",
        "--graphrag-responses-format",
        "otlp",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*r.jsonl*resourceSpans*is missing*keys actual_answer, question_id*"])
    assert "got object" not in result.stderr.str()
