"""`--graphrag-dry-run`: work out the calls a run would make, print them, call nothing. The questions go
through the real scorers, with the reference answer standing in for a live agent's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.corpus.response_records import ResponseRecord, normalise_response
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.run.runner import QuestionRunner

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.judge import Judge


class StandInAgent:
    """A live source that never calls the agent: each answer is the question's reference answer."""

    live = False  # nothing is recorded from it

    def __init__(self) -> None:
        self.calls = 0

    def attempts(self, question: Question, repeats: int) -> int:
        """Asked as often as the agent would be."""
        return repeats

    async def get(self, question: Question) -> ResponseRecord:
        self.calls += 1
        answer = question.reference_answer if question.reference_answer is not None else ""
        return normalise_response(
            {
                "question_id": question.question_id,
                "status": "success",
                "actual_answer": answer,
                "actual_steps": [],
            },
            SourceLocation(origin="dry run stand-in agent", question_id=question.question_id),
        )


def plan_lines(
    runner: QuestionRunner, questions: Sequence[Question], judge: Judge | None, agent_calls: int | None
) -> list[str]:
    """Score every question with the planning judge and describe the calls a real run would make."""
    runner.submit(questions)
    for question in questions:
        runner.outcome(question)
    agent = (
        f"{agent_calls} agent calls (the pytest_graphrag_respond hook; their cost is your agent's)"
        if agent_calls is not None
        else "no agent calls (recorded responses are replayed)"
    )
    lines = [f"{len(questions)} questions; {agent}"]
    planner = getattr(judge, "planner", None)  # a JudgeClient in a dry run records its calls
    if judge is None or planner is None:
        lines.append("no judge calls: no LLM judge is configured")
        return lines
    from pytest_graphrag_eval.llm.estimate import batch_line, estimate_lines

    lines.extend(estimate_lines(planner, judge.settings.prices))
    if judge.settings.batch:
        lines.append(batch_line(planner, judge.settings.prices))
    if agent_calls is not None:
        lines.append(
            "judge prompts are sized with each question's reference answer standing in for the agent's"
        )
    return lines
