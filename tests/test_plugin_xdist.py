"""xdist: every distribution mode answers each question once; scoped modes start whole templates together."""

from __future__ import annotations

import json

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

ANSWER_LOG_CONFTEST = """
import json, os, pathlib, threading
HERE = pathlib.Path(__file__).parent
LINES = (HERE / "responses.jsonl").read_text().splitlines()
RESPONSES = {r["question_id"]: r for r in map(json.loads, LINES)}
BARRIER = threading.Barrier(int(os.environ.get("GRAPHRAG_TEST_BARRIER", "1")), timeout=20)

def pytest_graphrag_respond(question, config):
    with open(HERE / "answered.log", "a") as log:
        log.write(f"{os.getpid()} {question.question_id}\\n")
    BARRIER.wait()  # with a barrier of n, n questions must be in flight in this process at once
    return RESPONSES[question.question_id]
"""


def one_template() -> list[dict[str, object]]:
    """The three questions of `corpus()` in a single template."""
    templates = corpus()
    return [{"template_id": "all", "questions": [q for t in templates for q in t["questions"]]}]


@pytest.mark.parametrize("dist", ["load", "loadscope", "loadfile", "loadgroup", "worksteal"])
def test_every_distribution_mode_answers_each_question_once(pytester: pytest.Pytester, dist: str) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(ANSWER_LOG_CONFTEST)
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus", "corpus.yaml", "-n", "2", "--dist", dist, "--graphrag-report", "report.json"
    )
    result.assert_outcomes(passed=3)
    answered = [line.split() for line in (pytester.path / "answered.log").read_text().splitlines()]
    assert sorted(question for _, question in answered) == ["q1", "q2", "q3"]
    report = json.loads((pytester.path / "report.json").read_text())
    assert [result["question_id"] for result in report["results"]] == ["q1", "q2", "q3"]


def test_loadscope_worker_starts_the_whole_template_at_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # All three questions wait for each other: this passes only if one worker has all three in flight.
    monkeypatch.setenv("GRAPHRAG_TEST_BARRIER", "3")
    write_corpus(pytester, one_template())
    write_responses(pytester, good_responses())
    pytester.makeconftest(ANSWER_LOG_CONFTEST)
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus", "corpus.yaml", "-n", "2", "--dist", "loadscope"
    )
    result.assert_outcomes(passed=3)
    answered = [line.split() for line in (pytester.path / "answered.log").read_text().splitlines()]
    assert len({pid for pid, _ in answered}) == 1, "one worker answered the whole template"


BREAK_CORPUS_AT_CONTROLLER_FINISH = """
import pathlib
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):  # the controller, after every worker finished
        pathlib.Path(session.config.rootpath, "corpus.yaml").write_text("templates: [")
    yield
"""


def test_controller_takes_corpus_gates_from_the_workers(pytester: pytest.Pytester) -> None:
    # The corpus file is broken before the controller evaluates gates: its gate must come from the workers.
    write_corpus(pytester, {"gates": ["steps_score.mean>=1"], "templates": corpus()})
    write_responses(pytester, [response("q1", rows=[]), *good_responses()[1:]])
    pytester.makeconftest(BREAK_CORPUS_AT_CONTROLLER_FINISH)
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "-n",
        "2",
        "--graphrag-report",
        "report.json",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    gates = json.loads((pytester.path / "report.json").read_text())["gates"]
    assert [(gate["gate"], gate["passed"]) for gate in gates] == [("micro:steps_score.mean>=1", False)]


@pytest.mark.parametrize(("dist", "noted"), [("load", True), ("loadscope", False)])
def test_header_notes_when_workers_look_only_one_question_ahead(
    pytester: pytest.Pytester, dist: str, noted: bool
) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(ANSWER_LOG_CONFTEST)
    result = pytester.runpytest_subprocess("--graphrag-corpus", "corpus.yaml", "-n", "2", "--dist", dist)
    result.assert_outcomes(passed=3)
    note = "*graphrag-eval: with --dist load each xdist worker answers and judges two questions at a time*"
    if noted:
        result.stdout.fnmatch_lines([note])
    else:
        result.stdout.no_fnmatch_line(note)
