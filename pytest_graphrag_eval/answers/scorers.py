"""The answer scorers the evaluation loop runs, and the judged metrics their settings ask for.

A metric judged several times (`repeats`) reports the mean as the metric and its spread (`_stdev`,
`_min`, `_max`) next to it; any failed repeat makes it an error: a mean over the repeats that succeeded
would hide the instability the repeats are there to show.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_graphrag_eval.answers.custom import CustomLLMMetric
from pytest_graphrag_eval.answers.lexical import LexicalCorrectness
from pytest_graphrag_eval.answers.llm_correctness import LLMCorrectness
from pytest_graphrag_eval.answers.metric import AnswerInputs, AnswerMetric, MetricOutcome
from pytest_graphrag_eval.answers.relevance import NativeRelevance
from pytest_graphrag_eval.answers.result_keys import JUDGE_KEYS, JUDGE_USAGE_KEYS, MATCH_KEYS
from pytest_graphrag_eval.answers.settings import AnswerSettings
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm.judge import Usage
from pytest_graphrag_eval.metrics.text import exact_match, token_f1
from pytest_graphrag_eval.scoring import SPREAD_SUFFIXES, ResultKey, ScoringContext

USAGE_KEYS = tuple(key.name for key in JUDGE_USAGE_KEYS)  # input tokens, output tokens, cost

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question
    from pytest_graphrag_eval.llm.judge import Judge


class DeterministicAnswerScorer:
    """`answer_exact_match` and `answer_token_f1` (SQuAD normalization, best over references)."""

    name = "answer_match"
    produces: ClassVar[tuple[ResultKey, ...]] = MATCH_KEYS

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        actual = response.get("actual_answer")
        references = AnswerInputs(question.question_text, question.reference_answer).references()
        if actual is None or not references:
            return {}
        return {
            "answer_exact_match": exact_match(actual, references),
            "answer_token_f1": token_f1(actual, references),
        }


class AnswerJudgeScorer:
    """Runs a question's judged answer metrics concurrently; merges their keys and judge usage totals."""

    name = "answer_eval"
    # Custom metrics add the keys their settings name (CustomMetric.result_keys).
    produces: ClassVar[tuple[ResultKey, ...]] = JUDGE_KEYS

    def __init__(self, metrics: Sequence[AnswerMetric], repeats: int = 1):
        self.metrics = list(metrics)
        self.repeats = repeats

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        return await self.score_inputs(AnswerInputs.from_question(question, response))

    async def score_inputs(self, inputs: AnswerInputs) -> dict[str, Any]:
        """The merged keys of every metric that applies to `inputs` (the CLI calls this directly)."""
        active = [metric for metric in self.metrics if metric.applies(inputs)]
        outcomes = await asyncio.gather(
            *(evaluate_repeated(metric, inputs, self.repeats) for metric in active)
        )
        keys: dict[str, Any] = {}
        usage = Usage()
        for outcome in outcomes:
            keys.update(outcome.keys)
            usage.add(outcome.usage)
        if any(metric.uses_llm for metric in active):
            keys.update(usage.as_keys(USAGE_KEYS))
        keys.update(usage.refusal_keys())
        return keys


def build_answer_metrics(settings: AnswerSettings, client: Judge | None) -> list[AnswerMetric]:
    """The judged metrics `settings` asks for, in report order."""
    if not settings.needs_llm:
        return [LexicalCorrectness()] if settings.judge == "lexical" else []
    if client is None:
        raise ConfigurationError(
            "the configured answer metrics need an LLM judge: set OPENAI_API_KEY (and OPENAI_BASE_URL for "
            "a local or proxy endpoint), or use judge = lexical with relevance off and no custom metrics"
        )
    metrics: list[AnswerMetric] = []
    model = settings.judge_model or client.settings.model
    embedding_model = settings.embedding_model or client.settings.embedding_model
    if settings.judge == "llm":
        metrics.append(
            LLMCorrectness(
                client, settings.correctness_template, model, settings.output_mode, settings.temperature
            )
        )
    elif settings.judge == "lexical":
        metrics.append(LexicalCorrectness())
    if settings.relevance and settings.relevance_backend == "ragas":
        limits = client.settings
        if (
            limits.cache_only
            or limits.batch
            or limits.max_cost_usd is not None
            or limits.max_calls is not None
        ):
            raise ConfigurationError(
                "relevance_backend: ragas sends its calls through ragas, outside the judge cache, batch and "
                "budget: use the native relevance backend with a cache-only or batch run or a budget"
            )
        from pytest_graphrag_eval.answers.ragas_relevance import RagasRelevance

        metrics.append(RagasRelevance(client.settings, model, embedding_model, settings.relevance_questions))
    elif settings.relevance:
        metrics.append(
            NativeRelevance(
                client, model, embedding_model, settings.relevance_questions, settings.output_mode
            )
        )
    metrics.extend(
        CustomLLMMetric(client, spec, model, settings.output_mode, settings.temperature)
        for spec in settings.custom_metrics
    )
    return metrics


def combine_repeats(
    outcomes: list[MetricOutcome], spread_keys: tuple[str, ...], error_key: str
) -> MetricOutcome:
    """Merge k outcomes of one metric into one (see the module docstring on repeats)."""
    usage = Usage()
    for outcome in outcomes:
        usage.add(outcome.usage)
    failures = [(index, outcome) for index, outcome in enumerate(outcomes, 1) if error_key in outcome.keys]
    if failures:
        index, failed = failures[0]
        failed_keys = dict(failed.keys)
        if len(outcomes) > 1:
            failed_keys[error_key] = f"judgment {index} of {len(outcomes)}: {failed_keys[error_key]}"
        return MetricOutcome(failed_keys, usage)
    keys: dict[str, Any] = dict(outcomes[0].keys)
    if len(outcomes) > 1:
        for key in spread_keys:
            values = [float(outcome.keys[key]) for outcome in outcomes]
            keys[key] = statistics.fmean(values)
            spread = (statistics.stdev(values), min(values), max(values))
            keys.update((key + suffix, value) for suffix, value in zip(SPREAD_SUFFIXES, spread, strict=True))
    return MetricOutcome(keys, usage)


async def evaluate_repeated(metric: AnswerMetric, inputs: AnswerInputs, repeats: int) -> MetricOutcome:
    """Judge `repeats` times concurrently (once for deterministic metrics) and combine."""
    count = repeats if metric.uses_llm else 1
    outcomes = await asyncio.gather(*(metric.evaluate(inputs, repeat) for repeat in range(count)))
    outcome = combine_repeats(list(outcomes), metric.spread_keys, metric.error_key)
    if metric.cost_key:
        outcome.keys[metric.cost_key] = outcome.usage.cost_usd
    return outcome
