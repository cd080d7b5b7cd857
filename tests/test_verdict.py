"""The per-question verdict as a pure function (no pytest item), and the failure text made from it."""

from __future__ import annotations

from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.gates.thresholds import parse_threshold_list
from pytest_graphrag_eval.gates.verdict import Attempt, judge_question
from pytest_graphrag_eval.report.failure_report import verdict_failure

THRESHOLDS = parse_threshold_list(["steps_score>=1", "answer_f1>=0.8"], "cli")
QUESTION = Question("t", "q1", "Which?", SourceLocation(file="corpus.yaml", line=3), reference_answer="A")


def result(steps: float, f1: float, **extra: Any) -> dict[str, Any]:
    return {
        "question_id": "q1",
        "template_id": "t",
        "status": "success",
        "steps_score": steps,
        "answer_f1": f1,
        **extra,
    }


def test_a_result_passes_when_every_threshold_holds() -> None:
    verdict = judge_question(result(1.0, 0.9), THRESHOLDS)
    assert verdict.passed and [check.passed for check in verdict.checks] == [True, True]
    assert verdict.failures == [] and verdict.summary is None


def test_a_broken_threshold_fails_and_is_named() -> None:
    verdict = judge_question(result(1.0, 0.5), THRESHOLDS)
    assert not verdict.passed
    assert len(verdict.failures) == 1 and "answer_f1" in verdict.failures[0]
    text = verdict_failure(QUESTION, verdict, baseline={"outcome": "passed"}, baseline_path="main.json")
    assert "FAIL  answer_f1" in text and text.endswith(
        "REGRESSED: this question passed in the baseline run (main.json)"
    )


def test_an_agent_error_fails_without_threshold_checks() -> None:
    verdict = judge_question({"question_id": "q1", "status": "error", "error": "timed out"}, THRESHOLDS)
    assert not verdict.passed and verdict.checks == []
    assert verdict.failures == ["agent error: timed out"]


def test_attempts_are_combined_under_the_policy() -> None:
    attempts = [Attempt(result(1.0, 0.9)), Attempt(result(0.0, 0.9)), Attempt(None, "no response recorded")]
    strict = judge_question(result(1.0, 0.9), THRESHOLDS, attempts=attempts, policy="all")
    assert not strict.passed and strict.summary is not None and strict.summary.passes == 1
    assert strict.failing_attempt is not None and strict.failing_attempt.number == 2
    assert strict.result["agent_attempts"] == 3 and strict.result["flaky"] == 1
    assert verdict_failure(QUESTION, strict).startswith(
        "1 of 3 attempts passed; the 'all' policy needs every attempt to pass (flaky)\nattempt 2:"
    )
    lenient = judge_question(result(1.0, 0.9), THRESHOLDS, attempts=attempts, policy="any")
    assert lenient.passed and lenient.failing_attempt is None
