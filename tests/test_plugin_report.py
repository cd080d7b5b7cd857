"""JSON report, JUnit properties, terminal summary, interrupted runs, xdist equality."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[2] = response("q3", rows=[["s4", "Delta"]])
    write_responses(pytester, responses)
    return pytester


def _load(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_report_has_results_aggregates_gates_metadata(project: pytest.Pytester) -> None:
    project.runpytest(
        *REPLAY, "--graphrag-report", "out/report.json", "--graphrag-gate", "steps_score.mean>=0.5"
    )
    report = _load(project.path / "out" / "report.json")
    assert set(report) >= {"results", "aggregates", "gates", "metadata"}
    assert [r["question_id"] for r in report["results"]] == ["q1", "q2", "q3"]
    first = report["results"][0]
    assert first["steps_score"] == 1 and first["reference_steps"][0][0]["matches"] == "call_q1"
    assert report["aggregates"]["micro"]["steps_score"]["mean"] == pytest.approx(2 / 3)
    assert report["aggregates"]["macro"]["steps_score"]["mean"] == pytest.approx(0.5)
    assert report["gates"][0]["passed"] is True
    assert report["metadata"]["interrupted"] is False
    assert not list((project.path / "out").glob(".*tmp")), "no temporary files left behind"


def test_junit_xml_carries_metrics(project: pytest.Pytester) -> None:
    project.runpytest(*REPLAY, "--junitxml", "junit.xml")
    tree = ET.parse(project.path / "junit.xml")
    properties = {
        (case.get("name"), prop.get("name")): prop.get("value")
        for case in tree.iter("testcase")
        for prop in case.iter("property")
    }
    assert (
        properties[("q1", "graphrag.steps_score")] == "1.0"
        or properties[("q1", "graphrag.steps_score")] == "1"
    )
    assert properties[("q3", "graphrag.steps_score")] in ("0", "0.0")
    assert ("q1", "graphrag.total_tokens") in properties


def test_terminal_summary_table(project: pytest.Pytester) -> None:
    result = project.runpytest(*REPLAY)
    result.stdout.fnmatch_lines(
        [
            "*graphrag-eval summary*",
            "template*questions*errors*steps_score*tokens*elapsed_s*",
            "names*2*0*1*",
            "others*1*0*0*",
            "overall*3*0*0.667*",
        ]
    )


def test_interrupted_run_still_writes_report(project: pytest.Pytester) -> None:
    project.makeconftest(
        "import pytest\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtest_call(item):\n"
        "    if item.name == 'q3':\n"
        "        raise KeyboardInterrupt\n"
    )
    result = project.runpytest_subprocess(*REPLAY, "--graphrag-report", "report.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = _load(project.path / "report.json")
    assert report["metadata"]["interrupted"] is True
    # A replay scores each question when its item runs: q3's item was interrupted before that, and q3
    # is still in the report, as an agent error saying what cut it (issue 44), not left out.
    assert [r["question_id"] for r in report["results"]] == ["q1", "q2", "q3"]
    cut = report["results"][2]
    assert (cut["status"], cut["outcome"]) == ("error", "interrupted")
    assert "KeyboardInterrupt while its item ran" in cut["error"]
    assert report["aggregates"]["micro"]["number_of_error_samples"] == 1


def _comparable(report: dict) -> dict:
    """Everything but timing metadata."""
    return {key: report[key] for key in ("results", "aggregates", "gates")}


def test_xdist_report_equals_serial_report(project: pytest.Pytester) -> None:
    gate = ["--graphrag-gate", "steps_score.mean>=0.9"]
    serial = project.runpytest_subprocess(
        *REPLAY, *gate, "--graphrag-report", "serial.json", "-p", "no:randomly"
    )
    parallel = project.runpytest_subprocess(*REPLAY, *gate, "--graphrag-report", "parallel.json", "-n", "2")
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
    assert _comparable(_load(project.path / "serial.json")) == _comparable(
        _load(project.path / "parallel.json")
    )
    parallel.stdout.fnmatch_lines(
        ["*graphrag-eval summary*", "overall*3*0*0.667*", "*FAIL*steps_score.mean*"]
    )


def test_xdist_workers_answer_each_question_once(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        "import json, os, pathlib\n"
        "HERE = pathlib.Path(__file__).parent\n"
        "LINES = (HERE / 'responses.jsonl').read_text().splitlines()\n"
        "RESPONSES = {r['question_id']: r for r in map(json.loads, LINES)}\n"
        "def pytest_graphrag_respond(question, config):\n"
        "    with open(HERE / 'answered.log', 'a') as log:\n"
        "        log.write(f'{os.getpid()} {question.question_id}\\n')\n"
        "    return RESPONSES[question.question_id]\n"
    )
    result = pytester.runpytest_subprocess("--graphrag-corpus", "corpus.yaml", "-n", "2")
    result.assert_outcomes(passed=3)
    answered = [line.split() for line in (pytester.path / "answered.log").read_text().splitlines()]
    assert sorted(question for _, question in answered) == ["q1", "q2", "q3"]
