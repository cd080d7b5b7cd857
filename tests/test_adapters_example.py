"""The adapters on a real agent: the example's grid agent, speaking each framework's format.

Each run is built with the framework's own library (OpenAI SDK types, langchain-core messages,
an opentelemetry-sdk tracer); the converted responses must equal the agent's own response dicts
and score exactly like the example's committed recording. The OTLP/JSON round trip goes through
opentelemetry's own OTLP encoder and the plugin's `--graphrag-responses`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from trace_agents import (
    EXAMPLE,
    TRACES,
    AgentError,
    FrameworkAgent,
    OtelAgent,
    grid_agent,
    memory_tracer,
    otlp_json,
)

from pytest_graphrag_eval import (
    Corpus,
    from_langchain_messages,
    from_openai_messages,
    from_openai_responses,
    from_otel_spans,
    load_corpus,
    load_responses,
    run_evaluation,
    to_response,
)
from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.scorer_factory import build_scorers

RECORDED = EXAMPLE / "recordings" / "responses.jsonl"
ADAPTERS = {
    "openai-messages": from_openai_messages,
    "openai-responses": from_openai_responses,
    "langchain-messages": from_langchain_messages,
}
VOLATILE = frozenset({"elapsed_sec", "started_at", "duration_sec"})


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(EXAMPLE / "corpus.yaml")


@pytest.fixture(scope="module")
def agent() -> Any:
    return grid_agent()


def scored(corpus: Corpus, responses: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Results by question id as the example's pytest.ini scores them, without measured times."""
    scorers = build_scorers(AnswerSettings(judge="lexical"), None)
    results = run_evaluation(corpus, responses, scorers=scorers)
    return {result["question_id"]: without_volatile(result) for result in results}


