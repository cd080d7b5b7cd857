"""Calibration through the plugin: the scripted judge on the loopback OpenAI server, real SDK."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import judge_support
import pytest

from pytest_graphrag_eval.testing import FakeOpenAIServer

SECRET = "sk-test-JUDGE-CALIBRATION-1234"
RUN = [
    "--graphrag-corpus=corpus.yaml",
    "--graphrag-responses=responses.jsonl",
    "--graphrag-judge=llm",
    "--graphrag-judge-labels=labels.yaml",
    "--graphrag-report=report.json",
    "--graphrag-markdown=summary.md",
    "-p",
    "no:cacheprovider",
]


@pytest.fixture
def judged(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[pytest.Pytester, FakeOpenAIServer]]:
    with FakeOpenAIServer(expected_api_key=SECRET) as server:
        server.set_chat_handler(judge_support.scripted)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        judge_support.write_project(pytester.path)
        yield pytester, server


def independent_kappa(person: list[str], judge: list[str]) -> float:
    """Cohen's kappa from its definition: observed agreement against the agreement of the marginals."""
    n = len(person)
    observed = sum(a == b for a, b in zip(person, judge, strict=True)) / n
    chance = sum((person.count(kind) / n) * (judge.count(kind) / n) for kind in ("pass", "fail"))
    return (observed - chance) / (1 - chance)


def test_reported_agreement_equals_the_hand_computed_values(judged) -> None:
    pytester, server = judged
    result = pytester.runpytest(
        *RUN, "--graphrag-gate=judge:answer_correctness.kappa>=0.5", "--graphrag-html=report.html"
    )
    assert result.ret == 0, result.stdout.str()
    section = json.loads((pytester.path / "report.json").read_text())["judge_calibration"]
    summary = section["metrics"]["answer_correctness"]
    person = [judge_support.person_verdict(q) for q in judge_support.QUESTIONS]
    judge = ["pass" if q <= "q10" else "fail" for q in judge_support.QUESTIONS]
    assert summary["labels"] == summary["judged"] == 20
    assert summary["accuracy"] == pytest.approx(16 / 20)
    assert summary["kappa"] == pytest.approx(0.6)
    assert summary["kappa"] == pytest.approx(independent_kappa(person, judge))
    low, high = summary["kappa_interval"]["low"], summary["kappa_interval"]["high"]
    assert -1 <= low < 0.6 < high <= 1 and math.isclose(0.6 - low, high - 0.6)
    assert summary["confusion"] == {
        "both_pass": 8,
        "both_fail": 8,
        "person_pass_judge_fail": 2,
        "person_fail_judge_pass": 2,
    }
    assert sorted(item["question_id"] for item in summary["disagreements"]) == sorted(
        judge_support.PERSON_DISAGREES
    )
    first = summary["disagreements"][0]
    assert first["person_reason"].startswith("alice's reading") and first["judge_reason"].startswith(
        "scripted"
    )
    assert summary["judge"].startswith("llm:")
    # The terminal, the Markdown and the report say which judge was calibrated on how many labels.
    result.stdout.fnmatch_lines(
        ["*judge calibration: answer_correctness by llm:* on 20 of 20 labels: accuracy 0.800, kappa 0.600*"]
    )
    markdown = (pytester.path / "summary.md").read_text()
    assert "### Judge calibration" in markdown and "20 of 20" in markdown
    page = (pytester.path / "report.html").read_text()
    assert "judge calibration: answer_correctness by llm:gpt-4o-mini on 20 of 20 labels" in page
    # 20 labelled answers and 20 questions, all judged through the same client and cache.
    assert server.count("chat") == 20 + 0  # every question's answer is one of the two labelled texts: cached


