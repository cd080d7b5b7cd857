"""A project for the judge tests: 20 questions, recorded answers, a scripted judge and labels.

The scripted judge is tests/scripted_judge.py's correctness rule: an answer's claim matches when
its upper-case tokens all occur in the reference. Answers `The zone is NO1.` pass it and
`The zone is NO2.` fail it; the labels agree with it on 16 of 20 answers (8 both pass, 8 both
fail, 2 each way against it), so accuracy is 0.8 and Cohen's kappa (0.8 - 0.5) / (1 - 0.5) = 0.6.
"""

from __future__ import annotations

import json
import re
from typing import Any

import scripted_judge
import yaml
from plugin_support import reference_step

QUESTIONS = [f"q{number:02d}" for number in range(1, 21)]
RIGHT, WRONG = "The zone is NO1.", "The zone is NO2."
# q01-q10 answered right, q11-q20 wrong; people disagree with the rule on q09, q10 (fail) and q19, q20 (pass).
PERSON_DISAGREES = {"q09", "q10", "q19", "q20"}


def judge_answer(question_id: str) -> str:
    return RIGHT if question_id <= "q10" else WRONG


def person_verdict(question_id: str) -> str:
    rule = "pass" if question_id <= "q10" else "fail"
    if question_id in PERSON_DISAGREES:
        return "fail" if rule == "pass" else "pass"
    return rule


def corpus() -> list[dict[str, Any]]:
    def question(question_id: str) -> dict[str, Any]:
        return {
            "id": question_id,
            "question_text": f"In which zone is substation {question_id.upper()}?",
            "reference_answer": "NO1",
            "reference_steps": [[reference_step([["s1", "Alpha"]])]],
        }

    return [
        {"template_id": "zones_a", "questions": [question(q) for q in QUESTIONS[:10]]},
        {"template_id": "zones_b", "questions": [question(q) for q in QUESTIONS[10:]]},
    ]


def responses(answers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    answers = answers or {}
    return [
        {"question_id": q, "actual_answer": answers.get(q, judge_answer(q)), "actual_steps": []}
        for q in QUESTIONS
    ]


def labels() -> list[dict[str, Any]]:
    return [
        {
            "question_id": q,
            "metric": "answer_correctness",
            "answer": judge_answer(q),
            "verdict": person_verdict(q),
            "by": "alice",
            "date": "2026-11-20",
            "reason": f"alice's reading of {q}",
        }
        for q in QUESTIONS
    ]


def block(text: str, name: str) -> str:
    (found,) = re.findall(rf"<{name}>\n(.*?)\n</{name}>", text, re.DOTALL)
    return found


def scripted(body: dict[str, Any]) -> str:
    """The scripted correctness judge (tests/scripted_judge.py)."""
    user = body["messages"][1]["content"]
    counts = scripted_judge.claim_counts(block(user, "reference_answer"), block(user, "actual_answer"))
    return json.dumps({**counts, "reason": "scripted: tokens checked"})


def drifted(body: dict[str, Any]) -> str:
    """A judge that drifted: every claim matches, whatever the answer."""
    return json.dumps(
        {
            "reference_claims_count": 1,
            "actual_claims_count": 1,
            "matching_claims_count": 1,
            "reason": "lenient",
        }
    )


def write_project(folder: Any, *, answers: dict[str, str] | None = None) -> None:
    (folder / "corpus.yaml").write_text(yaml.safe_dump(corpus(), sort_keys=False), encoding="utf-8")
    (folder / "responses.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in responses(answers)), encoding="utf-8"
    )
    (folder / "labels.yaml").write_text(
        yaml.safe_dump({"labels": labels()}, sort_keys=False), encoding="utf-8"
    )
