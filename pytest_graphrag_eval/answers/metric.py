"""What every answer metric looks like to the answer scorer and the CLI, and the one judged exchange
of those a chat model judges: ask for a JSON reply, check it, retry once with feedback.

Metrics never raise for a bad agent answer or judge reply; they put the reason in `error_key`. A
second bad reply or a failed call is a `JudgeFailure`; every call's usage goes into the question's
`Usage`, rejected ones and refusals too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from pytest_graphrag_eval.llm import LLMError
from pytest_graphrag_eval.llm.judge import Judge, Usage
from pytest_graphrag_eval.llm.replies import InvalidReply

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question

T = TypeVar("T")

RETRY_MESSAGE = (
    "Your previous reply could not be used: {problem}. "
    "Reply again with only the JSON object described in the instructions."
)


class JudgeFailure(Exception):
    """The judge could not produce a usable verdict; the message is user-facing."""


def response_format(name: str, properties: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """The chat `response_format` for an object with exactly `properties` (`json_object` for endpoints
    without schema support); replies are checked by our validators either way."""
    if mode == "json_object":
        return {"type": "json_object"}
    schema = {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


@dataclass(frozen=True)
class AnswerInputs:
    """The texts an answer metric may look at; None when the input does not have them."""

    question: str
    reference_answer: str | list[str] | None = None
    actual_answer: str | None = None
    steps: list[dict[str, Any]] | None = None
    reference_steps: list[list[dict[str, Any]]] | None = None

    @classmethod
    def from_question(cls, question: Question, response: Mapping[str, Any]) -> AnswerInputs:
        return cls(
            question=question.question_text,
            reference_answer=question.reference_answer,
            actual_answer=response.get("actual_answer"),
            steps=response.get("actual_steps"),
            reference_steps=question.reference_steps,
        )

    def references(self) -> list[str]:
        """The reference answer as a list of alternatives (empty when there is none)."""
        if self.reference_answer is None:
            return []
        if isinstance(self.reference_answer, str):
            return [self.reference_answer]
        return list(self.reference_answer)


@dataclass
class MetricOutcome:
    """A metric's result keys for one question and the judge usage (and refusals) spent on them."""

    keys: dict[str, Any]
    usage: Usage = field(default_factory=Usage)


class AnswerMetric(Protocol):
    """One answer metric; read-only attributes so a metric may declare narrower constants."""

    @property
    def error_key(self) -> str: ...

    @property
    def spread_keys(self) -> tuple[str, ...]: ...

    @property
    def cost_key(self) -> str | None: ...

    @property
    def uses_llm(self) -> bool: ...

    def applies(self, inputs: AnswerInputs) -> bool:
        """False when the inputs lack what the metric needs: it is then skipped, not failed."""
        ...

    async def evaluate(self, inputs: AnswerInputs, repeat: int) -> MetricOutcome:
        """Judge once; `repeat` numbers repeated judgments so each has its own cache entry."""
        ...


def blank_input_error(inputs: AnswerInputs, *, reference: bool) -> str | None:
    """Why a present but empty answer (or reference) cannot be judged; None when both have text."""
    if inputs.actual_answer is not None and not inputs.actual_answer.strip():
        return "the actual answer is empty"
    if reference and not any(text.strip() for text in inputs.references()):
        return "the reference answer is empty"
    return None


async def gather_all(*calls: Awaitable[T]) -> list[T]:
    """The results of `calls` run together; once all have ended, the first failure in call order."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    if failure := next((result for result in results if isinstance(result, BaseException)), None):
        raise failure
    return cast(list[T], results)


class LLMJudgedMetric:
    """What every metric judged by a chat model holds, so a judge setting is added in one place."""

    uses_llm = True
    label_key: str
    """The result key naming the judge (`<metric>_judge`)."""
    error_key: str

    def __init__(
        self,
        client: Judge,
        model: str,
        *,
        output_mode: str = "json_schema",
        temperature: float = 0.0,
        label: str | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.output_mode = output_mode
        self.temperature = temperature
        self.label = label if label is not None else f"llm:{model}"

    async def ask(
        self,
        system: str,
        user: str,
        parse: Callable[[str], T],
        usage: Usage,
        response_format: Mapping[str, Any],
        *,
        temperature: float | None = None,
        cache_key_extra: str = "",
    ) -> T:
        """`parse` of the reply to `system` and `user` from this metric's judge and model, at its
        temperature unless `temperature` is given; one corrective retry on an invalid reply."""
        options = {
            "model": self.model,
            "response_format": dict(response_format),
            "temperature": self.temperature if temperature is None else temperature,
            "cache_key_extra": cache_key_extra,
        }
        conversation = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        reply = await self._chat(conversation, options, usage)
        try:
            return parse(reply)
        except InvalidReply as problem:
            conversation += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": RETRY_MESSAGE.format(problem=problem)},
            ]
        reply = await self._chat(conversation, options, usage)
        try:
            return parse(reply)
        except InvalidReply as problem:
            raise JudgeFailure(f"invalid judge reply after one retry: {problem}") from None

    async def _chat(self, messages: list[dict[str, str]], options: dict[str, Any], usage: Usage) -> str:
        try:
            result = await self.client.chat(messages, **options)
        except LLMError as error:
            usage.add_failure(error)
            raise JudgeFailure(f"judge call failed: {error}") from None
        usage.add_result(result)
        return result.text or ""

    async def evaluate(self, inputs: AnswerInputs, repeat: int) -> MetricOutcome:
        """The judge's label, then the judged keys, or why the judge gave none under `error_key`."""
        usage = Usage()
        keys: dict[str, Any] = {self.label_key: self.label}
        try:
            keys.update(await self.judged_keys(inputs, repeat, usage))
        except JudgeFailure as failure:
            keys[self.error_key] = str(failure)
        return MetricOutcome(keys, usage)

    async def judged_keys(self, inputs: AnswerInputs, repeat: int, usage: Usage) -> dict[str, Any]:
        """This metric's keys for one judgment (its calls' usage in `usage`); JudgeFailure without them."""
        raise NotImplementedError
