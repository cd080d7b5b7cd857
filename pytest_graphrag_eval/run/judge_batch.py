"""`--graphrag-judge-batch`: fill the judge cache through the Batch API before any item runs, pass by
pass (llm/batch.py says why) until a pass misses nothing; a live agent is asked once per attempt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.corpus.response_records import ResponseRecord
from pytest_graphrag_eval.llm.event_loop import run_coroutine
from pytest_graphrag_eval.run.runner import QuestionRunner, ResponseSource

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import JudgeClient

MAX_PASSES = 8  # a chain of judge calls, each needing the last one's reply, longer than this is not sent


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
