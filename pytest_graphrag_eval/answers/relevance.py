"""Answer relevance as RAGAS defines it, on our judge client.

Mean cosine of the question's embedding to those of N generated questions; 0 only when every
generation flagged the answer noncommittal (ragas 0.2's rule).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.answers.metric import (
    AnswerInputs,
    JudgeFailure,
    LLMJudgedMetric,
    blank_input_error,
    gather_all,
    response_format,
)
from pytest_graphrag_eval.answers.prompts import DATA_RULE, data_block
from pytest_graphrag_eval.llm import LLMError
from pytest_graphrag_eval.llm.judge import Judge, Usage
from pytest_graphrag_eval.llm.replies import flag_field, parse_object, text_field

# Several generations at temperature 0 would mostly repeat one question; ragas
# samples its N questions at 0.3 for the same reason.
GENERATION_TEMPERATURE = 0.3

SYSTEM_MESSAGE = (
    DATA_RULE + "\n\nWrite one question that the actual answer answers, as a user would have asked it. "
    "Also say whether the answer is noncommittal: evasive, vague or ambiguous, such as "
    '"I don\'t know" or "it depends". Reply with one JSON object and nothing else, with the fields '
    "question (text) and noncommittal (1 if the answer is noncommittal, 0 if it is substantive)."
)
REPLY_PROPERTIES = {"question": {"type": "string"}, "noncommittal": {"type": "integer"}}


@dataclass(frozen=True)
class GeneratedQuestion:
    text: str
    noncommittal: bool


def parse_generated_question(text: str) -> GeneratedQuestion:
    data = parse_object(text)
    return GeneratedQuestion(text_field(data, "question"), flag_field(data, "noncommittal"))


def cosine(first: Sequence[float], second: Sequence[float]) -> float:
    """Cosine similarity; vectors of different length or zero norm are an error."""
    if len(first) != len(second) or not first:
        raise ValueError(f"embeddings of different sizes ({len(first)} and {len(second)})")
    norms = math.sqrt(math.fsum(x * x for x in first)) * math.sqrt(math.fsum(y * y for y in second))
    if norms == 0:
        raise ValueError("an embedding has zero length")
    return math.fsum(x * y for x, y in zip(first, second, strict=True)) / norms


def relevance_score(
    original: Sequence[float], generated: Sequence[Sequence[float]], noncommittal: Sequence[bool]
) -> float:
    """Mean cosine of the generated questions to the original; 0 when all are noncommittal."""
    return 0.0 if all(noncommittal) else statistics.fmean(cosine(original, vector) for vector in generated)


class NativeRelevance(LLMJudgedMetric):
    """RAGAS answer relevance through JudgeClient (cached, retried, cost counted)."""

    label_key = "answer_relevance_judge"
    error_key = "answer_relevance_error"
    spread_keys = ("answer_relevance",)
    cost_key = "answer_relevance_cost"

    def __init__(
        self,
        client: Judge,
        model: str,
        embedding_model: str,
        questions: int = 3,
        output_mode: str = "json_schema",
    ):
        super().__init__(client, model, output_mode=output_mode, label=f"llm:{model}+{embedding_model}")
        self.embedding_model = embedding_model
        self.questions = questions
        self.response_format = response_format("answer_relevance_question", REPLY_PROPERTIES, output_mode)

    def applies(self, inputs: AnswerInputs) -> bool:
        return inputs.actual_answer is not None

    async def judged_keys(self, inputs: AnswerInputs, repeat: int, usage: Usage) -> dict[str, Any]:
        problem = blank_input_error(inputs, reference=False)
        if problem:
            raise JudgeFailure(problem)
        assert inputs.actual_answer is not None
        prompt = data_block("actual_answer", inputs.actual_answer)
        generated = await gather_all(
            *(
                self.ask(
                    SYSTEM_MESSAGE,
                    prompt,
                    parse_generated_question,
                    usage,
                    self.response_format,
                    temperature=GENERATION_TEMPERATURE,
                    cache_key_extra=f"relevance:{repeat}:{index}",
                )
                for index in range(self.questions)
            )
        )
        try:
            embedded = await self.client.embed(
                [inputs.question, *(item.text for item in generated)], model=self.embedding_model
            )
        except LLMError as error:
            usage.add_failure(error)
            raise JudgeFailure(f"embedding call failed: {error}") from None
        usage.add_result(embedded)
        if len(embedded.vectors) != len(generated) + 1:
            raise JudgeFailure(f"expected {len(generated) + 1} embeddings, got {len(embedded.vectors)}")
        try:
            return {
                "answer_relevance": relevance_score(
                    embedded.vectors[0], embedded.vectors[1:], [item.noncommittal for item in generated]
                )
            }
        except ValueError as error:
            raise JudgeFailure(f"cannot compare the embeddings: {error}") from None