def without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: without_volatile(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def error_response(question_id: str, error: AgentError) -> dict[str, Any]:
    """What the example's agent returns when it gives up (and a hook would return)."""
    return {"question_id": question_id, "status": "error", "error": str(error)}


@pytest.mark.parametrize("kind", list(ADAPTERS))
def test_messages_convert_to_the_agents_own_responses_and_score_like_the_recording(
    corpus: Corpus, agent: Any, kind: str
) -> None:
    framework_agent = FrameworkAgent(agent, TRACES[kind])
    converted: dict[str, Any] = {}
    for question in corpus.questions():
        try:
            items, own = framework_agent.run(question.question_id, question.question_text)
        except AgentError as error:
            converted[question.question_id] = error_response(question.question_id, error)
            continue
        response = ADAPTERS[kind](items)
        assert response == {
            key: value for key, value in own.items() if key not in ("question_id", "elapsed_sec")
        }
        assert to_response(items) == response, "the format is recognised from the objects"
        converted[question.question_id] = {**response, "question_id": question.question_id}
    assert scored(corpus, converted) == scored(corpus, load_responses(RECORDED))


def test_sparql_outputs_stay_byte_for_byte(corpus: Corpus, agent: Any) -> None:
    question = next(q for q in corpus.questions() if q.question_id == "transformers-hamar")
    for kind, adapter in ADAPTERS.items():
        items, own = FrameworkAgent(agent, TRACES[kind]).run(question.question_id, question.question_text)
        outputs = [step["output"] for step in adapter(items)["actual_steps"]]
        assert outputs == [step["output"] for step in own["actual_steps"]]
        assert all(output.startswith('{\n  "head"') for output in outputs), kind


def run_traced(
    corpus: Corpus, agent: Any, question_attribute: str | None
) -> tuple[list[Any], dict[str, Any]]:
    """Every corpus question answered by the OTel-traced agent: (finished spans, the agent's responses)."""
    with memory_tracer() as (tracer, exporter):
        traced = OtelAgent(agent, tracer, question_attribute=question_attribute)
        for question in corpus.questions():
            with contextlib.suppress(AgentError):  # the failed run's trace is the error response
                traced.run(question.question_id, question.question_text)
        return list(exporter.get_finished_spans())


def test_otel_spans_of_each_trace_convert_to_the_agents_own_response(corpus: Corpus, agent: Any) -> None:
    spans = run_traced(corpus, agent, "graphrag.question_id")
    by_trace: dict[int, list[Any]] = {}
    for span in spans:
        by_trace.setdefault(span.context.trace_id, []).append(span)
    recorded = load_responses(RECORDED)
    assert len(by_trace) == len(recorded)
    for trace_spans in by_trace.values():
        question_id = next(s.attributes["graphrag.question_id"] for s in trace_spans if s.parent is None)
        response = from_otel_spans(trace_spans)
        expected = {key: value for key, value in recorded[question_id].items() if key not in ("question_id",)}
        if expected.get("status") == "error":
            assert response == expected
            continue
        assert isinstance(response.pop("elapsed_sec"), float)
        expected.pop("elapsed_sec")
        assert response == expected


@pytest.fixture(scope="module")
def otlp_files(corpus: Corpus, agent: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """OTLP/JSON exports written by opentelemetry's encoder: with the question id attribute, and without."""
    folder = tmp_path_factory.mktemp("otlp")
    files = {}
    for name, attribute in (("by-id", "graphrag.question_id"), ("by-text", None)):
        spans = run_traced(corpus, agent, attribute)
        files[name] = folder / f"{name}.json"
        files[name].write_text(otlp_json(spans), encoding="utf-8")
    return files


def test_otlp_json_from_the_otel_encoder_loads_like_the_recording(
    corpus: Corpus, otlp_files: dict[str, Path]
) -> None:
    responses = load_responses(otlp_files["by-id"])
    assert scored(corpus, responses) == scored(corpus, load_responses(RECORDED))


def example_project(pytester: pytest.Pytester) -> None:
    for name in ("corpus.yaml", "pytest.ini"):
        shutil.copy(EXAMPLE / name, pytester.path / name)


def run_report(pytester: pytest.Pytester, responses: Path, *extra: str) -> dict[str, Any]:
    """Run the example's ini and corpus (copied to pytester's folder) on a copy of `responses`."""
    if responses.parent != pytester.path:
        shutil.copy(responses, pytester.path / responses.name)
    report = pytester.path / f"{responses.stem}-report.json"
    result = pytester.runpytest(
        "--graphrag-responses",
        responses.name,
        "--graphrag-report",
        report.name,
        "-p",
        "no:cacheprovider",
        *extra,
    )
    assert result.ret == 0, result.stdout.str()
    return json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["by-id", "by-text"])
def test_otlp_replay_gives_the_same_report_as_the_jsonl_recording(
    pytester: pytest.Pytester, otlp_files: dict[str, Path], name: str
) -> None:
    example_project(pytester)
    expected = run_report(pytester, RECORDED)
    actual = run_report(pytester, otlp_files[name])
    assert without_volatile(actual["results"]) == without_volatile(expected["results"])
    assert actual["aggregates"]["micro"].keys() == expected["aggregates"]["micro"].keys()
    assert actual["gates"] == expected["gates"]


@pytest.mark.parametrize("kind", list(ADAPTERS))
def test_message_list_jsonl_replays_like_the_recording(
    pytester: pytest.Pytester, corpus: Corpus, agent: Any, kind: str
) -> None:
    """One agent run per line, `{"question_id", "messages"}`, as the SDK objects dump to JSON."""
    lines = []
    for question in corpus.questions():
        try:
            items, _ = FrameworkAgent(agent, TRACES[kind]).run(question.question_id, question.question_text)
        except AgentError as error:
            lines.append({"question_id": question.question_id, "error": str(error)})
            continue
        lines.append({"question_id": question.question_id, "messages": [plain(item) for item in items]})
    recording = pytester.path / f"{kind}.jsonl"
    recording.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    example_project(pytester)
    expected = run_report(pytester, RECORDED)
    for extra in ((), ("--graphrag-responses-format", kind)):
        actual = run_report(pytester, recording, *extra)
        assert without_volatile(actual["results"]) == without_volatile(expected["results"])


def plain(item: Any) -> Any:
    """An SDK object as the JSON its library writes (pydantic `model_dump`, LangChain `messages_to_dict`)."""
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json")
    if hasattr(item, "type") and hasattr(item, "content"):
        from langchain_core.messages import messages_to_dict

        return messages_to_dict([item])[0]
    return item