def test_a_kappa_gate_fails_when_the_judge_drifts(judged) -> None:
    pytester, server = judged
    gate = "--graphrag-gate=judge:answer_correctness.kappa>=0.5"
    assert pytester.runpytest(*RUN, gate).ret == 0
    server.set_chat_handler(judge_support.drifted)
    drifted = pytester.runpytest(*RUN, gate, "--graphrag-no-cache")
    assert drifted.ret == 1
    drifted.stdout.fnmatch_lines(
        [
            "*judge:answer_correctness.kappa = 0, required >= 0.5*"
            "the judge's verdicts in this run are not to be trusted*",
        ]
    )
    drifted.stdout.fnmatch_lines(
        ["*suite gate(s) FAILED*", "*FAIL  judge:answer_correctness.kappa = 0, required >= 0.5*"]
    )
    gates = json.loads((pytester.path / "report.json").read_text())["gates"]
    assert [gate["passed"] for gate in gates] == [False]


def test_calibration_is_planned_not_called_in_a_dry_run(judged) -> None:
    pytester, server = judged
    result = pytester.runpytest(*RUN, "--graphrag-dry-run")
    result.stdout.fnmatch_lines(
        ["*judge calibration: 20 labelled answers x 1 repeat(s) = up to 20 judge calls*"]
    )
    assert server.count("chat") == 0


def test_the_command_calibrates_outside_pytest(judged) -> None:
    pytester, _server = judged
    command = [
        str(Path(sys.executable).parent / "graphrag-eval-judge"),
        "--corpus=corpus.yaml",
        "--labels=labels.yaml",
        "--judge=llm",
        "--report=calibration.json",
    ]
    passed = subprocess.run(
        [*command, "--gate=judge:answer_correctness.kappa>=0.5"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert passed.returncode == 0, passed.stderr
    assert "kappa 0.600" in passed.stdout
    section = json.loads(Path(pytester.path / "calibration.json").read_text())["judge_calibration"]
    assert section["metrics"]["answer_correctness"]["kappa"] == pytest.approx(0.6)
    failed = subprocess.run(
        [*command, "--gate=judge:answer_correctness.kappa>=0.7"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert (
        failed.returncode == 1
        and "FAIL  judge:answer_correctness.kappa = 0.6, required >= 0.7" in failed.stdout
    )


@pytest.mark.parametrize("command", ["graphrag-eval-judge", "answer-correctness"])
def test_an_output_path_that_is_a_folder_is_refused_before_any_judge_call(judged, command: str) -> None:
    """Every label (or row) was judged, and paid for, before the write to the folder ended in a
    traceback."""
    pytester, server = judged
    pytester.path.joinpath("in.tsv").write_text("Question\tReference answer\tActual answer\nq\tNO1\tNO1\n")
    arguments = {
        "graphrag-eval-judge": ["--corpus=corpus.yaml", "--labels=labels.yaml", "--judge=llm", "--report=."],
        "answer-correctness": ["-i", "in.tsv", "-o", "."],
    }[command]
    done = subprocess.run(
        [str(Path(sys.executable).parent / command), *arguments],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "is a folder" in done.stderr and "Traceback" not in done.stderr
    assert server.count() == 0


def test_calibration_calls_count_against_the_judge_budget(judged) -> None:
    pytester, server = judged
    result = pytester.runpytest(*RUN, "--graphrag-max-calls=5")
    summary = json.loads((pytester.path / "report.json").read_text())["judge_calibration"]["metrics"][
        "answer_correctness"
    ]
    assert server.count("chat") == 5
    assert summary["judged"] == 5 and len(summary["errors"]) == 15
    assert "budget" in summary["errors"][0]["error"]
    assert "Traceback" not in result.stdout.str()


def test_labels_under_xdist_are_refused_with_the_way_out(judged) -> None:
    pytester, server = judged
    result = pytester.runpytest(*RUN, "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--graphrag-judge-labels calibrates in one process*graphrag-eval-judge*"])
    assert server.count("chat") == 0


def test_a_judge_gate_without_labels_is_a_usage_error(judged) -> None:
    pytester, server = judged
    run = [argument for argument in RUN if not argument.startswith("--graphrag-judge-labels")]
    result = pytester.runpytest(*run, "--graphrag-gate=judge:answer_correctness.kappa>=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*gate judge:answer_correctness.kappa>=0.5 checks the judge*--graphrag-judge-labels*"]
    )
    assert server.count("chat") == 0
