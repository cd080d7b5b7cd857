"""The retrieval scorers: RetrievalScorer (the agent's retrieved document ids against the reference
judgements) and ERagScorer (eRAG per question, configured by the corpus's `erag` settings).

Keys and the cut-off rule are in docs/retrieval.md; precision@k divides by k even when fewer
documents were retrieved, as trec_eval does. The actual retrieval step is the last `retrieval` step that
did not fail: an agent that retries retrieval is judged on the documents it finally got. eRAG does
nothing without its settings; a question that retrieved nothing scores 0, what cannot be computed is
`erag_error`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_graphrag_eval.corpus.reference_steps import RETRIEVAL_STEP, cutoff, relevant_ids
from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.formats.documents import (
    parse_relevance,
    parse_retrieved_documents,
    parse_retrieved_ids,
)
from pytest_graphrag_eval.llm.judge import Usage
from pytest_graphrag_eval.metrics.ranking import MeasurePlan, ranked_judgements, score_ranking
from pytest_graphrag_eval.retrieval.erag import erag_within
from pytest_graphrag_eval.retrieval.result_keys import ERAG_KEYS, RETRIEVAL_KEYS
from pytest_graphrag_eval.scoring import DEFAULT_RETRIEVAL_K, ResultKey, ScoringContext

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question


class RetrievalScorer:
    """Scores the `retrieval` step of a response against the question's reference retrieval step."""

    name = "retrieval"
    produces: ClassVar[tuple[ResultKey, ...]] = RETRIEVAL_KEYS

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        """Retrieval metric keys; nothing when the question has no reference retrieval step."""
        reference = reference_retrieval_step(question.reference_steps)
        if reference is None:
            return {}
        try:
            relevant_ids(reference)
            judgements = parse_relevance(reference["output"])
            k = cutoff(reference) or context.retrieval_k
        except ValueError as error:
            return {"retrieval_error": f"reference retrieval step: {error}"}
        step = actual_retrieval_step(response)
        try:
            retrieved = parse_retrieved_ids(step.get("output")) if step is not None else []
        except ValueError as error:
            return {"retrieval_error": f"actual retrieval step: {error}"}
        plan = MeasurePlan(
            recall=((k, f"retrieval_recall@{k}"),),
            precision=((k, f"retrieval_precision@{k}"),),
            ndcg_cut=((k, f"retrieval_ndcg@{k}"),),
            map=True,
            recip_rank=True,
        )
        values = score_ranking(plan, ranked_judgements(judgements, retrieved), judgements.values())
        values["retrieval_ap"] = values.pop("map")
        values["retrieval_mrr"] = values.pop("recip_rank")
        return values


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


def retrieval_k_setting(value: Any, source: str = "options") -> int:
    """A `retrieval_k` setting checked to be a positive integer (default 10 when unset)."""
    if value is None:
        return DEFAULT_RETRIEVAL_K
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{source}: retrieval_k must be a positive integer, got {value!r}")
    return value


def reference_retrieval_step(
    reference_steps: Sequence[Sequence[Mapping[str, Any]]] | None,
) -> Mapping[str, Any] | None:
    """The last reference step named `retrieval`, or None when the question has none."""
    steps = [step for group in reference_steps or [] for step in group if step.get("name") == RETRIEVAL_STEP]
    return steps[-1] if steps else None


def actual_retrieval_step(response: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The response's last `retrieval` step whose status is not `error`, or None."""
    for step in reversed(response.get("actual_steps") or []):
        if isinstance(step, Mapping) and step.get("name") == RETRIEVAL_STEP and step.get("status") != "error":
            return step
    return None
