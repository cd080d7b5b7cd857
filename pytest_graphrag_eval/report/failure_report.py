"""The text shown for a failed question, answering "why did this fail?" readably in a plain CI log."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.gates.thresholds import ThresholdCheck
from pytest_graphrag_eval.gates.verdict import QuestionVerdict
from pytest_graphrag_eval.report.step_explanations import explain_step_mismatch

TEXT_LIMIT = 800
_POLICY_NEEDS = {
    "all": "every attempt to pass",
    "any": "one passing attempt",
    "majority": "most attempts to pass",
}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, where pytest's writer would print the whole
    failure as escaped ASCII."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def verdict_failure(
    question: Question,
    verdict: QuestionVerdict,
    steps_scope: str = "last_group",
    *,
    baseline: Mapping[str, Any] | None = None,
    baseline_path: object = None,
) -> str:
    """Why a failed question failed (with repeats, the policy's count and first failing attempt), and
    whether it passed in the baseline run."""
    failing, summary = verdict.failing_attempt, verdict.summary
    if failing is not None and summary is not None:
        head = (
            f"{summary.passes} of {summary.attempts} attempts passed; the {summary.policy!r} policy "
            f"needs {_POLICY_NEEDS[summary.policy]}" + (" (flaky)" if summary.flaky else "")
        )
        detail = format_failure(question, failing.result, failing.checks, steps_scope)
        text = f"{head}\nattempt {failing.number}:\n{detail}"
    else:
        text = format_failure(question, verdict.result, verdict.checks, steps_scope)
    if baseline is not None and baseline.get("outcome") in ("passed", "xpassed"):
        text += f"\nREGRESSED: this question passed in the baseline run ({baseline_path})"
    return text


def format_failure(
    question: Question,
    result: Mapping[str, Any],
    checks: Sequence[ThresholdCheck],
    steps_scope: str = "last_group",
) -> str:
    """The whole failure report of one question."""
    lines = [
        f"{question.template_id} :: {question.question_id}",
        f"  question: {_clip(question.question_text)}",
    ]
    if question.location.file:
        lines.append(f"  defined at: {question.location.describe()}")
    if result.get("status") != "success":
        lines += ["", f"  The agent did not answer: {_clip(str(result.get('error', 'unknown error')))}"]
        return "\n".join(lines)
    if checks:
        lines += ["", "thresholds:", *_threshold_lines(checks)]
    errors = [(key, value) for key, value in result.items() if key.endswith("_error") and value]
    if errors:
        lines += ["", "metrics that could not be computed:"]
        lines += [f"  {key}: {_clip(str(value))}" for key, value in errors]
    if result.get("reference_steps"):
        lines += ["", *_step_lines(result, steps_scope)]
    if "reference_answer" in result or "actual_answer" in result:
        lines += ["", "answer:", *_answer_lines(result)]
    return "\n".join(lines)


def _threshold_lines(checks: Sequence[ThresholdCheck]) -> list[str]:
    width = max(len(check.metric) for check in checks)
    return [
        f"  {'ok  ' if check.passed else 'FAIL'}  {check.metric:<{width}}  {check.message}"
        for check in checks
    ]


def _step_lines(result: Mapping[str, Any], steps_scope: str) -> list[str]:
    """Match status of the scored reference groups (only the last one under `last_group`)."""
    actual_steps = result.get("actual_steps") or []
    groups = list(enumerate(result["reference_steps"]))
    if steps_scope == "last_group":
        groups = groups[-1:]
        lines = ["reference steps (last group, the one steps_score covers):"]
    else:
        lines = ["reference steps:"]
    for group_index, group in groups:
        for step_index, step in enumerate(group):
            label = f"  [{group_index}][{step_index}] {step.get('name')}"
            if step.get("matches") is not None:
                lines.append(f"{label}: matched actual step {step['matches']}")
                continue
            lines.append(f"{label}: not matched")
            lines += [f"      {line}" for line in explain_step_mismatch(step, actual_steps)]
    return lines


def _answer_lines(result: Mapping[str, Any]) -> list[str]:
    lines = []
    reference = result.get("reference_answer")
    if isinstance(reference, list):
        reference = " | ".join(reference)
    if reference is not None:
        lines.append(f"  reference: {_clip(str(reference))}")
    lines.append(f"  actual:    {_clip(str(result.get('actual_answer', '(no answer)')))}")
    judged = [
        f"{key.removeprefix('answer_')} {result[key]:.3g}"
        for key in ("answer_recall", "answer_precision", "answer_f1", "answer_relevance")
        if isinstance(result.get(key), (int, float))
    ]
    if judged:
        lines.append(
            f"  judge {result.get('answer_judge', '')}: {', '.join(judged)}".replace("judge :", "judge:")
        )
    if result.get("answer_correctness_reason"):
        lines.append(f"  reason: {_clip(str(result['answer_correctness_reason']))}")
    return lines


def _clip(text: str) -> str:
    """One line, bounded: agent text can be long and multi-line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= TEXT_LIMIT else flat[: TEXT_LIMIT - 1] + "…"
