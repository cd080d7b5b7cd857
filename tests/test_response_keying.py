"""One loader for responses: a trace without a question-id attribute is keyed by its question's text
against the corpus, the same way for the plugin and for the library (issue 28)."""

from __future__ import annotations

import contextlib
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from plugin_support import corpus, response
from trace_agents import AgentError, OtelAgent, grid_agent, memory_tracer, otlp_json

from pytest_graphrag_eval import ResponseError, corpus_from_data, load_corpus, load_responses, run_evaluation
from pytest_graphrag_eval.corpus.responses import load_response_attempts

pytest_plugins = ["pytester"]
EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"
VOLATILE = {"elapsed_sec", "nodeid", "outcome", "content_hash", "thresholds", "failures"}


def trace_keyed_by_text(path: Path) -> None:
    """The example corpus answered by the traced grid agent, its spans without a question id."""
    corpus = load_corpus(EXAMPLE / "corpus.yaml")
    with memory_tracer() as (tracer, exporter):
        agent = OtelAgent(grid_agent(), tracer, question_attribute=None)
        for question in corpus.questions():
            with contextlib.suppress(AgentError):  # the trace records the failure
                agent.run(question.question_id, question.question_text)
        path.write_text(otlp_json(exporter.get_finished_spans()), encoding="utf-8")


def scores(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        str(result["question_id"]): {key: value for key, value in result.items() if key not in VOLATILE}
        for result in results
    }


def test_a_trace_keyed_by_question_text_scores_in_the_plugin_and_the_library(
    pytester: pytest.Pytester,
) -> None:
    trace_keyed_by_text(pytester.path / "trace.json")
    shutil.copy(EXAMPLE / "corpus.yaml", pytester.path / "corpus.yaml")
    result = pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "trace.json",
        "--graphrag-report", "report.json", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    plugin = scores(json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))["results"])

    corpus = load_corpus(pytester.path / "corpus.yaml")
    library = scores(run_evaluation(corpus, load_responses(pytester.path / "trace.json", corpus=corpus)))

    assert set(library) == {question.question_id for question in corpus.questions()}
    assert library.keys() == plugin.keys()
    assert sum("steps_score" in scored for scored in library.values()) >= len(library) - 1  # one agent error
    for question_id, scored in library.items():
        for key in ("steps_score", "status", "actual_answer"):
            assert scored.get(key) == plugin[question_id].get(key), (question_id, key)


def test_the_library_keeps_every_attempt_keyed_by_text(tmp_path: Path) -> None:
    trace_keyed_by_text(tmp_path / "trace.json")
    corpus = load_corpus(EXAMPLE / "corpus.yaml")
    attempts = load_response_attempts(tmp_path / "trace.json", corpus=corpus)
    assert set(attempts) == {question.question_id for question in corpus.questions()}
    assert all(
        record["question_id"] == question_id
        for question_id, records in attempts.items()
        for record in records
    )


def test_run_evaluation_keys_text_keyed_responses_by_the_corpus_it_holds(tmp_path: Path) -> None:
    """Issue 42: `load_responses(path)` without `corpus=` scored nothing, with only a warning."""
    trace_keyed_by_text(tmp_path / "trace.json")
    corpus = load_corpus(EXAMPLE / "corpus.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "responses for unknown questions" warning either
        keyed_here = scores(run_evaluation(corpus, load_responses(tmp_path / "trace.json")))
    keyed_by_caller = scores(run_evaluation(corpus, load_responses(tmp_path / "trace.json", corpus=corpus)))
    assert keyed_here == keyed_by_caller
    assert sum("steps_score" in scored for scored in keyed_here.values()) >= len(keyed_here) - 1


def unkeyed(question_id: str) -> dict[str, Any]:
    """A response of `question_id` that does not say which question it answers."""
    return {key: value for key, value in response(question_id).items() if key != "question_id"}


def test_in_memory_responses_keyed_by_question_text_are_scored() -> None:
    results = run_evaluation(corpus_from_data(corpus()), {"Names of set three?": unkeyed("q3")})
    by_id = {result["question_id"]: result for result in results}
    assert by_id["q3"]["steps_score"] == 1.0
    assert by_id["q1"]["status"] != "success"


def test_a_response_keyed_by_a_text_two_questions_share_is_refused() -> None:
    shared = corpus_from_data(corpus(q2={"question_text": "Names of set one?"}))
    with pytest.raises(
        ResponseError, match=r"question text 'Names of set one\?', which the questions q1, q2 share"
    ):
        run_evaluation(shared, {"Names of set one?": unkeyed("q1")})
    by_id = {result["question_id"]: result for result in run_evaluation(shared, {"q1": response("q1")})}
    assert by_id["q1"]["steps_score"] == 1.0  # keyed by id, a shared text is no problem


def test_a_question_answered_under_its_id_and_its_text_is_refused_not_scored_as_two_attempts(
    tmp_path: Path,
) -> None:
    """Both responses were scored as attempts of q3 (steps_score the mean of the two), without a word."""
    wrong = unkeyed("q1")  # another question's answer, keyed by q3's text
    with pytest.raises(
        ResponseError,
        match=r"question 'q3' is answered twice, by the response keyed 'q3' and by this one keyed "
        r"'Names of set three\?': keep one",
    ):
        run_evaluation(corpus_from_data(corpus()), {"q3": unkeyed("q3"), "Names of set three?": wrong})
    recording = tmp_path / "responses.jsonl"
    lines = [{"question_id": "q3", **unkeyed("q3")}, {"question_id": " Names of set three?", **wrong}]
    recording.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(ResponseError, match=r"responses.jsonl:2, .*question 'q3' is answered twice"):
        load_responses(recording, corpus=corpus_from_data(corpus()))
