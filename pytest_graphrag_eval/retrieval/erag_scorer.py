"""ERagScorer: eRAG per question, configured by the corpus's `erag` settings (docs/retrieval.md).

Does nothing without them; a question that retrieved nothing scores 0, what cannot be computed is
`erag_error`.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.formats.documents import parse_retrieved_documents
from pytest_graphrag_eval.llm.judge import Usage
from pytest_graphrag_eval.retrieval.erag import erag_within
from pytest_graphrag_eval.retrieval.result_keys import ERAG_KEYS
from pytest_graphrag_eval.retrieval.scorer import actual_retrieval_step, reference_retrieval_step
from pytest_graphrag_eval.scoring import ResultKey, ScoringContext

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question


class ERagScorer:
    """eRAG scores of a question's retrieved documents."""

    name = "erag"
    produces: ClassVar[tuple[ResultKey, ...]] = ERAG_KEYS

    def __init__(self) -> None:
        # One bound on Python callables across all questions of a run (per event loop).
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary()
        )

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        """`erag_<metric>` keys, `erag_cost`, or `erag_error`; nothing when eRAG is not configured."""
        setup = context.erag
        if setup is None:
            return {}
        step = actual_retrieval_step(response)
        if step is None and reference_retrieval_step(question.reference_steps) is None:
            return {}
        answer = question.reference_answer
        if not answer:
            return {"erag_error": "the question has no reference_answer to judge generated answers against"}
        try:
            documents = parse_retrieved_documents(step.get("output")) if step is not None else []
        except ValueError as error:
            return {"erag_error": f"actual retrieval step: {error}"}
        usage = Usage()
        try:
            result = await erag_within(
                {question.question_text: [document.text or "" for document in documents]},
                {question.question_text: [answer] if isinstance(answer, str) else list(answer)},
                setup.generator,
                setup.metric,
                setup.metrics,
                self._limit(setup.concurrency),
                usage,
            )
        except GraphragEvalError as error:
            return {"erag_error": str(error), **usage.refusal_keys()}
        values: dict[str, Any] = {
            f"erag_{key}": value for key, value in result["per_input"][question.question_text].items()
        }
        if setup.uses_llm:
            values["erag_cost"] = usage.cost_usd
        return values

    def _limit(self, concurrency: int) -> asyncio.Semaphore:
        limits = self._limits.setdefault(asyncio.get_running_loop(), {})
        return limits.setdefault(concurrency, asyncio.Semaphore(concurrency))
