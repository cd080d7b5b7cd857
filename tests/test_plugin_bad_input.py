"""Bad corpus and response files give clear errors, never tracebacks from our internals."""

from __future__ import annotations

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]


def _run(pytester: pytest.Pytester) -> pytest.RunResult:
    result = pytester.runpytest(*REPLAY)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    return result


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda data: data[0]["questions"][0].pop("question_text"),
            "*template 'names', question 'q1', field 'question_text': is missing*",
        ),
        (
            lambda data: data[1]["questions"][0].update(id="q1"),
            "*question 'q1', field 'id': duplicate question id*",
        ),
        (
            lambda data: data[0]["questions"][1].update(reference_steps=[{"name": "x"}]),
            "*question 'q2', field 'reference_steps'*list of lists*",
        ),
    ],
)
def test_structural_corpus_errors_are_collection_errors(
    pytester: pytest.Pytester, mutate, expected: str
) -> None:
    data = corpus()
    mutate(data)
    write_corpus(pytester, data)
    write_responses(pytester, good_responses())
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # collection errors stop the run, as in pytest
    result.stdout.fnmatch_lines(["*ERROR collecting corpus.yaml*", "*corpus.yaml:*" + expected.lstrip("*")])


def test_invalid_yaml_names_file_and_line(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("corpus.yaml").write_text("- template_id: a\n  questions: [\n", encoding="utf-8")
    write_responses(pytester, good_responses())
    result = _run(pytester)
    result.stdout.fnmatch_lines(["*corpus.yaml:*invalid YAML*"])


def test_reference_step_problem_fails_only_that_question(pytester: pytest.Pytester) -> None:
    data = corpus()
    data[0]["questions"][0]["reference_steps"][0][0]["required_columns"] = ["s", "nope"]
    write_corpus(pytester, data)
    write_responses(pytester, good_responses())
    result = pytester.runpytest(*REPLAY, "--graphrag-threshold", "steps_score>=1")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*steps_score_error*nope*"])


def test_malformed_response_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    pytester.path.joinpath("responses.jsonl").write_text('{"question_id": "q1"}\n{broken\n', encoding="utf-8")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*responses.jsonl:2*invalid JSON*"])


def test_response_for_unknown_question_is_not_an_error(pytester: pytest.Pytester) -> None:
    """A full recording replayed against a subset corpus: the extra answers are ignored."""
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses.append({"question_id": "zz", "actual_answer": "?"})
    write_responses(pytester, responses)
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=3)


def test_missing_corpus_path_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--graphrag-corpus", "nowhere.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*corpus path not found*nowhere.yaml*"])


def test_user_files_are_never_modified(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    before = {p.name: p.read_bytes() for p in pytester.path.iterdir() if p.is_file()}
    pytester.runpytest(*REPLAY, "--graphrag-report", "report.json")
    after = {p.name: p.read_bytes() for p in pytester.path.iterdir() if p.is_file() and p.name in before}
    assert before == after


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"q1": "Alpha, Beta", "q2": "Gamma", "q3": "Delta"}',
            "*responses.jsonl, question 'q1': a response must be an object, got text; an answer alone is "
            'written {"actual_answer": "..."}*',
        ),
        (
            '{"question_id": "q1", "actual_answer": "Alpha, Beta", "status": "failed"}\n',
            "*responses.jsonl:1, question 'q1', field 'status': must be success or error, got 'failed'*",
        ),
    ],
    ids=["answers-keyed-by-id", "status-failed"],
)
def test_responses_that_would_score_silently_are_usage_errors(
    pytester: pytest.Pytester, text: str, expected: str
) -> None:
    write_corpus(pytester, corpus())
    pytester.path.joinpath("responses.jsonl").write_text(text, encoding="utf-8")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])


def test_an_unscorable_step_names_the_responses_file_and_line(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    responses = good_responses()
    del responses[1]["actual_steps"][0]["status"]
    write_responses(pytester, responses)
    result = pytester.runpytest(*REPLAY, "--graphrag-threshold", "steps_score>=1")
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    # Named from the rootdir: the text lands in the reports, read on other machines.
    assert "steps_score_error: unscorable agent steps: responses.jsonl:2, question 'q2', " in output
    assert not [line for line in output.splitlines() if str(pytester.path) in line and "rootdir:" not in line]
    assert "field 'actual_steps[0].status': is missing (expected success or error)" in output


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            ["--graphrag-report=responses.jsonl"],
            "*--graphrag-report (ini graphrag_report) and --graphrag-responses*",
        ),
        (
            ["--graphrag-markdown=corpus.yaml"],
            "*--graphrag-markdown (ini graphrag_markdown) and --graphrag-corpus*",
        ),
        (
            ["--graphrag-report=out.md", "--graphrag-markdown=out.md"],
            "*--graphrag-report*--graphrag-markdown*",
        ),
        (
            ["--graphrag-judge-labels=j.yaml", "--graphrag-reviews=j.yaml"],
            "*--graphrag-judge-labels*--graphrag-reviews*",
        ),
    ],
    ids=["report-over-responses", "summary-over-corpus", "two-outputs", "labels-as-reviews"],
)
def test_one_file_given_as_two_of_the_runs_files_is_a_usage_error(
    pytester: pytest.Pytester, options: list[str], expected: str
) -> None:
    """The report was written over the recording (or the corpus) it was made from, one output over
    another, and a labels file given as the reviews too let labels decide questions: all without a word."""
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    before = pytester.path.joinpath("responses.jsonl").read_bytes()
    result = pytester.runpytest(*REPLAY, *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"{expected}name one file*give each its own*"])
    assert pytester.path.joinpath("responses.jsonl").read_bytes() == before
