"""Answer relevance by ragas' own AnswerRelevancy (the `[ragas]` extra), for its exact prompts.

ragas uses its own SDK client, so our cache does not apply; a response hook counts its tokens into
the evaluation's `Usage`. Its telemetry is off unless the user set `RAGAS_DO_NOT_TRACK`.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import Any

from pytest_graphrag_eval.answers.metric import AnswerInputs, MetricOutcome, blank_input_error
from pytest_graphrag_eval.errors import ConfigurationError, install_extra_hint
from pytest_graphrag_eval.llm import LLMSettings, make_sdk_client, price_for
from pytest_graphrag_eval.llm.judge import Usage


def load_answer_relevancy() -> Any:
    """ragas' AnswerRelevancy class and factories; ConfigurationError when ragas is unusable."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    try:
        from ragas.embeddings.base import embedding_factory
        from ragas.llms.base import llm_factory
        from ragas.metrics.collections import AnswerRelevancy
    except Exception as error:  # ImportError, or ragas failing against its own dependencies
        raise ConfigurationError(
            "relevance_backend = ragas needs a working ragas: "
            f"{install_extra_hint('ragas')} ({type(error).__name__}: {error})"
        ) from None
    return AnswerRelevancy, llm_factory, embedding_factory


class RagasRelevance:
    """`answer_relevance` computed by ragas (`answer_relevance_judge` = `ragas:<model>+<embedding>`)."""

    error_key = "answer_relevance_error"
    spread_keys = ("answer_relevance",)
    cost_key = "answer_relevance_cost"
    uses_llm = True

    def __init__(self, settings: LLMSettings, model: str, embedding_model: str, questions: int = 3):
        self.settings = settings
        self.model = model
        self.embedding_model = embedding_model
        self.questions = questions
        self.label = f"ragas:{model}+{embedding_model}"
        self._classes = load_answer_relevancy()
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def applies(self, inputs: AnswerInputs) -> bool:
        return inputs.actual_answer is not None

    async def evaluate(self, inputs: AnswerInputs, repeat: int) -> MetricOutcome:
        usage = Usage()
        keys: dict[str, Any] = {"answer_relevance_judge": self.label}
        problem = blank_input_error(inputs, reference=False)
        if problem:
            keys[self.error_key] = problem
            return MetricOutcome(keys, usage)
        async with self._limit():  # the client too: at most `concurrency` of them open at once
            sdk = make_sdk_client(self.settings, on_response=lambda response: self._count(response, usage))
            try:
                metric = self._metric(sdk.with_options(max_retries=self.settings.max_retries))
                result = await metric.ascore(user_input=inputs.question, response=inputs.actual_answer)
                keys["answer_relevance"] = float(result.value)
            except Exception as error:  # ragas raises many types (SDK, instructor, validation)
                keys[self.error_key] = f"ragas AnswerRelevancy failed: {type(error).__name__}: {error}"
            finally:
                await sdk.close()
        return MetricOutcome(keys, usage)

    def _metric(self, sdk: Any) -> Any:
        """ragas' AnswerRelevancy on `sdk`."""
        answer_relevancy, llm_factory, embedding_factory = self._classes
        return answer_relevancy(
            llm=llm_factory(self.model, client=sdk),
            embeddings=embedding_factory("openai", model=self.embedding_model, client=sdk),
            strictness=self.questions,
        )

    def _limit(self) -> asyncio.Semaphore:
        """The bound on concurrent evaluations, one per event loop (a semaphore is bound to its loop)."""
        return self._limits.setdefault(
            asyncio.get_running_loop(), asyncio.Semaphore(self.settings.concurrency)
        )

    async def _count(self, response: Any, usage: Usage) -> None:
        """Add the tokens and cost of one ragas request to `usage`."""
        if response.status_code != 200:
            return
        await response.aread()
        try:
            request = json.loads(response.request.content or b"{}")
            counted = response.json().get("usage") or {}
        except (ValueError, AttributeError):
            return
        input_tokens = int(counted.get("prompt_tokens") or 0)
        output_tokens = int(counted.get("completion_tokens") or 0)
        price = price_for(str(request.get("model", "")), self.settings.prices)
        usage.input_tokens += input_tokens
        usage.output_tokens += output_tokens
        usage.cost_usd += price.cost(input_tokens, output_tokens) if price else 0.0
