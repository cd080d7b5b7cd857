"""Collection: corpus files become items addressable like any test."""

from __future__ import annotations

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    return pytester


def test_one_item_per_question_with_template_level(project: pytest.Pytester) -> None:
    result = project.runpytest("--graphrag-corpus", "corpus.yaml", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["corpus.yaml::names::q1", "corpus.yaml::names::q2", "corpus.yaml::others::q3", "*3 tests collected*"]
    )


def test_ini_option_collects_corpus(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ngraphrag_corpus = corpus.yaml\ngraphrag_responses = responses.jsonl\n")
    result = project.runpytest("-v")
    result.stdout.fnmatch_lines(["*corpus.yaml::names::q1 PASSED*", "*3 passed*"])
    assert result.ret == 0


def test_folder_collects_every_yaml(project: pytest.Pytester) -> None:
    folder = project.mkdir("corpora")
    (project.path / "corpus.yaml").rename(folder / "a.yaml")
    result = project.runpytest("--graphrag-corpus", "corpora", "--graphrag-responses", "responses.jsonl")
    result.assert_outcomes(passed=3)


def test_keyword_deselect_and_exitfirst_work_on_questions(project: pytest.Pytester) -> None:
    base = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
    project.runpytest(*base, "-k", "others").assert_outcomes(passed=1)
    project.runpytest(*base, "--deselect", "corpus.yaml::names::q2").assert_outcomes(passed=2)
    write_responses(project, [])
    project.runpytest(*base, "-x").assert_outcomes(failed=1)


def test_last_failed_reruns_only_failed_questions(project: pytest.Pytester) -> None:
    responses = good_responses()
    responses[1]["actual_steps"][0]["output"] = responses[0]["actual_steps"][0]["output"]
    write_responses(project, responses)
    base = [
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-threshold",
        "steps_score>=1",
    ]
    project.runpytest(*base).assert_outcomes(passed=2, failed=1)
    result = project.runpytest(*base, "--lf", "-v")
    result.stdout.fnmatch_lines(["*corpus.yaml::names::q2 FAILED*"])
    result.assert_outcomes(failed=1, deselected=2)


def test_xfail_question_from_corpus(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus(q3={"xfail": "the agent cannot list set three yet"}))
    responses = good_responses()
    responses[2] = {"question_id": "q3", "status": "error", "error": "unsupported"}
    write_responses(pytester, responses)
    result = pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl", "-rx"
    )
    result.assert_outcomes(passed=2, xfailed=1)
    result.stdout.fnmatch_lines(["*the agent cannot list set three yet*"])


def test_explicit_test_file_args_do_not_pull_in_ini_corpus(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ngraphrag_corpus = corpus.yaml\ngraphrag_responses = responses.jsonl\n")
    project.makepyfile(test_plain="def test_plain():\n    assert True\n")
    project.runpytest("test_plain.py").assert_outcomes(passed=1)
