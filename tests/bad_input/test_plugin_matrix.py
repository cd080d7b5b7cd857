"""Every case of the bad-input matrix, run through pytest: a located message, never our traceback."""

from __future__ import annotations

import json
import re

import pytest
from cases import CASES, Case

OUR_FRAME = re.compile(r"pytest_graphrag_eval[/\\]")


def _write_project(pytester: pytest.Pytester, case: Case) -> None:
    for name, content in case.all_files().items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    if case.ini is not None:
        pytester.makeini(f"[pytest]\n{case.ini}\n")
    if case.conftest is not None:
        pytester.makeconftest(case.conftest)


XDIST_CASES = [
    case
    for case in CASES
    if case.id
    in {
        "input-tokens-negative",
        "question-id-duplicate-in-file",
        "llm-concurrency-zero",
        "hook-returns-text",
        "cache-folder-is-a-file",
        "no-responses-no-hook",
        "answers-config-unknown-key",
        "corpus-binary",
    }
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_gets_a_located_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    _check_case(pytester, monkeypatch, case, [])


@pytest.mark.parametrize("case", XDIST_CASES, ids=[case.id for case in XDIST_CASES])
def test_bad_input_under_xdist_gets_the_same_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    _check_case(pytester, monkeypatch, case, ["-n", "2"])


def _check_case(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: Case, extra: list[str]
) -> None:
    for name, value in case.env.items():
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)
    _write_project(pytester, case)
    args = [*case.args, *extra]
    if case.outcome == "failed":
        args += ["--graphrag-report", "report.json"]
    result = pytester.runpytest(*args)
    output = result.stdout.str() + "\n" + result.stderr.str()

    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    assert not OUR_FRAME.search(output), output
    for fragment in case.expect:
        assert fragment in output, f"{fragment!r} missing from:\n{output}"
    if case.outcome == "usage":
        assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    elif case.outcome == "collection":
        # pytest stops after a collection error; xdist reports it as a failed run.
        stopped = pytest.ExitCode.TESTS_FAILED if extra else pytest.ExitCode.INTERRUPTED
        assert result.ret == stopped, output
        assert "ERROR collecting" in output
    else:
        assert result.ret == pytest.ExitCode.TESTS_FAILED, output
        result.assert_outcomes(failed=1, passed=2)
        report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
        by_id = {entry["question_id"]: entry for entry in report["results"]}
        assert set(by_id) == {"q1", "q2", "q3"}, "every question is in the report"
        failed = by_id[case.failed_question]
        assert failed["status"] == "error" or any(key.endswith("_error") for key in failed), failed


def test_the_matrix_is_large_enough() -> None:
    assert len(CASES) >= 80
    assert len({case.id for case in CASES}) == len(CASES)
