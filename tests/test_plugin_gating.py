"""Thresholds from every source and suite-level gates, driven as a user would."""

from __future__ import annotations

import json

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]


@pytest.fixture
def half_right(pytester: pytest.Pytester) -> pytest.Pytester:
    """q1 returns one of its two rows (steps_score 0); the rest are right."""
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[0] = response("q1", rows=[["s1", "Alpha"]])
    write_responses(pytester, responses)
    return pytester


def test_cli_threshold(half_right: pytest.Pytester) -> None:
    half_right.runpytest(*REPLAY).assert_outcomes(passed=3)
    result = half_right.runpytest(*REPLAY, "--graphrag-threshold", "steps_score>=1")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*FAIL*steps_score*required >= 1, cli threshold*"])


def test_ini_threshold_and_cli_override(half_right: pytest.Pytester) -> None:
    half_right.makeini("[pytest]\ngraphrag_thresholds =\n    steps_score>=1\n    elapsed_sec<=30\n")
    half_right.runpytest(*REPLAY).assert_outcomes(passed=2, failed=1)
    half_right.runpytest(*REPLAY, "--graphrag-threshold", "steps_score>=0").assert_outcomes(passed=3)
    half_right.runpytest(*REPLAY, "--graphrag-threshold", "elapsed_sec<=1").assert_outcomes(failed=3)


def test_pyproject_ini_options(half_right: pytest.Pytester) -> None:
    half_right.makepyprojecttoml('[tool.pytest.ini_options]\ngraphrag_thresholds = ["steps_score>=1"]\n')
    half_right.runpytest(*REPLAY).assert_outcomes(passed=2, failed=1)


def test_template_and_question_thresholds_most_specific_wins(pytester: pytest.Pytester) -> None:
    data = corpus(q2={"thresholds": {"steps_score": 0}})
    data[0]["thresholds"] = ["steps_score>=1"]
    write_corpus(pytester, data)
    responses = [response("q1", rows=[["s1", "Alpha"]]), response("q2", rows=[]), response("q3", rows=[])]
    write_responses(pytester, responses)
    result = pytester.runpytest(*REPLAY, "--graphrag-threshold", "steps_score>=0", "-v")
    result.stdout.fnmatch_lines(
        ["*names::q1 FAILED*", "*names::q2 PASSED*", "*others::q3 PASSED*"], consecutive=False
    )
    result.stdout.fnmatch_lines(["*required >= 1, template threshold*"])


def test_corpus_settings_thresholds(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, {"thresholds": ["steps_score>=1"], "templates": corpus()})
    write_responses(pytester, [response("q1", rows=[]), response("q2"), response("q3")])
    pytester.runpytest(*REPLAY).assert_outcomes(passed=2, failed=1)


def test_threshold_on_uncomputed_metric_is_an_error_not_a_pass(half_right: pytest.Pytester) -> None:
    result = half_right.runpytest(*REPLAY, "--graphrag-threshold", "answer_relevance>=0.5")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*answer_relevance was not computed*"])


def test_bad_threshold_is_a_usage_error(half_right: pytest.Pytester) -> None:
    result = half_right.runpytest(*REPLAY, "--graphrag-threshold", "steps_score=>1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--graphrag-threshold*steps_score=>1*"])


def test_failed_gate_fails_the_run_even_when_items_pass(half_right: pytest.Pytester) -> None:
    result = half_right.runpytest(
        *REPLAY, "--graphrag-gate", "steps_score.mean>=0.9", "--graphrag-report", "r.json"
    )
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*graphrag-eval summary*", "*FAIL*steps_score.mean*"])
    gates = json.loads((half_right.path / "r.json").read_text())["gates"]
    assert [(g["expression"], g["passed"]) for g in gates] == [("micro:steps_score.mean>=0.9", False)]


def test_passing_gates_macro_and_template_forms(half_right: pytest.Pytester) -> None:
    result = half_right.runpytest(
        *REPLAY,
        "--graphrag-gate",
        "steps_score.mean>=0.6",
        "--graphrag-gate",
        "macro:steps_score.mean>=0.75",
        "--graphrag-gate",
        "template[others]:steps_score.min>=1",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*PASS*macro:steps_score.mean*", "*PASS*template?others?:steps_score.min*"])


def test_gate_on_uncomputed_metric_fails(half_right: pytest.Pytester) -> None:
    result = half_right.runpytest(*REPLAY, "--graphrag-gate", "answer_f1.mean>=0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL*answer_f1*"])


def test_corpus_level_gates(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, {"gates": ["steps_score.mean>=1"], "templates": corpus()})
    write_responses(pytester, [response("q1", rows=[]), response("q2"), response("q3")])
    result = pytester.runpytest(*REPLAY)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
