"""Passes over every question before any item runs, through the real runner and scorers: the dry run
(`--graphrag-dry-run`) plans the calls a run would make and calls nothing, the reference answer standing
in for a live agent's; `--graphrag-judge-batch` fills the judge cache through the Batch API pass by pass
(llm/batch.py says why) until a pass misses nothing, a live agent asked once per attempt."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.corpus.response_records import ResponseRecord, normalise_response
from pytest_graphrag_eval.errors import SourceLocation
from pytest_graphrag_eval.llm.event_loop import run_coroutine
from pytest_graphrag_eval.run.runner import QuestionRunner, ResponseSource

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import JudgeClient
    from pytest_graphrag_eval.llm.judge import Judge

MAX_PASSES = 8  # a chain of judge calls, each needing the last one's reply, longer than this is not sent


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


class RememberedSource:
    """A response source whose answers are asked once: each pass gets the same attempt answers again."""

    def __init__(self, source: ResponseSource) -> None:
        self._source = source
        self.live = source.live
        self._answers: dict[tuple[str, int], ResponseRecord | None] = {}
        self._asked: Counter[str] = Counter()

    def new_pass(self) -> None:
        """The next pass asks for attempt 1, 2, ... of each question again."""
        self._asked.clear()

    def attempts(self, question: Question, repeats: int) -> int:
        return self._source.attempts(question, repeats)

    async def get(self, question: Question) -> ResponseRecord | None:
        attempt = (question.question_id, self._asked[question.question_id])
        self._asked[question.question_id] += 1
        if attempt not in self._answers:
            self._answers[attempt] = await self._source.get(question)
        return self._answers[attempt]


def fill_cache_in_batches(
    new_runner: Callable[[], QuestionRunner],
    questions: Sequence[Question],
    judge: JudgeClient,
    source: RememberedSource | None,
    on_status: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Collect and send the judge's cache misses pass by pass; the batches' records, in order."""
    from pytest_graphrag_eval.llm.batch import JudgeBatches

    batches = judge.batches
    assert isinstance(batches, JudgeBatches), "a batch judge is built with llm.batch.judge_batches"
    records: list[dict[str, Any]] = []
    for _ in range(MAX_PASSES):
        if source is not None:
            source.new_pass()
        runner = new_runner()  # a pass's outcomes are thrown away; the items get the scoring run's
        try:
            with batches.collecting() as collected:
                runner.submit(questions)
                for question in questions:
                    runner.outcome(question)
        finally:
            runner.close()
        if not collected:
            break
        sent = run_coroutine(batches.send(judge, collected.values(), on_status))
        records.extend(batch.as_dict() for batch in sent)
    if source is not None:
        source.new_pass()  # the scoring run gets the same answers again
    return records
